import { ToolError } from '../../core/errors.js';
import { sha256 } from '../../core/output.js';
import type { ResolvedPath, ToolContext } from '../../core/types.js';
import { readCurrent, type Current } from '../../fs-write/current.js';
import { unifiedDiff, type DiffStats } from '../../fs-write/diff.js';
import { decodeText, encodeText, toLf } from '../../fs-write/text.js';
import type { FileOp } from '../../fs-write/transaction.js';
import { applyHunks, fromLines, SEARCH_BUDGET, toLines } from './apply-hunks.js';
import type { FilePatch, PatchOp } from './parse.js';

/** One file of a patch worked out in memory: what it will hold, and the steps that put it there. */
export interface StagedFile {
  op: PatchOp;
  /** The file as it is (modify, delete, rename source). */
  oldPath: ResolvedPath | null;
  /** The file created (add, rename target). */
  newPath: ResolvedPath | null;
  oldText: string | null;
  newText: string | null;
  sha256: string | null;
  hunks: number;
  offsets: number[];
  ops: FileOp[];
}

/** Pairs each file section with the paths its plan resolved (in the order plan() pushed them). */
function pathsFor(files: FilePatch[], paths: ResolvedPath[]): Array<{ fp: FilePatch; oldPath: ResolvedPath | null; newPath: ResolvedPath | null }> {
  let i = 0;
  return files.map((fp) => {
    const oldPath = fp.from !== null ? paths[i++]! : null;
    const newPath = fp.to !== null && fp.op !== 'modify' ? paths[i++]! : null;
    return { fp, oldPath, newPath };
  });
}

async function existing(rp: ResolvedPath, ctx: ToolContext): Promise<Current> {
  const cur = await readCurrent(rp, ctx.workspace, ctx.policy.data.limits.max_file_bytes);
  if (!cur) throw new ToolError('NotFound', `${rp.display} (named by the patch) does not exist any more.`, { details: { path: rp.display } });
  return cur;
}

async function mustBeAbsent(rp: ResolvedPath, ctx: ToolContext): Promise<void> {
  if (await readCurrent(rp, ctx.workspace, ctx.policy.data.limits.max_file_bytes).catch(() => ({}))) {
    throw new ToolError('AlreadyExists', `${rp.display} already exists; the patch would create it.`, { details: { path: rp.display } });
  }
}

/**
 * Applies every section in memory. Nothing touches the disk here, so a hunk that fails in
 * the second file leaves every file as it was.
 */
export async function stagePatch(files: FilePatch[], paths: ResolvedPath[], ctx: ToolContext): Promise<StagedFile[]> {
  const out: StagedFile[] = [];
  const budget = { left: SEARCH_BUDGET }; // one bound on the hunk search for the whole patch
  for (const { fp, oldPath, newPath } of pathsFor(files, paths)) {
    const display = (oldPath ?? newPath)!.display;
    let cur: Current | null = null;
    let oldText = '';
    let crlf = false;
    let bom = false;
    if (oldPath) {
      cur = await existing(oldPath, ctx);
      const tf = decodeText(cur.buf, oldPath.display);
      oldText = tf.text;
      crlf = tf.eol === 'crlf';
      bom = tf.bom;
    } else {
      crlf = fp.hunks.some((h) => h.lines.length > 0 && h.lines.every((l) => !l.startsWith('+') || l.endsWith('\r')));
    }
    if (newPath) await mustBeAbsent(newPath, ctx);
    const { result, offsets } = applyHunks(toLines(oldText), fp.hunks, display, crlf, budget);
    const newText = fromLines(result);
    const ops: FileOp[] = [];
    let hash: string | null = null;
    if (fp.op === 'delete') {
      if (newText !== '') {
        throw new ToolError('PatchFailed', `The patch deletes ${display} but does not remove all of its lines; the file has content the patch does not show. Read it again.`, { details: { path: display } });
      }
      ops.push({ kind: 'remove', abs: oldPath!.abs, display, existing: cur!.stat });
    } else {
      const data = encodeText(newText, bom);
      hash = sha256(data);
      const target = newPath ?? oldPath!;
      const mode = fp.op === 'rename' ? cur!.stat.mode & 0o7777 : fp.newMode === '100755' ? 0o777 : undefined;
      ops.push({ kind: 'write', abs: target.abs, display: target.display, data, existing: fp.op === 'modify' ? cur!.stat : null, original: fp.op === 'modify' ? cur!.buf : null, mode });
      if (fp.op === 'rename') ops.push({ kind: 'remove', abs: oldPath!.abs, display: oldPath!.display, existing: cur!.stat });
    }
    out.push({ op: fp.op, oldPath, newPath, oldText: oldPath ? oldText : null, newText: fp.op === 'delete' ? null : newText, sha256: hash, hunks: fp.hunks.length, offsets, ops });
  }
  return out;
}

export function diffOf(staged: StagedFile[]): { diff: string; stats: DiffStats } {
  return unifiedDiff(staged.map((s) => {
    const bothCrlf = s.oldText !== null && s.newText !== null && s.oldText.includes('\r\n') && s.newText.includes('\r\n');
    const norm = (t: string | null) => (t !== null && bothCrlf ? toLf(t) : t);
    return { from: s.oldPath?.display ?? null, to: s.op === 'delete' ? null : (s.newPath ?? s.oldPath)!.display, oldText: norm(s.oldText), newText: norm(s.newText) };
  }));
}
