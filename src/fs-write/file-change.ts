import { lstat } from 'node:fs/promises';
import { z } from 'zod';
import { ToolError } from '../core/errors.js';
import { sha256 } from '../core/output.js';
import type { Plan, PlanContext, ResolvedPath, ToolContext, ToolResult } from '../core/types.js';
import { atomicWrite } from './atomic-write.js';
import { SYNC_WRITE_MAX } from './atomic-write-small.js';
import { readCurrent, type Current } from './current.js';
import { unifiedDiff } from './diff.js';
import { checkFresh, expectedButMissing, normaliseSha, readRequired, replayArgs } from './freshness.js';
import { createParents, parentExists } from './mkdirs.js';
import { withPathLocks } from './path-lock.js';
import { boundedDiff, changeFields } from './result.js';
import { toLf, tryDecodeText, type TextFile } from './text.js';

/** Arguments every single-file change shares. */
export interface FileChangeArgs {
  path: string;
  dry_run?: boolean;
  expected_sha256?: string;
  create_dirs?: boolean;
}

export const fileChangeFields = {
  path: z.string().describe('Workspace-relative path of the file.'),
  created: z.boolean().describe('True when the file did not exist before.'),
  sha256: z.string().describe('SHA-256 of the file after the change (what it would be, on dry_run).'),
  sha256_before: z.string().nullable(),
  size: z.number().int().describe('Size in bytes after the change.'),
  mtime_ms: z.number().nullable().describe('Modification time after the write (null on dry_run).'),
  line_endings: z.enum(['lf', 'crlf', 'mixed', 'none']),
  ...changeFields,
};

export interface FileChangeData {
  path: string;
  created: boolean;
  sha256: string;
  sha256_before: string | null;
  size: number;
  mtime_ms: number | null;
  line_endings: 'lf' | 'crlf' | 'mixed' | 'none';
  diff: string;
  diff_truncated: boolean;
  files_changed: string[];
  dry_run: boolean;
  added_lines: number;
  removed_lines: number;
}

/** Turns what is on disk (null: a new file) into the new bytes, or throws a ToolError. */
export type Transform<X> = (current: Current | null) => {
  buf: Buffer;
  extra: X;
  lineEndings: TextFile['eol'];
  /** The decoded old and new text when the transform has them (saves decoding a large file again for the diff). */
  before?: TextFile | null;
  after?: TextFile | null;
};

export interface SingleFileOptions {
  verb: string;
  /** write_file may create; the edit tools need an existing file. */
  mayCreate: boolean;
  /** write_file append: adds to what is there without replacing it, so no prior read is needed (expected_sha256 still checked). */
  readNotRequired?: boolean;
  /**
   * write_file: a file that already holds exactly the new content needs no prior read (nothing
   * unseen can be overwritten), so the same write repeated in a new session — a stored
   * allow_always grant after a restart — succeeds with "nothing written".
   */
  sameContentNeedsNoRead?: boolean;
}

/**
 * Plan of a one-file change: the path admitted for writing (or creating), read-before-write
 * checked early, and — when this session has read the file, so nothing new is revealed — the
 * change tried in memory, so the user is never asked to approve a change that cannot apply.
 */
export async function planFileChange<A extends FileChangeArgs>(args: A, ctx: PlanContext, opts: SingleFileOptions, tryIt?: Transform<unknown>): Promise<Plan> {
  const rp = await ctx.workspace.resolve(args.path, 'write');
  if (rp.kind === 'dir') throw new ToolError('InvalidArguments', `${rp.display} is a directory; give a file path.`);
  if (!rp.exists) {
    if (args.expected_sha256 !== undefined) throw expectedButMissing(rp, normaliseSha(args.expected_sha256)!);
    if (!opts.mayCreate) throw new ToolError('NotFound', `${rp.display} does not exist; use write_file to create a new file.`, { details: { path: rp.display } });
    if (!args.create_dirs && !(await parentExists(rp))) {
      throw new ToolError('NotFound', `The directory of ${rp.display} does not exist; pass create_dirs: true to create it.`, { details: { path: rp.display } });
    }
  } else if (args.expected_sha256 === undefined && !opts.readNotRequired) {
    const unread = !ctx.session.reads.has(rp.abs);
    if (unread && !(opts.sameContentNeedsNoRead && tryIt)) throw readRequired(rp);
    const current = await readCurrent(rp, ctx.workspace, ctx.policy.data.limits.max_file_bytes);
    // Freshness first: a stale read is named as such, whatever the transform would say.
    if (!unread) checkFresh(rp, current, ctx.session);
    const outcome = tryIt?.(current);
    if (unread && !(current && outcome?.buf.equals(current.buf))) throw readRequired(rp);
    const plan: Plan = {
      targets: [{ kind: 'path', access: 'write', path: rp }],
      summary: `${opts.verb} ${rp.display}${args.dry_run ? ' (dry run: nothing is written)' : ''}`,
      replay_args: replayArgs(args, rp, ctx.session) as Record<string, unknown> | undefined,
    };
    if (current) planned.set(plan, { current, outcome });
    return plan;
  }
  return {
    targets: [{ kind: 'path', access: rp.exists ? 'write' : 'create', path: rp }],
    summary: `${opts.verb} ${rp.display}${rp.exists ? '' : ' (new file)'}${args.dry_run ? ' (dry run: nothing is written)' : ''}`,
    replay_args: replayArgs(args, rp, ctx.session) as Record<string, unknown> | undefined,
  };
}

/**
 * What plan() read and worked out, for execute() to reuse when the file is provably the same
 * (same inode, size, mtime and ctime — ctime also moves on a new hard link or chmod). Keyed
 * by the plan object, so it lives exactly as long as the call.
 */
const planned = new WeakMap<Plan, { current: Current; outcome: ReturnType<Transform<unknown>> | undefined }>();

async function currentFor(plan: Plan, rp: ResolvedPath, ws: ToolContext['workspace'], max: number) {
  const pre = planned.get(plan);
  if (pre) {
    const st = await lstat(rp.abs).catch(() => null);
    const was = pre.current.stat;
    if (st && st.isFile() && st.dev === was.dev && st.ino === was.ino && st.size === was.size && st.mtimeMs === was.mtimeMs && st.ctimeMs === was.ctimeMs) {
      return { current: pre.current, outcome: pre.outcome };
    }
  }
  return { current: await readCurrent(rp, ws, max), outcome: undefined };
}

export function pathOf(plan: Plan): ResolvedPath {
  const t = plan.targets[0];
  if (!t || t.kind !== 'path') throw new ToolError('Internal', 'plan has no path target');
  return t.path;
}

/** The change itself: under the file's lock, read, check fresh, transform, diff, write atomically, record. */
export async function executeFileChange<A extends FileChangeArgs, X>(args: A, plan: Plan, ctx: ToolContext, transform: Transform<X>,
  opts: Pick<SingleFileOptions, 'readNotRequired' | 'sameContentNeedsNoRead'> = {}): Promise<ToolResult<FileChangeData & X>> {
  let rp = pathOf(plan);
  const ws = ctx.workspace;
  const max = ctx.policy.data.limits.max_file_bytes;
  return withPathLocks([rp.abs], async () => {
    const { current, outcome } = await currentFor(plan, rp, ws, max);
    if (rp.exists && !current) throw new ToolError('NotFound', `${rp.display} was deleted since the call was planned; nothing was written.`, { details: { path: rp.display } });
    const unread = opts.readNotRequired && args.expected_sha256 === undefined;
    // What the caller knew of the file before: only then is the result recorded as read.
    const knew = !current || !unread || ctx.session.reads.get(rp.abs)?.sha256 === current.sha256;
    // Freshness before the transform (a stale read is StaleRead, not NoMatch), except for a write
    // the session never read, which passes only when it would leave the file as it is.
    const unseenSame = !!opts.sameContentNeedsNoRead && !!current && args.expected_sha256 === undefined
      && !ctx.session.reads.has(rp.abs);
    if (!unread && !unseenSame) checkFresh(rp, current, ctx.session, args.expected_sha256);
    const t = (outcome as ReturnType<Transform<X>> | undefined) ?? transform(current);
    if (unseenSame && !current.buf.equals(t.buf)) checkFresh(rp, current, ctx.session, args.expected_sha256);
    const { buf, extra, lineEndings } = t;
    if (buf.length > max) {
      throw new ToolError('FileTooLarge', `The new content of ${rp.display} is ${buf.length} bytes, over the ${max}-byte limit (limits.max_file_bytes).`);
    }
    const before = t.before !== undefined ? t.before : current ? tryDecodeText(current.buf) : null;
    const after = t.after !== undefined ? t.after : tryDecodeText(buf);
    const bothCrlf = before?.eol === 'crlf' && after?.eol === 'crlf';
    const unchanged = !!current && current.buf.equals(buf);
    const writes = !args.dry_run && !unchanged;
    if (writes && !current && args.create_dirs) rp = (await createParents(rp, ws)).rp;
    // A small write starts first: the diff and the hash are worked out while its fdatasync waits
    // on the disk. A big one waits for them (both at once raised the peak memory of a 5 MB edit).
    const startWrite = () => atomicWrite(rp.abs, rp.display, buf, current?.stat ?? null, ws.rules.allowHardlinks);
    let writing = writes && buf.length <= SYNC_WRITE_MAX ? startWrite() : null;
    writing?.catch(() => {}); // awaited below; not an unhandled rejection meanwhile
    const { diff, stats } = unchanged ? { diff: '', stats: { added: 0, removed: 0 } } : unifiedDiff([{
      from: current ? rp.display : null, to: rp.display,
      oldText: before ? (bothCrlf ? toLf(before.text) : before.text) : null,
      newText: after ? (bothCrlf ? toLf(after.text) : after.text) : null,
      binary: (!!current && !before) || !after,
    }]);
    const newSha = sha256(buf);
    let mtime: number | null = null;
    if (writes) {
      const st = await (writing ??= startWrite());
      mtime = st.mtimeMs;
      if (knew) ctx.session.recordRead(rp.abs, { size: buf.length, mtime_ms: st.mtimeMs, sha256: newSha });
    } else if (unchanged) {
      mtime = current!.stat.mtimeMs;
    }
    const bd = await boundedDiff(diff, ctx);
    const changed = !args.dry_run && !unchanged ? [rp.display] : [];
    const data = {
      path: rp.display, created: !current, sha256: newSha, sha256_before: current?.sha256 ?? null, size: buf.length, mtime_ms: mtime,
      line_endings: lineEndings, diff: bd.diff, diff_truncated: bd.diff_truncated,
      files_changed: args.dry_run ? (unchanged ? [] : [rp.display]) : changed, dry_run: !!args.dry_run,
      added_lines: stats.added, removed_lines: stats.removed, ...extra,
    };
    const what = unchanged ? `${rp.display} already has this content; nothing written.`
      : `${args.dry_run ? 'Dry run: would change' : current ? 'Changed' : 'Created'} ${rp.display} (+${stats.added} -${stats.removed} lines).`;
    return {
      data, text: what, files_changed: changed,
      hashes: changed.length ? { [rp.display]: newSha } : {},
      ...(bd.storage_ref ? { storage_ref: bd.storage_ref, sha256: bd.sha256 } : {}),
      stats: { bytes: buf.length },
    };
  });
}
