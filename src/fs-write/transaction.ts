import type { Stats } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { unlink } from 'node:fs/promises';
import path from 'node:path';
import { ToolError, fromSystemError } from '../core/errors.js';
import { checkTarget, discard, expectOf, removeIn, renameIn, stageFile, syncDirLater, type Staged } from './atomic-write.js';
import { inDir, split } from './pinned-dir.js';

/** One step of a multi-file change. */
export type FileOp =
  | { kind: 'write'; abs: string; display: string; data: Buffer; existing: Stats | null; original: Buffer | null; mode?: number }
  | { kind: 'remove'; abs: string; display: string; existing: Stats };

export interface CommitOptions {
  allowHardlinks: boolean;
  /** Test seam: called before each rename of the commit phase (a throw simulates a failing rename). */
  beforeStep?: (index: number, op: FileOp) => void | Promise<void>;
}

type Done = { op: FileOp; trash?: string };

/**
 * All or nothing over several files. Every new content is first written and fsynced beside
 * its target, every target checked; only then are the renames done (a removed file is moved
 * aside, not unlinked, until the end). If a step fails, the steps already done are undone —
 * old content put back, new files removed, moved-aside files returned — before the error is
 * reported. A crash mid-commit leaves each file either old or new, never partial. Every
 * create, rename and unlink goes through the target's opened, verified directory
 * (pinned-dir.ts), so a folder swapped for a link meanwhile cannot redirect it outside.
 */
export async function commitAll(ops: FileOp[], opts: CommitOptions): Promise<Map<string, Stats>> {
  const staged = new Map<FileOp, Staged>();
  const written = new Map<string, Stats>();
  try {
    for (const op of ops) {
      if (op.kind === 'write') staged.set(op, await stageFile(op.abs, op.display, op.data, op.existing, op.mode));
    }
    for (const op of ops) await checkTarget(op.abs, op.display, expectOf(op.existing), opts.allowHardlinks);
  } catch (e) {
    for (const s of staged.values()) await discard(s);
    throw e;
  }

  const done: Done[] = [];
  const order = [...ops.filter((o) => o.kind === 'write'), ...ops.filter((o) => o.kind === 'remove')];
  try {
    for (let i = 0; i < order.length; i++) {
      const op = order[i]!;
      await opts.beforeStep?.(i, op);
      if (op.kind === 'write') {
        const s = staged.get(op)!;
        await renameIn(s.tmp, op.abs, op.display).catch((e) => { throw e instanceof ToolError ? e : fromSystemError(e, op.display); });
        staged.delete(op);
        written.set(op.abs, s.stat);
        done.push({ op });
      } else {
        const trash = path.join(path.dirname(op.abs), `.${path.basename(op.abs).slice(0, 80)}.tg-del-${randomBytes(6).toString('hex')}`);
        await renameIn(op.abs, trash, op.display).catch((e) => { throw e instanceof ToolError ? e : fromSystemError(e, op.display); });
        done.push({ op, trash });
      }
    }
  } catch (e) {
    for (const s of staged.values()) await discard(s);
    const stuck = await rollback(done);
    if (stuck.length) {
      throw new ToolError('IOError', `The change failed part way (${(e as Error).message}) and could not be fully undone: ${stuck.join(', ')} may hold the new content. Check them with read_file.`,
        { details: { left_changed: stuck }, cause: e });
    }
    if (e instanceof ToolError) throw new ToolError(e.code, `${e.message} Nothing was changed (the files already written were restored).`, { details: { ...e.details, rolled_back: true }, cause: e });
    throw e;
  }
  for (const d of done) if (d.trash) await removeIn(d.trash);
  for (const dir of new Set(ops.map((o) => path.dirname(o.abs)))) syncDirLater(dir);
  return written;
}

/** Undoes the steps done, newest first. Returns the files it could not restore. */
async function rollback(done: Done[]): Promise<string[]> {
  const stuck: string[] = [];
  for (const { op, trash } of [...done].reverse()) {
    try {
      if (op.kind === 'remove') await renameIn(trash!, op.abs, op.display);
      else if (op.original === null) {
        const { dir, base } = split(op.abs);
        await inDir(dir, op.display, (d) => unlink(d.at(base)));
      } else {
        const s = await stageFile(op.abs, op.display, op.original, op.existing);
        await renameIn(s.tmp, op.abs, op.display).catch(async (e) => { await discard(s); throw e; });
      }
    } catch {
      stuck.push(op.display);
    }
  }
  return stuck;
}
