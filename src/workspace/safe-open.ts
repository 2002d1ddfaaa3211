import { closeSync, constants, fstatSync, lstatSync, openSync, opendirSync, readdirSync, readlinkSync, readSync, statSync, type Dirent, type Stats } from 'node:fs';
import { lstat, open, readlink, realpath, stat, type FileHandle } from 'node:fs/promises';
import { ToolError, fromSystemError } from '../core/errors.js';
import type { ResolvedPath } from '../core/types.js';
import type { Workspace } from './workspace.js';

const HAS_PROC_FD = process.platform === 'linux';

/**
 * Where this process's descriptors are reached by path: /proc/<pid>/fd when /proc/self is
 * checked (once, at load) to be that very directory, else /proc/self/fd. The same
 * descriptors either way; the numeric form skips resolving the "self" link on every lookup
 * (measured: 131 lstats of a folder's entries, ~190 µs instead of ~215 µs).
 */
export function procFdDir(selfLink: () => string, pid: number): string {
  try {
    return selfLink() === String(pid) ? `/proc/${pid}/fd` : '/proc/self/fd';
  } catch {
    return '/proc/self/fd';
  }
}
const FD_DIR = HAS_PROC_FD ? procFdDir(() => readlinkSync('/proc/self'), process.pid) : '/proc/self/fd';

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
    checkOpened(st, rp);
    await verifyDescriptor(fh, st, rp, ws);
    checkLinks(st, rp, ws);
    return { fh, stat: st };
  } catch (e) {
    await fh.close().catch(() => {});
    throw e;
  }
}

/** Regular files up to this size are read with synchronous calls (one event-loop turn, no thread-pool round trips). */
export const SYNC_READ_MAX = 256 * 1024;

function checkOpened(st: Stats, rp: ResolvedPath): void {
  if (st.isDirectory()) throw new ToolError('InvalidArguments', `${rp.display} is a directory; use list_dir to see what is in it.`);
  if (!st.isFile()) throw new ToolError('PathDenied', `${rp.display} is not a regular file (a FIFO, socket or device); toolgate does not open those.`);
}

function checkLinks(st: Stats, rp: ResolvedPath, ws: Workspace): void {
  if (st.nlink > 1 && !ws.rules.allowHardlinks) {
    throw new ToolError('PathDenied',
      `${rp.display} has ${st.nlink} hard links, and a hard link can point at a file outside the workspace; refused (set paths.allow_hardlinks to permit).`);
  }
}

/**
 * The small-file fast path of openFileForRead, with the same checks (O_NOFOLLOW, O_NONBLOCK so
 * a FIFO never blocks, regular files only, descriptor verified through /proc/self/fd, hard
 * links): when the file is a regular file of at most `max` bytes its bytes are returned;
 * null means "use the asynchronous path" (not Linux, or a bigger file). Only the open of a
 * regular file and a bounded read happen synchronously.
 */
/** Reads an open file from its start, `size` bytes or fewer when it ended sooner (a file that shrank). */
export function readFdSync(fd: number, size: number): Buffer {
  const buf = Buffer.allocUnsafe(size);
  let n = 0;
  while (n < size) {
    const got = readSync(fd, buf, n, size - n, n);
    if (got === 0) break;
    n += got;
  }
  return buf.subarray(0, n);
}

export function readSmallFileSync(rp: ResolvedPath, ws: Workspace, max = SYNC_READ_MAX): { bytes: Buffer; stat: Stats } | null {
  if (!HAS_PROC_FD) return null;
  let fd: number;
  try {
    fd = openSync(rp.abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (e) {
    throw fromSystemError(e, rp.display);
  }
  try {
    const st = fstatSync(fd);
    checkOpened(st, rp);
    if (st.size > max) return null;
    const actual = readlinkSync(`/proc/self/fd/${fd}`);
    if (actual !== rp.abs || !ws.locate(actual) || ws.isDenied(actual)) {
      throw new ToolError('PathTraversalBlocked',
        `${rp.input} changed while it was being opened (a symlink or directory was swapped in); refused.`);
    }
    checkLinks(st, rp, ws);
    // One byte more than the size: a file that grew since fstat is read by the async path.
    const buf = Buffer.allocUnsafe(st.size + 1);
    let off = 0;
    for (;;) {
      const n = readSync(fd, buf, off, buf.length - off, null);
      if (n === 0) break;
      off += n;
      if (off === buf.length) return null;
      // The size fstat gave, and not the byte more asked for: that is the end (no read of 0 to confirm).
      if (off === st.size) break;
    }
    return { bytes: buf.subarray(0, off), stat: st };
  } finally {
    closeSync(fd);
  }
}

/** An open directory descriptor; close() is safe to call more than once. */
export interface DirHandle {
  readonly fd: number;
  close(): Promise<void>;
}

export interface OpenedDir {
  fh: DirHandle;
  /** A path that names exactly the opened directory (the /proc fd link on Linux). */
  path: string;
}

/**
 * Opens an admitted directory and verifies the descriptor, so a walk starts where the check looked.
 * On Linux synchronously (openDirSync: an open with O_DIRECTORY cannot block on a FIFO, and three
 * thread-pool round trips cost more than the two system calls); elsewhere asynchronously.
 */
export async function openDir(rp: ResolvedPath, ws: Workspace): Promise<OpenedDir> {
  const sync = openDirSync(rp, ws);
  if (sync) {
    let open = true;
    return { fh: { fd: sync.fd, close: async () => { if (open) { open = false; closeSync(sync.fd); } } }, path: sync.path };
  }
  return openDirAsync(rp, ws);
}

/** openDir through the thread pool (the path off Linux; tests hold it to openDirSync's answers). */
export async function openDirAsync(rp: ResolvedPath, ws: Workspace): Promise<OpenedDir> {
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
    return { fh, path: HAS_PROC_FD ? `${FD_DIR}/${fh.fd}` : rp.abs };
  } catch (e) {
    await fh.close().catch(() => {});
    throw e;
  }
}

/**
 * openDir's synchronous twin, for the small-folder path of list_dir: the same open
 * (O_DIRECTORY|O_NOFOLLOW, a link swapped in is PathTraversalBlocked) and the same
 * /proc/self/fd check, without three thread-pool round trips. null off Linux (use openDir).
 * The caller closes `fd` (closeSync).
 */
export function openDirSync(rp: ResolvedPath, ws: Workspace): { fd: number; path: string } | null {
  if (!HAS_PROC_FD) return null;
  let fd: number;
  try {
    fd = openSync(rp.abs, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR' && lstatSync(rp.abs, { throwIfNoEntry: false })?.isSymbolicLink()) {
      throw new ToolError('PathTraversalBlocked', `${rp.input} changed while it was being opened (a symlink was swapped in); refused.`);
    }
    if (code === 'ENOTDIR') throw new ToolError('InvalidArguments', `${rp.display} is a file, not a directory; use read_file.`);
    throw fromSystemError(e, rp.display);
  }
  try {
    const actual = readlinkSync(`/proc/self/fd/${fd}`);
    if (actual !== rp.abs || !ws.locate(actual) || ws.isDenied(actual)) {
      throw new ToolError('PathTraversalBlocked',
        `${rp.input} changed while it was being opened (a symlink or directory was swapped in); refused.`);
    }
    return { fd, path: `${FD_DIR}/${fd}` };
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/** Entries read synchronously before a listing goes on asynchronously (a huge folder must not hold the event loop). */
export const SYNC_LIST_MAX = 1000;
/** A directory no bigger than this (st_size) holds at most ~1,000-1,600 entries on the usual file systems: one readdirSync. */
const SMALL_DIR_BYTES = 32 * 1024;

/**
 * The entries of a directory (`dirPath` may be a /proc/self/fd/N path), the first `syncMax`
 * read synchronously — one event-loop turn for an ordinary folder — and the rest, if any,
 * asynchronously. Same entries and types as readdir(dirPath, { withFileTypes: true }).
 */
export async function readDirEntries(dirPath: string, syncMax = SYNC_LIST_MAX): Promise<Dirent[]> {
  // A directory's size grows with its entries (ext4: ~25-30 bytes per entry; tmpfs 20; btrfs twice
  // the names): a small one is read in one readdir. opendir builds a Dir (it promisifies its
  // methods, ~11 µs) and hands entries over one at a time: a third of a 131-entry listing's readdir.
  if (syncMax >= SYNC_LIST_MAX && statSync(dirPath).size <= SMALL_DIR_BYTES) return readdirSync(dirPath, { withFileTypes: true });
  const dir = opendirSync(dirPath, { bufferSize: 128 });
  try {
    const out: Dirent[] = [];
    for (let e = dir.readSync(); e; e = dir.readSync()) {
      out.push(e);
      if (out.length >= syncMax) {
        for (let f = await dir.read(); f; f = await dir.read()) out.push(f);
        break;
      }
    }
    return out;
  } finally {
    dir.closeSync();
  }
}
