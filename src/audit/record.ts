import { createHash } from 'node:crypto';

export const GENESIS = '0'.repeat(64);

export interface AuditRecord {
  ts_start: string;
  ts_end: string;
  trace_id: string;
  tool_call_id: string;
  session_id: string;
  tool: string;
  version: string | null;
  risk: string | null;
  args: unknown;
  decision: 'allow' | 'deny' | 'ask' | null;
  rule: string | null;
  approval: { granted: boolean; scope: string; grant?: unknown } | null;
  ok: boolean;
  status: string;
  error_code: string | null;
  duration_ms: number;
  files_changed: string[];
  commands_run: string[];
  hashes: Record<string, string>;
  prev_hash: string;
}

export function hashLine(line: string): string {
  return createHash('sha256').update(line).digest('hex');
}
