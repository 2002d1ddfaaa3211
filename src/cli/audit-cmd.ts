import { verifyAudit } from '../audit/verify.js';
import { UsageError } from './setup.js';

export async function auditVerify(file: string | undefined): Promise<number> {
  if (!file) throw new UsageError('usage: toolgate audit verify FILE');
  const r = await verifyAudit(file);
  if (r.ok) {
    process.stdout.write(`${file}: intact (${r.records} records)\n`);
    return 0;
  }
  process.stdout.write(`${file}: line ${r.bad_line}: ${r.problem}\n`);
  return 1;
}
