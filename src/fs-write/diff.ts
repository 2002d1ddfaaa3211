import { FILE_HEADERS_ONLY, formatPatch, structuredPatch, type StructuredPatch, type StructuredPatchHunk } from 'diff';

const CONTEXT = 3;
const BLOCK = 4096;
/** Beyond this many changed lines the minimal diff is not worth its cost (Myers is O(N·D)). */
const MAX_EDIT_LENGTH = 400;

/** Lines with their newline, so "a" at EOF and "a\n" differ. */
function splitKeep(text: string): string[] {
  const out = text.split(/(?<=\n)/);
  return out.length === 1 && out[0] === '' ? [] : out;
}

/**
 * One hunk replacing the whole changed block (all removed lines, then all added): valid and
 * applicable, only not minimal. Used when the changed region is too big to diff in good time.
 */
function blockHunk(oldWin: string, newWin: string, shift: number): StructuredPatchHunk {
  const a = splitKeep(oldWin);
  const b = splitKeep(newWin);
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const lines: string[] = [];
  const push = (tag: string, l: string) => {
    lines.push(tag + (l.endsWith('\n') ? l.slice(0, -1) : l));
    if (!l.endsWith('\n')) lines.push('\\ No newline at end of file');
  };
  for (const l of a.slice(0, pre)) push(' ', l);
  for (const l of a.slice(pre, a.length - suf)) push('-', l);
  for (const l of b.slice(pre, b.length - suf)) push('+', l);
  for (const l of a.slice(a.length - suf)) push(' ', l);
  return { oldStart: shift + 1, oldLines: a.length, newStart: shift + 1, newLines: b.length, lines };
}

export interface DiffStats {
  added: number;
  removed: number;
}

function countLinesBefore(text: string, end: number): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < end; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** Offset just after the n-th newline at or after `from` (or the end). */
function afterNewlines(text: string, from: number, n: number): number {
  let pos = from;
  for (let k = 0; k < n; k++) {
    const i = text.indexOf('\n', pos);
    if (i < 0) return text.length;
    pos = i + 1;
  }
  return pos;
}

/** Offset of the start of the line `n` lines above the line holding `at`. */
function linesBack(text: string, at: number, n: number): number {
  let start = at > 0 ? text.lastIndexOf('\n', at - 1) + 1 : 0;
  for (let k = 0; k < n && start > 0; k++) start = text.lastIndexOf('\n', start - 2) + 1;
  return start;
}

/**
 * The structured diff of two texts. Only the region between the common head and tail is
 * handed to the diff algorithm (with context around it), so a one-line edit of a 5 MB file
 * costs a string compare, not a diff of 5 MB.
 */
export function diffTexts(oldName: string, newName: string, oldText: string, newText: string): StructuredPatch {
  const min = Math.min(oldText.length, newText.length);
  // Whole blocks first (a native string compare), then character by character.
  let p = 0;
  while (p + BLOCK <= min && oldText.slice(p, p + BLOCK) === newText.slice(p, p + BLOCK)) p += BLOCK;
  while (p < min && oldText.charCodeAt(p) === newText.charCodeAt(p)) p++;
  if (p === oldText.length && p === newText.length) return { oldFileName: oldName, newFileName: newName, oldHeader: '', newHeader: '', hunks: [] };
  let s = 0;
  const oe = oldText.length;
  const ne = newText.length;
  while (s + BLOCK <= min - p && oldText.slice(oe - s - BLOCK, oe - s) === newText.slice(ne - s - BLOCK, ne - s)) s += BLOCK;
  while (s < min - p && oldText.charCodeAt(oe - 1 - s) === newText.charCodeAt(ne - 1 - s)) s++;
  const start = linesBack(oldText, p, CONTEXT);
  const endOld = afterNewlines(oldText, oldText.length - s, CONTEXT + 1);
  const endNew = endOld - oldText.length + newText.length;
  const shift = countLinesBefore(oldText, start);
  const oldWin = oldText.slice(start, endOld);
  const newWin = newText.slice(start, endNew);
  const patch = structuredPatch(oldName, newName, oldWin, newWin, '', '', { context: CONTEXT, maxEditLength: MAX_EDIT_LENGTH, timeout: 2000 });
  if (!patch) return { oldFileName: oldName, newFileName: newName, oldHeader: '', newHeader: '', hunks: [blockHunk(oldWin, newWin, shift)] };
  for (const h of patch.hunks) {
    h.oldStart += shift;
    h.newStart += shift;
  }
  return patch;
}

export function diffStats(patches: StructuredPatch[]): DiffStats {
  let added = 0;
  let removed = 0;
  for (const p of patches) for (const h of p.hunks) for (const l of h.lines) {
    if (l.startsWith('+')) added++;
    else if (l.startsWith('-')) removed++;
  }
  return { added, removed };
}

export function formatDiff(patches: StructuredPatch[]): string {
  const withHunks = patches.filter((p) => p.hunks.length > 0);
  if (withHunks.length === 0) return '';
  return formatPatch(withHunks, FILE_HEADERS_ONLY);
}

export interface FileChangeText {
  /** Display path before (null: the file is new). */
  from: string | null;
  /** Display path after (null: the file is deleted). */
  to: string | null;
  /** Old and new text; null for a side that is binary (or absent). */
  oldText: string | null;
  newText: string | null;
  binary?: boolean;
}

/** A unified diff (a/ b/ names, /dev/null for added and deleted files) of several file changes. */
export function unifiedDiff(changes: FileChangeText[]): { diff: string; stats: DiffStats } {
  const patches: StructuredPatch[] = [];
  const notes: string[] = [];
  for (const c of changes) {
    const a = c.from === null ? '/dev/null' : `a/${c.from}`;
    const b = c.to === null ? '/dev/null' : `b/${c.to}`;
    if (c.binary) {
      notes.push(`Binary files ${a} and ${b} differ\n`);
      continue;
    }
    const p = diffTexts(a, b, c.oldText ?? '', c.newText ?? '');
    if (p.hunks.length === 0 && c.from !== c.to) notes.push(`rename from ${c.from}\nrename to ${c.to}\n`);
    else patches.push(p);
  }
  return { diff: formatDiff(patches) + notes.join(''), stats: diffStats(patches) };
}
