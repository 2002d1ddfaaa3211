import { verifyAudit, type VerifyResult } from '../audit/verify.js';
import { UsageError } from './setup.js';

export async function auditVerify(file: string | undefined): Promise<number> {
  if (!file) throw new UsageError('usage: toolgate audit verify FILE');
  let r: VerifyResult;
  try {
    r = await verifyAudit(file);
  } catch (e) {
    // A missing or unreadable log is a usage problem, not a stack trace.
    process.stderr.write(`toolgate: cannot read audit log ${file}: ${(e as Error).message}\n`);
    return 2;
  }
  if (r.ok) {
    process.stdout.write(`${file}: intact (${r.records} records)${r.note ? `; ${r.note}` : ''}\n`);
    return 0;
  }
  process.stdout.write(`${file}: line ${r.bad_line}: ${r.problem}\n`);
  return 1;
}
