import { constants, type Stats } from 'node:fs';
import { lstat, open, readlink, realpath, stat, type FileHandle } from 'node:fs/promises';
import { ToolError, fromSystemError } from '../core/errors.js';
import type { ResolvedPath } from '../core/types.js';
import type { Workspace } from './workspace.js';

const HAS_PROC_FD = process.platform === 'linux';

/**
 * Confirms that an open descriptor is the very file the sandbox admitted. On Linux the
 * kernel tells us what the descriptor really points at (/proc/self/fd/N), so a symlink
 * or directory swapped in between the check and the open is caught. Elsewhere (macOS has
 * F_GETPATH, which Node does not expose) we re-resolve the path after opening and compare
 * device and inode with the descriptor: the window shrinks to a swap-and-swap-back.
 */
async function verifyDescriptor(fh: FileHandle, st: Stats, rp: ResolvedPath, ws: Workspace): Promise<void> {
  let actual: string;
  if (HAS_PROC_FD) {
    actual = await readlink(`/proc/self/fd/${fh.fd}`);
  } else {
    actual = await realpath(rp.abs);
    const again = await stat(actual);
    if (again.ino !== st.ino || again.dev !== st.dev) actual = '';
  }
  if (actual !== rp.abs || !ws.locate(actual) || ws.isDenied(actual)) {
    throw new ToolError('PathTraversalBlocked',
      `${rp.input} changed while it was being opened (a symlink or directory was swapped in); refused.`);
  }
}

export interface OpenedFile {
  fh: FileHandle;
  stat: Stats;
}

/**
 * Opens an admitted regular file for reading: no following a final symlink, no blocking on
 * a FIFO, only regular files, the descriptor verified, and hard-linked files refused unless
 * the policy allows them (a hard link can point at a file outside the workspace).
 */
export async function openFileForRead(rp: ResolvedPath, ws: Workspace): Promise<OpenedFile> {
  let fh: FileHandle;
  try {
    fh = await open(rp.abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (e) {
    throw fromSystemError(e, rp.display);
  }
  try {
    const st = await fh.stat();
    if (st.isDirectory()) throw new ToolError('InvalidArguments', `${rp.display} is a directory; use list_dir to see what is in it.`);
    if (!st.isFile()) throw new ToolError('PathDenied', `${rp.display} is not a regular file (a FIFO, socket or device); toolgate does not open those.`);
    await verifyDescriptor(fh, st, rp, ws);
    if (st.nlink > 1 && !ws.rules.allowHardlinks) {
      throw new ToolError('PathDenied',
        `${rp.display} has ${st.nlink} hard links, and a hard link can point at a file outside the workspace; refused (set paths.allow_hardlinks to permit).`);
    }
    return { fh, stat: st };
  } catch (e) {
    await fh.close().catch(() => {});
    throw e;
  }
}

export interface OpenedDir {
  fh: FileHandle;
  /** A path that names exactly the opened directory (the /proc fd link on Linux). */
  path: string;
}

/** Opens an admitted directory and verifies the descriptor, so a walk starts where the check looked. */
export async function openDir(rp: ResolvedPath, ws: Workspace): Promise<OpenedDir> {
  let fh: FileHandle;
  try {
    fh = await open(rp.abs, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // O_NOFOLLOW|O_DIRECTORY on a symlink also fails with ENOTDIR: that is a swap, not a file.
    if (code === 'ENOTDIR' && (await lstat(rp.abs).catch(() => null))?.isSymbolicLink()) {
      throw new ToolError('PathTraversalBlocked', `${rp.input} changed while it was being opened (a symlink was swapped in); refused.`);
    }
    if (code === 'ENOTDIR') throw new ToolError('InvalidArguments', `${rp.display} is a file, not a directory; use read_file.`);
    throw fromSystemError(e, rp.display);
  }
  try {
    const st = await fh.stat();
    await verifyDescriptor(fh, st, rp, ws);
    return { fh, path: HAS_PROC_FD ? `/proc/self/fd/${fh.fd}` : rp.abs };
  } catch (e) {
    await fh.close().catch(() => {});
    throw e;
  }
}
