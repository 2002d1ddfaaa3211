import { opendir } from 'node:fs/promises';
import path from 'node:path';
import type { Workspace } from '../workspace/workspace.js';

/** Entries looked at before giving up and answering "yes" (refusing is the safe answer). */
const CAP = 200_000;

/**
 * Whether a folder holds a protected path (paths.protect: a nested `.git`, `.vscode`, …) at
 * any depth. Deleting or moving such a folder would delete or move the protected path with it.
 * Stops at the first hit; symlinks are not followed (they are judged where they point).
 */
export async function holdsProtected(ws: Pick<Workspace, 'rules' | 'locate'>, dir: string): Promise<boolean> {
  const stack = [dir];
  let seen = 0;
  while (stack.length) {
    const d = stack.pop()!;
    let it;
    try { it = await opendir(d); } catch { continue; }
    for await (const e of it) {
      if (++seen > CAP) return true;
      const abs = path.join(d, e.name);
      const rel = ws.locate(abs)?.relToRoot ?? null;
      if (ws.rules.isProtected(rel, abs)) return true;
      if (e.isDirectory()) stack.push(abs);
    }
  }
  return false;
}
