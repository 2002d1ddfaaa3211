import { constants } from 'node:fs';
import { open, readlink, realpath, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { ToolError, fromSystemError } from '../core/errors.js';

const HAS_PROC_FD = process.platform === 'linux';

/** Containment check for a pinned folder (a Workspace satisfies it). */
export interface Roots {
  locate(abs: string): unknown;
}

/**
 * A folder opened (O_DIRECTORY|O_NOFOLLOW) and verified to be exactly `real`. On Linux `path`
 * is /proc/self/fd/N: every operation on `at(name)` happens in that very folder, whatever is
 * renamed or swapped for a symlink along `real` meanwhile. Elsewhere `path` is `real` itself,
 * re-checked with realpath: a swap between the check and the operation is not caught there
 * (Node exposes no *at() calls); docs/editing.md says so.
 */
export interface PinnedDir {
  real: string;
  path: string;
  at(name: string): string;
  /** Checks again that the descriptor still is `real` (not moved away), just before an operation. */
  verify(): Promise<void>;
  close(): Promise<void>;
}

export function swapped(display: string): ToolError {
  return new ToolError('PathTraversalBlocked',
    `A directory on the way to ${display} was moved or replaced by a link while changing it; refused (nothing was changed there).`);
}

async function openDirNoFollow(p: string, display: string): Promise<FileHandle> {
  try {
    return await open(p, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // O_NOFOLLOW|O_DIRECTORY on a symlink fails with ENOTDIR (or ELOOP): a swap, or a link where a folder was.
    if (code === 'ENOTDIR' || code === 'ELOOP') throw swapped(display);
    throw fromSystemError(e, display);
  }
}

async function finish(fh: FileHandle, real: string, display: string, roots?: Roots): Promise<PinnedDir> {
  const link = HAS_PROC_FD ? `/proc/self/fd/${fh.fd}` : real;
  const verify = async () => {
    const actual = HAS_PROC_FD ? await readlink(link).catch(() => '') : await realpath(real).catch(() => '');
    if (actual !== real || (roots && !roots.locate(actual))) throw swapped(display);
  };
  try {
    await verify();
  } catch (e) {
    await fh.close().catch(() => {});
    throw e;
  }
  return { real, path: link, at: (name) => path.join(link, name), verify, close: () => fh.close().catch(() => {}) };
}

/** Opens the folder `real` (an absolute real path, already admitted) and verifies the descriptor. */
export async function pinDir(real: string, display: string, roots?: Roots): Promise<PinnedDir> {
  return finish(await openDirNoFollow(real, display), real, display, roots);
}

/** Opens the sub-folder `name` of an opened folder, relative to its descriptor, never following a link. */
export async function pinChild(parent: PinnedDir, name: string, display: string, roots?: Roots): Promise<PinnedDir> {
  return finish(await openDirNoFollow(parent.at(name), display), path.join(parent.real, name), display, roots);
}

/**
 * Runs `fn` with the folder `dir` pinned: `fn` gets the path to act through
 * (`/proc/self/fd/N` on Linux), verified on opening.
 */
export async function inDir<T>(dir: string, display: string, fn: (d: PinnedDir) => Promise<T>, roots?: Roots): Promise<T> {
  const d = await pinDir(dir, display, roots);
  try {
    return await fn(d);
  } finally {
    await d.close();
  }
}

/** `abs` as (its folder, its name), for acting on it through the pinned folder. */
export function split(abs: string): { dir: string; base: string } {
  return { dir: path.dirname(abs), base: path.basename(abs) };
}
