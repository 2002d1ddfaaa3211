import { readFile } from 'node:fs/promises';
import { GENESIS, hashLine, isCutLineRecord } from './record.js';

export interface VerifyResult {
  ok: boolean;
  records: number;
  /** 1-based line of the first problem. */
  bad_line?: number;
  problem?: string;
  /** Set when ok: something to know that is not a problem (an unfinished last record). */
  note?: string;
}

/** Checks every line is a JSON record chained to the one before, and the head file matches the tail. */
export async function verifyAudit(file: string): Promise<VerifyResult> {
  const text = await readFile(file, 'utf8');
  const lines = text.split('\n');
  // A last line without its newline is a record the server was writing when it was killed (a
  // SIGKILL can cut a long write between pages). It was never acknowledged: the head still names
  // the record before it, so it is accepted only when everything before it chains to the head —
  // a cut *acknowledged* record leaves the head pointing at it and is reported below.
  let unfinished = false;
  if (lines[lines.length - 1] === '') lines.pop();
  else if (lines.length > 0) {
    lines.pop();
    unfinished = true;
  }
  let prev = GENESIS;
  let beforeLast = GENESIS;
  const notes: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    let rec: { prev_hash?: unknown };
    try {
      rec = JSON.parse(lines[i]!);
    } catch {
      // A line a crash cut in the middle, which the next start ended: the record after it says so
      // and chains to it. Anything else that is not JSON was edited in.
      // The marker names the chain before the cut line too, so the line before cannot be edited unseen.
      if (i + 1 < lines.length && cutLineFollows(lines[i]!, lines[i + 1]!, prev)) {
        notes.push(`line ${i + 1} is a record cut by a crash while it was written (never acknowledged); line ${i + 2} records that the next start ended it`);
        // The cut line and its marker are one write: a crash before the head write leaves the head
        // naming the line before the cut one, which the check below accepts as one unit past it.
        beforeLast = prev;
        prev = hashLine(lines[i + 1]!);
        i++;
        continue;
      }
      return { ok: false, records: lines.length, bad_line: i + 1, problem: 'not a JSON record' };
    }
    if (rec.prev_hash !== prev) {
      return { ok: false, records: lines.length, bad_line: i + 1, problem: i === 0 ? 'the first record does not start the chain (lines removed before it?)' : 'prev_hash does not match the line before (edited, removed or reordered)' };
    }
    beforeLast = prev;
    prev = hashLine(lines[i]!);
  }
  let head: string | null = null;
  try {
    head = (await readFile(`${file}.head`, 'utf8')).trim().split(/\s+/)[0] ?? null;
  } catch {
    head = null;
  }
  if (head === null) return { ok: false, records: lines.length, bad_line: lines.length, problem: `${file}.head is missing: cannot tell whether the tail was cut` };
  // The record is written, then the head: a SIGKILL between the two leaves one whole record past
  // the head. The reply goes out only after both, so that record was never acknowledged either.
  if (head !== prev && !unfinished && lines.length > 0 && head === beforeLast) {
    notes.push(`line ${lines.length} was written but .head not yet updated (the server stopped between the two writes; never acknowledged, and the next start carries on from it)`);
    return withNotes({ ok: true, records: lines.length }, notes);
  }
  if (head !== prev) {
    return unfinished
      ? { ok: false, records: lines.length + 1, bad_line: lines.length + 1, problem: 'the last line is cut off (no newline) and the head does not name the record before it (tail cut or edited)' }
      : { ok: false, records: lines.length, bad_line: lines.length, problem: 'the newest hash in .head does not match the last line (tail cut or edited)' };
  }
  if (unfinished) notes.push(`line ${lines.length + 1} is an unfinished record (the server stopped while writing it; it was never acknowledged, and the next start ends it)`);
  return withNotes({ ok: true, records: lines.length }, notes);
}

function withNotes(r: VerifyResult, notes: string[]): VerifyResult {
  return notes.length > 0 ? { ...r, note: notes.join('; ') } : r;
}

/** Whether `next` is the record the writer chains to a line a crash cut (`cut`), the chain before it being `chainBefore`. */
function cutLineFollows(cut: string, next: string, chainBefore: string): boolean {
  try {
    const rec: unknown = JSON.parse(next);
    return isCutLineRecord(rec) && rec.prev_hash === hashLine(cut) && (rec.args as { cut_line_prev_hash?: unknown } | null)?.cut_line_prev_hash === chainBefore;
  } catch {
    return false;
  }
}
