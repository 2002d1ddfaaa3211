import { closeSync, constants, fchmodSync, fchownSync, fdatasync, fstatSync, lstatSync, openSync, readlinkSync, renameSync, unlinkSync, writeSync, type Stats } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { ToolError, fromSystemError } from '../core/errors.js';
import { expectOf, judgeTarget, newFileMode, syncDirLater, tempName } from './atomic-write.js';
import { split, swapped } from './pinned-dir.js';

const HAS_PROC_FD = process.platform === 'linux';
const fdatasyncAsync = promisify(fdatasync);

/** New contents up to this size are staged with synchronous calls around the one asynchronous fdatasync. */
export const SYNC_WRITE_MAX = 256 * 1024;

/**
 * atomicWrite for a small file on Linux, with the same steps and checks — one pinned folder
 * (O_DIRECTORY|O_NOFOLLOW, verified through /proc/self/fd) for all of them instead of one per
 * step, the temp file created in it with O_EXCL|O_NOFOLLOW and its descriptor verified, the
 * owner's mode, fdatasync before the rename, the folder verified again and the target judged
 * (judgeTarget) just before the rename, the folder's fsync in the background — but only the
 * fdatasync leaves the event loop: the rest are metadata calls on one small file, each
 * cheaper than the thread-pool round trip the asynchronous path paid for it (about 17 per
 * edit). Returns null when this path does not apply (not Linux, or a bigger file).
 */
export async function atomicWriteSmall(target: string, display: string, data: Buffer, existing: Stats | null, allowHardlinks: boolean): Promise<Stats | null> {
  if (!HAS_PROC_FD || data.length > SYNC_WRITE_MAX) return null;
  const { dir, base } = split(target);
  let dfd: number;
  try {
    dfd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR' || code === 'ELOOP') throw swapped(display);
    throw fromSystemError(e, display);
  }
  const link = `/proc/self/fd/${dfd}`;
  const verify = () => {
    let actual = '';
    try { actual = readlinkSync(link); } catch { /* gone */ }
    if (actual !== dir) throw swapped(display);
  };
  const tmp = tempName(target);
  const tmpIn = `${link}/${path.basename(tmp)}`;
  const removeTmp = () => { try { unlinkSync(tmpIn); } catch { /* not there */ } };
  try {
    verify();
    let fd: number;
    try {
      fd = openSync(tmpIn, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    } catch (e) {
      throw fromSystemError(e, display);
    }
    let stat: Stats;
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) !== tmp) {
        throw new ToolError('PathTraversalBlocked', `A directory on the way to ${display} was swapped while writing; refused.`);
      }
      for (let off = 0; off < data.length;) off += writeSync(fd, data, off, data.length - off);
      fchmodSync(fd, existing ? existing.mode & 0o7777 : 0o666 & newFileMode());
      if (existing && (existing.uid !== process.getuid?.() || existing.gid !== process.getgid?.())) {
        try { fchownSync(fd, existing.uid, existing.gid); } catch { /* only root may give a file away; keep going */ }
      }
      await fdatasyncAsync(fd); // the content (and size) reach the disk before the rename can
      stat = fstatSync(fd);
    } catch (e) {
      try { closeSync(fd); } catch { /* closing anyway */ }
      removeTmp();
      throw e instanceof ToolError ? e : fromSystemError(e, display);
    }
    closeSync(fd);
    try {
      // The last check before the rename, as checkTarget: the folder is still the real one, the
      // target still what was read (through the pinned folder: a swapped parent cannot redirect it).
      verify();
      judgeTarget(lstatSync(`${link}/${base}`, { throwIfNoEntry: false }) ?? null, display, expectOf(existing), allowHardlinks);
      renameSync(tmpIn, `${link}/${base}`);
    } catch (e) {
      removeTmp();
      throw e instanceof ToolError ? e : fromSystemError(e, display);
    }
    syncDirLater(dir);
    return stat;
  } finally {
    closeSync(dfd);
  }
}
