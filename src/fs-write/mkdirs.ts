import { lstat, mkdir, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { ToolError, fromSystemError } from '../core/errors.js';
import type { ResolvedPath } from '../core/types.js';
import type { Workspace } from '../workspace/workspace.js';
import { inDir, pinChild, pinDir, split } from './pinned-dir.js';

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
 * Creates the missing parents of a new file one level at a time, top first: the nearest
 * existing ancestor is opened and verified, each new directory is made through that
 * descriptor, then opened (no following links) and verified before the next level. A link
 * raced in anywhere is refused, and nothing is created outside. Then the path is admitted again.
 */
export async function createParents(rp: ResolvedPath, ws: Workspace): Promise<{ rp: ResolvedPath; created: string[] }> {
  const created: string[] = [];
  const missing = await missingParents(rp.abs);
  if (missing.length) {
    let cur = await pinDir(path.dirname(missing[0]!), rp.display, ws);
    try {
      for (const d of missing) {
        if (!ws.locate(d)) throw new ToolError('PathTraversalBlocked', `A directory on the way to ${rp.display} lies outside the workspace; refused.`);
        const name = path.basename(d);
        try {
          await mkdir(cur.at(name));
          created.push(d);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw fromSystemError(e, ws.display(d));
        }
        const next = await pinChild(cur, name, ws.display(d), ws);
        await cur.close();
        cur = next;
      }
    } catch (e) {
      await removeCreatedDirs(created);
      throw e;
    } finally {
      await cur.close();
    }
  }
  const again = await ws.resolve(rp.input, 'create');
  if (again.abs !== rp.abs) {
    await removeCreatedDirs(created);
    throw new ToolError('PathTraversalBlocked', `${rp.display} resolves elsewhere after creating its directories; refused.`);
  }
  return { rp: again, created };
}

/** Removes directories createParents made (deepest first), each through its verified parent; only empty ones go. */
export async function removeCreatedDirs(created: string[]): Promise<void> {
  for (const d of [...created].reverse()) {
    const { dir, base } = split(d);
    await inDir(dir, base, (p) => rmdir(p.at(base))).catch(() => {});
  }
}
