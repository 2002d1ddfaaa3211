import { lstat, readdir, rmdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { ToolError, fromSystemError } from '../../core/errors.js';
import type { ResolvedPath } from '../../core/types.js';
import type { Workspace } from '../../workspace/workspace.js';
import { inDir, pinChild, pinDir, split, type PinnedDir } from '../../fs-write/pinned-dir.js';

export interface Entry {
  abs: string;
  /** Relative to the entry's root, `/`-separated (what the lists and rules match). */
  rel: string;
  kind: 'file' | 'dir' | 'link' | 'other';
}

export const MAX_ENTRIES = 10_000;

/**
 * Opens the directory `rp` names the safe way: its parent opened and verified, then the
 * directory opened relative to that descriptor without following a link, and verified too.
 * Every later step of a walk goes from one opened, verified folder to the next the same way,
 * so a folder swapped for a link to the outside mid-walk is refused, never entered.
 */
async function withTree<T>(rp: ResolvedPath, ws: Workspace, fn: (parent: PinnedDir, top: PinnedDir) => Promise<T>): Promise<T> {
  const { dir, base } = split(rp.abs);
  const parent = await pinDir(dir, rp.display, ws);
  try {
    const top = await pinChild(parent, base, rp.display, ws);
    try {
      return await fn(parent, top);
    } finally {
      await top.close();
    }
  } finally {
    await parent.close();
  }
}

function entryKind(st: { isSymbolicLink(): boolean; isDirectory(): boolean; isFile(): boolean }): Entry['kind'] {
  return st.isSymbolicLink() ? 'link' : st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other';
}

/**
 * Checks one entry found by a walk against containment, the deny list, the tool's deny rules
 * and the protect list. A denied entry refuses the whole call without being named (its name
 * is what the rule hides); a protected one is named (it is readable anyway).
 */
function admit(rp: ResolvedPath, ws: Workspace, abs: string, isDir: boolean): string {
  const refuse = (why: string, entry?: string) => new ToolError('PathDenied',
    `${rp.input} holds ${entry ?? 'a path'} which ${why}; nothing was deleted.${entry ? ' Delete the other entries one by one.' : ''}`,
    { details: { path: rp.input, ...(entry ? { entry } : {}) } });
  const loc = ws.locate(abs);
  if (!loc) throw refuse('lies outside the workspace', ws.display(abs));
  if (ws.rules.isDenied(loc.relToRoot, abs, isDir) || ws.gate?.judge(loc.relToRoot, abs, isDir)?.decision === 'deny') {
    throw refuse('no tool may delete (the secrets deny list or a policy rule covers it)');
  }
  if (ws.rules.isProtected(loc.relToRoot, abs)) throw refuse('is protected (paths.protect)', ws.display(abs));
  return loc.relToRoot;
}

/**
 * Everything a recursive delete would remove, deepest first, never following a link (a link
 * is an entry of its own). Every entry is checked against containment and the deny/protect
 * lists; one that may not be deleted refuses the whole call before anything is removed.
 */
export async function walkForDelete(rp: ResolvedPath, ws: Workspace): Promise<Entry[]> {
  const out: Entry[] = [];
  const visit = async (dir: PinnedDir): Promise<void> => {
    let names: string[];
    try {
      names = await readdir(dir.path);
    } catch (e) {
      throw fromSystemError(e, ws.display(dir.real));
    }
    for (const name of names.sort()) {
      const abs = path.join(dir.real, name);
      const st = await lstat(dir.at(name)).catch((e) => { throw fromSystemError(e, ws.display(abs)); });
      const rel = admit(rp, ws, abs, st.isDirectory());
      const kind = entryKind(st);
      if (kind === 'dir') {
        const child = await pinChild(dir, name, ws.display(abs), ws);
        try {
          await visit(child);
        } finally {
          await child.close();
        }
      }
      out.push({ abs, rel, kind });
      if (out.length > MAX_ENTRIES) {
        throw new ToolError('InvalidArguments', `${rp.display} holds more than ${MAX_ENTRIES} entries; delete it in parts (or from a shell).`, { details: { path: rp.display } });
      }
    }
  };
  await withTree(rp, ws, (_parent, top) => visit(top));
  return out;
}

/**
 * Deletes the tree `rp` names, deepest first, every unlink and rmdir done through the opened,
 * verified folder that holds the entry (re-verified just before). Only entries in `planned`
 * (what the approved walk found) are deleted: anything new stops the delete. Returns the count.
 */
export async function removeTree(rp: ResolvedPath, ws: Workspace, planned: Set<string>): Promise<number> {
  let n = 0;
  let at = rp.abs;
  const visit = async (dir: PinnedDir): Promise<void> => {
    const names = await readdir(dir.path);
    for (const name of names.sort()) {
      const abs = path.join(dir.real, name);
      at = abs;
      const st = await lstat(dir.at(name));
      admit(rp, ws, abs, st.isDirectory());
      if (!planned.has(abs)) {
        throw new ToolError('StaleRead', `${ws.display(abs)} appeared in ${rp.display} after the call was approved.`, { details: { path: rp.display, entry: ws.display(abs) } });
      }
      if (st.isDirectory()) {
        const child = await pinChild(dir, name, ws.display(abs), ws);
        try {
          await visit(child);
        } finally {
          await child.close();
        }
        at = abs;
        await dir.verify();
        await rmdir(dir.at(name));
      } else {
        await dir.verify();
        await unlink(dir.at(name));
      }
      n++;
    }
  };
  try {
    await withTree(rp, ws, async (parent, top) => {
      await visit(top);
      at = rp.abs;
      await parent.verify();
      await rmdir(parent.at(path.basename(rp.abs)));
      n++;
    });
  } catch (err) {
    const te = err instanceof ToolError ? err
      : (err as NodeJS.ErrnoException).code === 'ENOTEMPTY'
        ? new ToolError('StaleRead', `Something was added to ${ws.display(at)} while deleting it.`, { details: { path: rp.display } })
        : fromSystemError(err, ws.display(at));
    throw new ToolError(te.code, `${te.message} Stopped after deleting ${n} entries.`, { details: { ...te.details, deleted_count: n, failed_at: ws.display(at) }, cause: err });
  }
  return n;
}

/**
 * Deletes one file or link through its opened, verified folder. `check` sees what is there
 * now (lstat through the descriptor) and throws when it is not what was approved.
 */
export async function removeOne(abs: string, display: string, ws: Workspace, check: (st: Awaited<ReturnType<typeof lstat>>) => void): Promise<void> {
  const { dir, base } = split(abs);
  await inDir(dir, display, async (d) => {
    const st = await lstat(d.at(base)).catch((e) => { throw fromSystemError(e, display); });
    check(st);
    await d.verify();
    await unlink(d.at(base)).catch((e) => { throw fromSystemError(e, display); });
  }, ws);
}
