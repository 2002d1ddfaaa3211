import { lstat, realpath } from 'node:fs/promises';
import type { FileHit } from './types.js';

/**
 * Checks files ripgrep reported before anything about them is returned: still a regular file
 * (not swapped for a symlink), one hard link unless allowed (a hard link can point at a file
 * outside the workspace), and its directory still where the search looked (realpath, once per
 * directory, catches a directory swapped for a symlink during the walk). Only the hits that
 * will be shown or counted are checked: the first `need` items in order, or all of them when
 * there are at most `budget` hits — so the cost follows the answer, not the tree.
 */
export interface Verified {
  hits: FileHit[];
  /** Every hit was checked: totals are exact. */
  exact: boolean;
  hardlinked: number;
  moved: number;
}

const BATCH = 64;

export async function verifyHits(sorted: FileHit[], rootAbs: string, opts: { allowHardlinks: boolean; need: number; budget: number; itemsOf: (h: FileHit) => number; isFileRoot: boolean }): Promise<Verified> {
  if (opts.isFileRoot) return { hits: sorted, exact: true, hardlinked: 0, moved: 0 };
  const base = rootAbs === '/' ? '' : rootAbs;
  const dirs = new Map<string, Promise<boolean>>();
  const dirOk = (dir: string): Promise<boolean> => {
    let p = dirs.get(dir);
    if (!p) {
      const abs = dir === '' ? rootAbs : `${base}/${dir}`;
      p = realpath(abs).then((r) => r === abs, () => false);
      dirs.set(dir, p);
    }
    return p;
  };
  const check = async (h: FileHit): Promise<'ok' | 'hardlinked' | 'moved'> => {
    const slash = h.rel.lastIndexOf('/');
    if (!(await dirOk(slash < 0 ? '' : h.rel.slice(0, slash)))) return 'moved';
    try {
      const st = await lstat(`${base}/${h.rel}`);
      if (!st.isFile()) return 'moved';
      if (st.nlink > 1 && !opts.allowHardlinks) return 'hardlinked';
      return 'ok';
    } catch {
      return 'moved';
    }
  };
  const all = sorted.length <= opts.budget;
  const out: FileHit[] = [];
  let items = 0;
  let hardlinked = 0;
  let moved = 0;
  let i = 0;
  while (i < sorted.length && (all || items < opts.need)) {
    const batch = sorted.slice(i, i + BATCH);
    const verdicts = await Promise.all(batch.map(check));
    verdicts.forEach((v, k) => {
      if (v === 'ok') { out.push(batch[k]!); items += opts.itemsOf(batch[k]!); }
      else if (v === 'hardlinked') hardlinked++;
      else moved++;
    });
    i += batch.length;
  }
  return { hits: out, exact: i >= sorted.length, hardlinked, moved };
}
