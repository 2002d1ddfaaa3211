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
  /** Always set: refusals before the policy verdict (unknown tool, invalid arguments, paths.deny…) are deny. */
  decision: 'allow' | 'deny' | 'ask';
  /** The rule that decided, or the reason: "unknown tool", "invalid arguments", "paths.deny", "profile …", "circuit". */
  rule: string;
  approval: { granted: boolean; scope: string; grant?: unknown; source?: string; id?: string } | null;
  ok: boolean;
  status: string;
  error_code: string | null;
  duration_ms: number;
  files_changed: string[];
  commands_run: string[];
  hashes: Record<string, string>;
  /** run_command / process_*: exit, signal, hash and storage_ref of the whole output, background process id and pid. */
  command?: Record<string, unknown>;
  /** The error's message (redacted) when the call failed. */
  error_message?: string;
  prev_hash: string;
}

export function hashLine(line: string): string {
  return createHash('sha256').update(line).digest('hex');
}
