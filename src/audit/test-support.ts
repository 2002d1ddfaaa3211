import type { AuditRecord } from './record.js';

/** A call's record for the audit tests: the i-th read of f<i>.txt, one second apart. */
export function auditRec(i: number): Omit<AuditRecord, 'prev_hash'> {
  const t = new Date(1_700_000_000_000 + i * 1000).toISOString();
  return {
    ts_start: t, ts_end: t, trace_id: `tr_${i}`, tool_call_id: `tc_${i}`, session_id: 'ses_1', tool: 'read_file',
    version: '1.0.0', risk: 'low', args: { path: `f${i}.txt` }, decision: 'allow', rule: 'default for low risk', approval: null,
    ok: true, status: 'ok', error_code: null, duration_ms: 1, files_changed: [], commands_run: [], hashes: {},
  };
}
