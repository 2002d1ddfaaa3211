import { readFile } from 'node:fs/promises';
import { GENESIS, hashLine } from './record.js';

export interface VerifyResult {
  ok: boolean;
  records: number;
  /** 1-based line of the first problem. */
  bad_line?: number;
  problem?: string;
}

/** Checks every line is a JSON record chained to the one before, and the head file matches the tail. */
export async function verifyAudit(file: string): Promise<VerifyResult> {
  const text = await readFile(file, 'utf8');
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  else if (lines.length > 0) return { ok: false, records: lines.length, bad_line: lines.length, problem: 'the last line is cut off (no newline)' };
  let prev = GENESIS;
  for (let i = 0; i < lines.length; i++) {
    let rec: { prev_hash?: unknown };
    try {
      rec = JSON.parse(lines[i]!);
    } catch {
      return { ok: false, records: lines.length, bad_line: i + 1, problem: 'not a JSON record' };
    }
    if (rec.prev_hash !== prev) {
      return { ok: false, records: lines.length, bad_line: i + 1, problem: i === 0 ? 'the first record does not start the chain (lines removed before it?)' : 'prev_hash does not match the line before (edited, removed or reordered)' };
    }
    prev = hashLine(lines[i]!);
  }
  let head: string | null = null;
  try {
    head = (await readFile(`${file}.head`, 'utf8')).trim().split(/\s+/)[0] ?? null;
  } catch {
    head = null;
  }
  if (head === null) return { ok: false, records: lines.length, bad_line: lines.length, problem: `${file}.head is missing: cannot tell whether the tail was cut` };
  if (head !== prev) return { ok: false, records: lines.length, bad_line: lines.length, problem: 'the newest hash in .head does not match the last line (tail cut or edited)' };
  return { ok: true, records: lines.length };
}
