import { closeSync, fsyncSync, lstatSync, mkdirSync, openSync, renameSync, unlinkSync, writeSync, chmodSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

/**
 * A directory only this user can open (0700, owned by us, not a symlink). Created when missing;
 * a folder with wider permissions is narrowed; one owned by someone else is refused.
 */
export function ensurePrivateDir(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  if (!st.isDirectory() || st.isSymbolicLink()) throw new Error(`${dir} is not a directory`);
  const uid = typeof process.getuid === 'function' ? process.getuid() : st.uid;
  if (st.uid !== uid) throw new Error(`${dir} belongs to another user (uid ${st.uid}); refusing to use it`);
  if ((st.mode & 0o077) !== 0) chmodSync(dir, 0o700);
  return dir;
}

/**
 * Write a file atomically (temp file, fsync, rename) with 0600 permissions. `durable: false`
 * skips the fsync: for runtime files that describe this live process (they mean nothing
 * after a crash), where an fsync costs start-up 5–100 ms of disk wait.
 */
export function writePrivateFile(file: string, content: string, opts: { durable?: boolean } = {}): void {
  ensurePrivateDir(path.dirname(file));
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, content);
    if (opts.durable !== false) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(tmp, file);
  } catch (e) {
    try { unlinkSync(tmp); } catch { /* gone */ }
    throw e;
  }
}
