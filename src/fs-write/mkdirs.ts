import { lstat, mkdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { ToolError, fromSystemError } from '../core/errors.js';
import type { ResolvedPath } from '../core/types.js';
import type { Workspace } from '../workspace/workspace.js';

async function isRealDir(p: string): Promise<boolean> {
  try {
    const st = await lstat(p);
    return st.isDirectory() && !st.isSymbolicLink();
  } catch {
    return false;
  }
}

/** The directories between the nearest existing ancestor and the file, top first. */
async function missingParents(abs: string): Promise<string[]> {
  const out: string[] = [];
  for (let d = path.dirname(abs); ; d = path.dirname(d)) {
    try {
      await lstat(d);
      break;
    } catch {
      out.unshift(d);
      if (path.dirname(d) === d) break;
    }
  }
  return out;
}

/** Whether the file's parent directory exists now. */
export async function parentExists(rp: ResolvedPath): Promise<boolean> {
  return isRealDir(path.dirname(rp.abs));
}

/**
 * Creates the missing parents of a new file one level at a time, each checked to be a real
 * directory under a real parent (a link raced in is refused), then admits the path again.
 */
export async function createParents(rp: ResolvedPath, ws: Workspace): Promise<{ rp: ResolvedPath; created: string[] }> {
  const created: string[] = [];
  for (const d of await missingParents(rp.abs)) {
    const parent = path.dirname(d);
    if ((await realpath(parent).catch(() => null)) !== parent || !ws.locate(d)) {
      throw new ToolError('PathTraversalBlocked', `A directory on the way to ${rp.display} was replaced while creating it; refused.`);
    }
    try {
      await mkdir(d);
      created.push(d);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw fromSystemError(e, ws.display(d));
    }
    if (!(await isRealDir(d))) {
      throw new ToolError('PathTraversalBlocked', `${ws.display(d)} is not a plain directory (a link or a file); refused.`);
    }
  }
  const again = await ws.resolve(rp.input, 'create');
  if (again.abs !== rp.abs) {
    throw new ToolError('PathTraversalBlocked', `${rp.display} resolves elsewhere after creating its directories; refused.`);
  }
  return { rp: again, created };
}
