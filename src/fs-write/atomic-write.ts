import { constants, type Stats } from 'node:fs';
import { lstat, open, readlink, rename, unlink } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { ToolError, fromSystemError } from '../core/errors.js';
import { inDir, split } from './pinned-dir.js';
import { atomicWriteSmall } from './atomic-write-small.js';

const HAS_PROC_FD = process.platform === 'linux';

/** A complete, fsynced copy of the new content beside its target, waiting to be renamed over it. */
export interface Staged {
  target: string;
  display: string;
  tmp: string;
  /** stat of the staged file: what the target will be after the rename (same inode, mtime, size). */
  stat: Stats;
}

/** What the target must still be just before the rename; null: it must not exist. */
export type Expect = { dev: number; ino: number; size: number; mtimeMs: number } | null;

/** Mode bits open(2) would let a new file have (the umask applied). */
export function newFileMode(): number {
  return 0o777 & ~process.umask();
}

export function tempName(target: string): string {
  const base = path.basename(target).slice(0, 80);
  return path.join(path.dirname(target), `.${base}.tg-${randomBytes(6).toString('hex')}.tmp`);
}

/**
 * Writes `data` to a new temporary file in the target's directory (O_EXCL, no following
 * links), with the existing file's mode (and owner, where allowed), and fsyncs it. The file is
 * created through the opened, verified directory (never by a path a swapped link could redirect).
 */
export async function stageFile(target: string, display: string, data: Buffer, existing: Stats | null, mode?: number): Promise<Staged> {
  const tmp = tempName(target);
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  const fh = await inDir(path.dirname(tmp), display, (d) => open(d.at(path.basename(tmp)), flags, 0o600).catch((e) => { throw fromSystemError(e, display); }));
  try {
    if (HAS_PROC_FD && (await readlink(`/proc/self/fd/${fh.fd}`)) !== tmp) {
      throw new ToolError('PathTraversalBlocked', `A directory on the way to ${display} was swapped while writing; refused.`);
    }
    await fh.writeFile(data);
    await fh.chmod(existing ? existing.mode & 0o7777 : (mode ?? 0o666) & newFileMode());
    if (existing && (existing.uid !== process.getuid?.() || existing.gid !== process.getgid?.())) {
      await fh.chown(existing.uid, existing.gid).catch(() => {}); // only root may give a file away; keep going
    }
    await fh.datasync(); // the content (and size) reach the disk before the rename can
    const stat = await fh.stat();
    await fh.close();
    return { target, display, tmp, stat };
  } catch (e) {
    await fh.close().catch(() => {});
    await removeIn(tmp);
    throw fromSystemError(e, display);
  }
}

/** Unlinks `abs` through its pinned directory; quietly does nothing when that fails. */
export async function removeIn(abs: string): Promise<void> {
  const { dir, base } = split(abs);
  await inDir(dir, base, (d) => unlink(d.at(base))).catch(() => {});
}

/** Renames within one pinned directory (`from` and `to` are in the same folder). */
export async function renameIn(from: string, to: string, display: string): Promise<void> {
  const { dir, base } = split(to);
  if (path.dirname(from) !== dir) throw new ToolError('Internal', `renameIn across directories: ${from} → ${to}`);
  await inDir(dir, display, (d) => rename(d.at(path.basename(from)), d.at(base)));
}

export async function discard(s: Staged): Promise<void> {
  await removeIn(s.tmp);
}

/**
 * The last check before the rename: the directory is still the real one, and the target is
 * still what was read — not a symlink swapped in, not a new hard link, not changed meanwhile.
 */
export async function checkTarget(target: string, display: string, expect: Expect, allowHardlinks: boolean): Promise<void> {
  const { dir, base } = split(target);
  // lstat through the opened, verified directory: a parent swapped for a link is refused there.
  const st: Stats | null = await inDir(dir, display, (d) => lstat(d.at(base)).catch((e) => {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw fromSystemError(e, display);
  }));
  judgeTarget(st, display, expect, allowHardlinks);
}

/** checkTarget's verdict on the target's lstat (null: missing); shared with the small-file path. */
export function judgeTarget(st: Stats | null, display: string, expect: Expect, allowHardlinks: boolean): void {
  if (st?.isSymbolicLink()) {
    throw new ToolError('PathTraversalBlocked', `${display} became a symbolic link while writing; toolgate never writes through a link. Nothing was changed.`);
  }
  if (st && !st.isFile()) {
    throw new ToolError('PathDenied', `${display} is no longer a regular file; nothing was changed.`);
  }
  if (expect === null && st) {
    throw new ToolError('StaleRead', `${display} was created by someone else while writing; read it with read_file and redo the change.`, { details: { path: display, changed: ['created'] } });
  }
  if (expect && !st) {
    throw new ToolError('StaleRead', `${display} was deleted while writing; nothing was changed.`, { details: { path: display, changed: ['deleted'] } });
  }
  if (expect && st) {
    if (st.dev !== expect.dev || st.ino !== expect.ino || st.size !== expect.size || st.mtimeMs !== expect.mtimeMs) {
      throw new ToolError('StaleRead', `${display} changed while the change was being written; read it again and redo the change.`, { details: { path: display, changed: ['mtime'] } });
    }
    if (st.nlink > 1 && !allowHardlinks) {
      throw new ToolError('PathDenied', `${display} has ${st.nlink} hard links; refused (set paths.allow_hardlinks to permit).`);
    }
  }
}

export function expectOf(st: Stats | null): Expect {
  return st ? { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs } : null;
}

/**
 * Renames the staged file over its target. The rename is atomic on its own; the fsync of the
 * directory that makes it survive a power cut runs in the background (it costs more than the
 * rest of a small edit, and a crash of the process cannot undo a rename the kernel has done).
 */
export async function commit(s: Staged): Promise<void> {
  try {
    await renameIn(s.tmp, s.target, s.display);
  } catch (e) {
    await discard(s);
    throw e instanceof ToolError ? e : fromSystemError(e, s.display);
  }
  syncDirLater(path.dirname(s.target));
}

export function syncDirLater(dir: string): void {
  void syncDir(dir);
}

export async function syncDir(dir: string): Promise<void> {
  let fh;
  try {
    fh = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
    await fh.sync();
  } catch {
    // Some file systems refuse fsync on a directory; the rename itself is still atomic.
  } finally {
    await fh?.close().catch(() => {});
  }
}

/** stage → check → rename, for one file. Returns the stat of the new file. */
export async function atomicWrite(target: string, display: string, data: Buffer, existing: Stats | null, allowHardlinks: boolean): Promise<Stats> {
  const small = await atomicWriteSmall(target, display, data, existing, allowHardlinks);
  if (small) return small;
  const s = await stageFile(target, display, data, existing);
  try {
    await checkTarget(target, display, expectOf(existing), allowHardlinks);
  } catch (e) {
    await discard(s);
    throw e;
  }
  await commit(s);
  return s.stat;
}
