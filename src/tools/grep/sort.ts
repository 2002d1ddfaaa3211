import { lstatPinned, type FolderId } from '../glob/recheck.js';
import { comparePaths } from './select.js';
import type { FileHit } from './types.js';

/**
 * `sort: "mtime"`: the files newest first (ties by path), for both engines. The hits are
 * already in path order; each file is lstat'ed once (a file that vanished sorts last), through
 * pinned folder descriptors (glob's re-check, as verifyHits does), not by path: a folder swapped
 * for a link to outside while the hits are sorted must not order the answer by an outside
 * file's mtime or existence. `searched`: the folder rg was pinned to, when known.
 */
export async function sortByMtime(hits: FileHit[], rootAbs: string, isFileRoot: boolean, searched?: FolderId): Promise<FileHit[]> {
  if (isFileRoot || hits.length < 2) return hits;
  const stats = await lstatPinned(hits.map((h) => h.rel), rootAbs, searched);
  const order = hits.map((h, i) => ({ h, t: stats[i]?.mtimeMs ?? Number.NEGATIVE_INFINITY }));
  order.sort((a, b) => (b.t - a.t) || comparePaths(a.h.rel, b.h.rel));
  return order.map((o) => o.h);
}
