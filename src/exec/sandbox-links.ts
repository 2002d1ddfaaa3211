import { lstatSync, realpathSync } from 'node:fs';
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
    const root = roots.find((r) => p.startsWith(`${r}/`));
    if (!root) continue;
    let cur = root;
    for (const part of p.slice(root.length + 1).split('/')) {
      if (part === '' || part === '.') continue;
      cur = `${cur}/${part}`;
      let st;
      try { st = lstatSync(cur); } catch { break; }
      if (st.isSymbolicLink()) return { path: p, link: cur };
      if (!st.isDirectory()) break;
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
