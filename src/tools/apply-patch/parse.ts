import { parsePatch, type StructuredPatch, type StructuredPatchHunk } from 'diff';
import { ToolError } from '../../core/errors.js';

export type PatchOp = 'add' | 'modify' | 'delete' | 'rename';

/** One file's part of a patch, with the names as the workspace knows them. */
export interface FilePatch {
  op: PatchOp;
  /** Path before (null for add). */
  from: string | null;
  /** Path after (null for delete). */
  to: string | null;
  hunks: StructuredPatchHunk[];
  /** Git file mode of a new file ("100755" → executable), when given. */
  newMode?: string;
}

const DEV_NULL = '/dev/null';

function failed(message: string, details: Record<string, unknown> = {}): ToolError {
  return new ToolError('PatchFailed', message, { details });
}

/** Drops the a/ and b/ prefixes git (and most tools) put on names. */
function names(p: StructuredPatch): { from: string | null; to: string | null } {
  let from = p.oldFileName === DEV_NULL ? null : p.oldFileName ?? null;
  let to = p.newFileName === DEV_NULL ? null : p.newFileName ?? null;
  const prefixed = (from === null || from.startsWith('a/')) && (to === null || to.startsWith('b/')) && (from !== null || to !== null);
  if (p.isGit || prefixed) {
    if (from?.startsWith('a/')) from = from.slice(2);
    if (to?.startsWith('b/')) to = to.slice(2);
  }
  return { from, to };
}

/**
 * Parses a unified diff (plain or git style, several files) into one entry per file.
 * Hunk line counts must agree with their headers; anything unclear is PatchFailed before
 * a single path is resolved.
 */
export function parseFilePatches(text: string): FilePatch[] {
  let parsed: StructuredPatch[];
  try {
    parsed = parsePatch(text);
  } catch (e) {
    throw failed(`The patch cannot be parsed: ${(e as Error).message}. Give a unified diff with ---/+++ headers and @@ hunk headers whose line counts match.`);
  }
  const out: FilePatch[] = [];
  for (const p of parsed) {
    if (p.oldFileName === undefined && p.newFileName === undefined) {
      if (p.hunks.length === 0) continue; // text around the diff
      throw failed('A hunk has no ---/+++ file header; say which file it is for.');
    }
    if (p.isBinary) throw failed(`The patch changes a binary file (${p.newFileName ?? p.oldFileName}); apply_patch handles text only.`);
    if (p.isCopy) throw failed(`The patch copies a file (${p.newFileName}); write the copy as an added file instead.`);
    const { from, to } = names(p);
    if (from === null && to === null) throw failed('A file section has /dev/null on both sides.');
    const op: PatchOp = p.isCreate || from === null ? 'add'
      : p.isDelete || to === null ? 'delete'
      : p.isRename || from !== to ? 'rename' : 'modify';
    if (op === 'modify' && p.hunks.length === 0) continue; // mode-only change: nothing to do on content
    out.push({ op, from: op === 'add' ? null : from, to: op === 'delete' ? null : to ?? from, hunks: p.hunks, newMode: p.newMode });
  }
  if (out.length === 0) throw failed('The patch holds no file changes. Give a unified diff: "--- a/path", "+++ b/path", then "@@ -l,n +l,n @@" hunks.');
  return out;
}
