import { lstatSync, readdirSync, readlinkSync, realpathSync, type Stats } from 'node:fs';
import path from 'node:path';

/**
 * A protected or private path inside a workspace root that is, or passes through, a symbolic link
 * (review 34). bubblewrap mounts where a link leads, so a stand-in or read-only bind lands on the
 * link's target while the link itself stays an ordinary entry of a writable folder: a command
 * removes it and makes the path as real folders (`.vscode/tasks.json`, `.github/workflows/…`, the
 * user's `~/.local/state/toolgate/grants` with HOME in the workspace). No mount can hold a link
 * (a mount point is always followed), so such a workspace gets no sandboxed command until the
 * link is replaced by what it points to, or moved out.
 *
 * `paths`: absolute paths as toolgate names them (lexically under a root or not). Returns the
 * first link found and the path it was on, or null. Missing parts end the walk (a stand-in covers
 * them); so does a part that is a file (nothing can be below it).
 */
export function linkOnTheWay(roots: readonly string[], paths: readonly string[]): { path: string; link: string } | null {
  for (const p of paths) {
    for (const [cur, st] of partsInRoot(roots, p)) {
      if (!st) break;
      if (st.isSymbolicLink()) return { path: p, link: cur };
      if (!st.isDirectory()) break;
    }
  }
  return null;
}

/** Each part of `p` below the root that holds it, outermost first, with its lstat (null: missing). None when no root holds it. */
function* partsInRoot(roots: readonly string[], p: string): Generator<[string, Stats | null]> {
  const root = roots.find((r) => p.startsWith(`${r}/`));
  if (!root) return;
  let cur = root;
  for (const part of p.slice(root.length + 1).split('/')) {
    if (part === '' || part === '.') continue;
    cur = `${cur}/${part}`;
    let st: Stats | null = null;
    try { st = lstatSync(cur); } catch { /* missing */ }
    yield [cur, st];
  }
}

/**
 * A private path inside a root (the user's toolgate state with HOME in the workspace) must be a
 * folder reached through folders only, once made: a *file* on the way left it unmade and unmasked,
 * and a command replaced the file by folders of its own (review 35). The first part that is not a
 * folder, or null.
 */
export function notAFolderOnTheWay(roots: readonly string[], paths: readonly string[]): { path: string; part: string } | null {
  for (const p of paths) {
    for (const [cur, st] of partsInRoot(roots, p)) if (!st?.isDirectory()) return { path: p, part: cur };
  }
  return null;
}

/**
 * A link inside a protected folder that leads into a root (review 35): the folder is bound
 * read-only, which holds the link, but not what it leads to — `.vscode/tasks.json` a link to
 * `shared/tasks.json`, a nested repository's `.git/hooks` a link to `../githooks`. "Leads into a
 * root" as written too, not only where it ends (review 36): a dangling target in a root is one a
 * command can make, and one through a link in a root (`shared -> /elsewhere`) is one it can
 * re-point. A target inside another protected path is read-only itself and fine. A hard-linked
 * file is the same file under a writable name (review 36). In `.git`, only what git runs or reads
 * config from is looked at (hooks, config, commondir); other protected folders breadth first, to a
 * bounded depth and number of entries (the first levels are what tools read).
 */
export function linkOutOfProtected(roots: readonly string[], folders: readonly string[]): { link: string; to: string } | null {
  const under = (p: string, bases: readonly string[]) => bases.some((r) => p === r || p.startsWith(`${r}/`));
  const writable = (p: string) => under(p, roots) && !under(p, folders);
  const check = (p: string, st: import('node:fs').Stats): { link: string; to: string } | null => {
    if (!st.isSymbolicLink()) return st.isFile() && st.nlink > 1 ? { link: p, to: '(a hard link: the same file under another name)' } : null;
    let written: string;
    try { written = path.resolve(path.dirname(p), readlinkSync(p)); } catch { return null; }
    if (writable(written)) return { link: p, to: written };
    let real: string | undefined;
    try { real = realpathSync(p); } catch { /* dangling, out of every root as written */ }
    return real && writable(real) ? { link: p, to: real } : null;
  };
  for (const f of folders) {
    const names = path.basename(f) === '.git' ? ['hooks', 'config', 'commondir'] : null;
    const queue: Array<[string, number]> = names ? names.map((n) => [`${f}/${n}`, 1]) : [[f, 0]];
    for (let q = 0; q < queue.length && q < 5000; q++) {
      const [p, depth] = queue[q]!;
      let st;
      try { st = lstatSync(p); } catch { continue; }
      const hit = depth > 0 ? check(p, st) : null;
      if (hit) return hit;
      if (!st.isDirectory() || depth >= 4) continue;
      let entries: string[] = [];
      try { entries = readdirSync(p); } catch { continue; }
      for (const e of entries) queue.push([`${p}/${e}`, depth + 1]);
    }
  }
  return null;
}

/** The path with its links resolved, when it exists (a mount point given through an absolute link fails in bwrap's staging root); else as it is. */
export function realOrSelf(p: string): string {
  try { return realpathSync(p); } catch { return p; }
}

/** Where a path lies in a root, for the refusal's words. */
export function shown(roots: readonly string[], p: string): string {
  const root = roots.find((r) => p === r || p.startsWith(`${r}/`));
  return root ? path.relative(root, p) || '.' : p;
}
