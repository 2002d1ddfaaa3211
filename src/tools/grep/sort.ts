import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { comparePaths } from './select.js';
import type { FileHit } from './types.js';

const STAT_WINDOW = 64;

/**
 * `sort: "mtime"`: the files newest first (ties by path), for both engines. The hits are
 * already in path order; each file is stat'ed once (a file that vanished sorts last).
 */
export async function sortByMtime(hits: FileHit[], rootAbs: string, isFileRoot: boolean): Promise<FileHit[]> {
  if (isFileRoot || hits.length < 2) return hits;
  const mtimes = new Array<number>(hits.length);
  for (let i = 0; i < hits.length; i += STAT_WINDOW) {
    await Promise.all(hits.slice(i, i + STAT_WINDOW).map(async (h, k) => {
      const st = await lstat(path.join(rootAbs, h.rel)).catch(() => null);
      mtimes[i + k] = st ? st.mtimeMs : Number.NEGATIVE_INFINITY;
    }));
  }
  const order = hits.map((h, i) => ({ h, t: mtimes[i]! }));
  order.sort((a, b) => (b.t - a.t) || comparePaths(a.h.rel, b.h.rel));
  return order.map((o) => o.h);
}
