import { reclaimAfterLargeFile } from '../core/reclaim.js';
import type { Stats } from 'node:fs';
import { ToolError, fromSystemError } from '../core/errors.js';
import { sha256 } from '../core/output.js';
import type { ResolvedPath } from '../core/types.js';
import { openFileForRead, readSmallFileSync, SYNC_READ_MAX } from '../workspace/safe-open.js';
import type { Workspace } from '../workspace/workspace.js';

/** A file's bytes as they are on disk now, read through the verified, no-follow open. */
export interface Current {
  buf: Buffer;
  stat: Stats;
  sha256: string;
}

/**
 * Reads what a change will replace. The safe open refuses a symlink at the target, a
 * swapped parent, FIFOs and hard-linked files (unless paths.allow_hardlinks), as read_file does.
 * Returns null when the file does not exist.
 */
export async function readCurrent(rp: ResolvedPath, ws: Workspace, maxBytes: number): Promise<Current | null> {
  let opened;
  try {
    // A small file in one synchronous step, with the same checks (see readSmallFileSync).
    const small = readSmallFileSync(rp, ws, Math.min(SYNC_READ_MAX, maxBytes));
    if (small) return { buf: small.bytes, stat: small.stat, sha256: sha256(small.bytes) };
    opened = await openFileForRead(rp, ws);
  } catch (e) {
    if ((e as ToolError).code === 'NotFound') return null;
    throw e;
  }
  const { fh, stat } = opened;
  try {
    if (stat.size > maxBytes) {
      throw new ToolError('FileTooLarge', `${rp.display} is ${stat.size} bytes, over the ${maxBytes}-byte limit (limits.max_file_bytes) for files the edit tools change.`,
        { details: { path: rp.display, size: stat.size, limit: maxBytes } });
    }
    const buf = await fh.readFile();
    reclaimAfterLargeFile(buf.length);
    return { buf, stat, sha256: sha256(buf) };
  } catch (e) {
    throw fromSystemError(e, rp.display);
  } finally {
    await fh.close().catch(() => {});
  }
}
