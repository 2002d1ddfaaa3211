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

/** The `tool` and `status` of the record the writer chains to a line a crash cut off. */
export const CUT_LINE_TOOL = 'toolgate/audit';
export const CUT_LINE_STATUS = 'cut_line_ended';

/**
 * The record written after a line that a crash cut in the middle (the server was killed while
 * writing it, so it was never acknowledged). Same fields as a call's record, so tools reading the
 * log line by line see one shape; its prev_hash is the hash of the cut line, and
 * `args.cut_line_prev_hash` the hash of the line before the cut one (GENESIS if none), which
 * verify checks the way it checks a record's prev_hash.
 */
export function cutLineRecord(cut: string, chainBefore: string, now = new Date()): AuditRecord {
  const ts = now.toISOString();
  return {
    ts_start: ts, ts_end: ts, trace_id: '', tool_call_id: '', session_id: '', tool: CUT_LINE_TOOL,
    version: null, risk: null,
    args: { cut_line_chars: cut.length, cut_line_sha256: hashLine(cut), cut_line_prev_hash: chainBefore },
    decision: 'allow',
    rule: 'the line before was cut by a crash while it was written (never acknowledged); this start ended it',
    approval: null, ok: true, status: CUT_LINE_STATUS, error_code: null, duration_ms: 0,
    files_changed: [], commands_run: [], hashes: {}, prev_hash: hashLine(cut),
  };
}

/** Whether a parsed line is the record `cutLineRecord` writes. */
export function isCutLineRecord(rec: unknown): rec is AuditRecord {
  return typeof rec === 'object' && rec !== null && (rec as { tool?: unknown }).tool === CUT_LINE_TOOL && (rec as { status?: unknown }).status === CUT_LINE_STATUS;
}
