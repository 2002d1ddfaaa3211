import { readlink, realpath, stat, type FileHandle } from 'node:fs/promises';
import type { BuiltinOptions } from './fallback.js';
import { EXPIRED, needsWorker, RegexMatcher } from './regex-matcher.js';
import { decodeForSearch, searchText, type TextHits } from './search-text.js';
import { sameTextInBothEngines, slowInThread } from './small.js';
import { COLLECT_CAP, type EngineResult } from './types.js';

const HAS_PROC_FD = process.platform === 'linux';
/** Bigger files are skipped (and counted) rather than read whole into memory. */
export const MAX_FILE_BYTES = 64 * 1024 * 1024;

/** Reads a file whose size is known with one read for small files (FileHandle.readFile stats again). */
export async function readAll(fh: FileHandle, size: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(size);
  let n = 0;
  while (n < size) {
    const { bytesRead } = await fh.read(buf, n, size - n, n);
    if (bytesRead === 0) break;
    n += bytesRead;
  }
  return buf.subarray(0, n);
}

/** Confirms an open descriptor is the file at `expected` (no symlink or directory swapped in on the way). */
export async function descriptorIs(fh: FileHandle, expected: string, ino: number): Promise<boolean> {
  try {
    if (HAS_PROC_FD) return (await readlink(`/proc/self/fd/${fh.fd}`)) === expected;
    // No /proc (macOS): re-resolve the path and compare the inode with the descriptor's.
    return (await realpath(expected)) === expected && (await stat(expected)).ino === ino;
  } catch {
    return false;
  }
}


/** Searches one already opened and verified file (openFileForRead); `strict`: as BuiltinOptions.budget, for the text checks. */
export async function builtinSearchFile(fh: FileHandle, o: Pick<BuiltinOptions, 'q' | 'pat' | 'signal' | 'deadline'> & Partial<Pick<BuiltinOptions, 'needed' | 'collectCap'>> & { strict?: { literal: boolean } }): Promise<EngineResult> {
  // As in a folder: a file over MAX_FILE_BYTES is not read whole into memory (a 2 GB sparse file was).
  const { size } = await fh.stat();
  if (size > MAX_FILE_BYTES) {
    return { hits: [], capped: null, searched: 0, complete: true, sortedPrefix: true, notes: [`The file is over ${MAX_FILE_BYTES / 1024 / 1024} MB; the built-in engine does not search it.`] };
  }
  // At most the size seen: a file growing meanwhile is not read past it.
  const buf = await readAll(fh, size);
  const text = decodeForSearch(buf);
  if (o.strict) sameTextInBothEngines(buf, text, o.strict.literal, '');
  const q = { ...o.q, limit: Math.max(o.needed ?? 0, o.collectCap ?? COLLECT_CAP[o.q.mode]) };
  let found: TextHits | null | typeof EXPIRED = null;
  if (text !== null && !needsWorker(o.pat) && !slowInThread(o.pat, text.length)) found = searchText(text, o.pat, q.multiline, q.mode, q.context, q.limit);
  else if (text !== null) {
    const matcher = new RegexMatcher(o.pat, q, o.signal, o.deadline);
    try { found = await matcher.search(text); } finally { matcher.close(); }
  }
  const expired = found === EXPIRED;
  if (found === EXPIRED) found = null;
  return {
    hits: found ? [{ rel: '', records: found.records, count: found.count }] : [],
    // At the limit, as in a folder: the records are the first ones, the totals "at least".
    capped: expired ? 'time' : null, searched: 1, complete: !expired && !(found && q.mode === 'content' && found.records.length >= q.limit), sortedPrefix: true,
    notes: text === null ? ['The file is binary (it has a NUL byte near the start); it was not searched.'] : [],
  };
}
