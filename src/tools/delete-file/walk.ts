import { lstat, readdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { ToolError, fromSystemError } from '../../core/errors.js';
import type { ResolvedPath } from '../../core/types.js';
import type { Workspace } from '../../workspace/workspace.js';

export interface Entry {
  abs: string;
  /** Relative to the entry's root, `/`-separated (what the lists and rules match). */
  rel: string;
  kind: 'file' | 'dir' | 'link' | 'other';
}

export const MAX_ENTRIES = 10_000;

/**
 * Everything a recursive delete would remove, deepest first, never following a link (a link
 * is an entry of its own). Every entry is checked against containment and the deny/protect
 * lists; one that may not be deleted refuses the whole call before anything is removed.
 */
export async function walkForDelete(rp: ResolvedPath, ws: Workspace): Promise<Entry[]> {
  const out: Entry[] = [];
  const refuse = (abs: string, why: string) => new ToolError('PathDenied',
    `${rp.display} holds ${ws.display(abs)}, which ${why}; nothing was deleted. Delete the other entries one by one.`,
    { details: { path: rp.display, entry: ws.display(abs) } });
  const visit = async (dir: string): Promise<void> => {
    if ((await realpath(dir).catch(() => null)) !== dir) throw new ToolError('PathTraversalBlocked', `${ws.display(dir)} changed into a link during the walk; nothing was deleted.`);
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (e) {
      throw fromSystemError(e, ws.display(dir));
    }
    for (const name of names.sort()) {
      const abs = path.join(dir, name);
      const loc = ws.locate(abs);
      if (!loc) throw refuse(abs, 'lies outside the workspace');
      if (ws.rules.isDenied(loc.relToRoot, abs)) throw refuse(abs, 'is on the secrets deny list');
      if (ws.rules.isProtected(loc.relToRoot, abs)) throw refuse(abs, 'is protected (paths.protect)');
      const st = await lstat(abs).catch((e) => { throw fromSystemError(e, ws.display(abs)); });
      const kind = st.isSymbolicLink() ? 'link' : st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other';
      if (kind === 'dir') await visit(abs);
      out.push({ abs, rel: loc.relToRoot, kind });
      if (out.length > MAX_ENTRIES) {
        throw new ToolError('InvalidArguments', `${rp.display} holds more than ${MAX_ENTRIES} entries; delete it in parts (or from a shell).`, { details: { path: rp.display } });
      }
    }
  };
  await visit(rp.abs);
  return out;
}
