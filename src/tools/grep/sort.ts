import { openRechecker, type FolderId } from '../glob/recheck.js';
import { comparePaths } from './select.js';
import type { FileHit } from './types.js';

const SLICE = 512;

/**
 * `sort: "mtime"`: the files newest first (ties by path), for both engines. The hits are
 * already in path order; each file is lstat'ed once (a file that vanished sorts last), through
 * pinned folder descriptors (glob's re-check, as verifyHits does), not by path: a folder swapped
 * for a link to outside while the hits are sorted must not order the answer by an outside
 * file's mtime or existence. `searched`: the folder rg was pinned to, when known.
 */
export async function sortByMtime(hits: FileHit[], rootAbs: string, isFileRoot: boolean, searched?: FolderId): Promise<FileHit[]> {
  if (isFileRoot || hits.length < 2) return hits;
  const mtimes = new Array<number>(hits.length);
  const pinned = openRechecker(rootAbs === '/' ? '' : rootAbs, {}, searched);
  try {
    for (let i = 0; i < hits.length; i++) {
      if (i > 0 && i % SLICE === 0) await new Promise<void>((r) => setImmediate(r));
      const st = pinned.lstat(hits[i]!.rel);
      mtimes[i] = st ? st.mtimeMs : Number.NEGATIVE_INFINITY;
    }
  } finally {
    pinned.close();
  }
  const order = hits.map((h, i) => ({ h, t: mtimes[i]! }));
  order.sort((a, b) => (b.t - a.t) || comparePaths(a.h.rel, b.h.rel));
  return order.map((o) => o.h);
}
