import type { StructuredPatchHunk } from 'diff';
import { ToolError } from '../../core/errors.js';

/** A text file as lines (each without its "\n"; a CRLF line keeps its "\r"), and whether it ends with a newline. */
export interface Lines {
  lines: string[];
  finalNewline: boolean;
}

export function toLines(text: string): Lines {
  if (text === '') return { lines: [], finalNewline: false };
  const lines = text.split('\n');
  const finalNewline = lines[lines.length - 1] === '';
  if (finalNewline) lines.pop();
  return { lines, finalNewline };
}

export function fromLines(l: Lines): string {
  return l.lines.join('\n') + (l.finalNewline && l.lines.length > 0 ? '\n' : '');
}

const noCr = (s: string) => (s.endsWith('\r') ? s.slice(0, -1) : s);
const clip = (s: string) => JSON.stringify(s.length > 120 ? `${s.slice(0, 120)}…` : s);

interface Side {
  old: string[];
  /** New lines; `keep[i]` = index into old when the line is context (the file's own line is kept). */
  neu: Array<{ text: string; ctx: number | null }>;
  oldNoEol: boolean;
  newNoEol: boolean;
}

function sides(h: StructuredPatchHunk): Side {
  const s: Side = { old: [], neu: [], oldNoEol: false, newNoEol: false };
  let last = ' ';
  for (const raw of h.lines) {
    const tag = raw[0] ?? ' ';
    const body = raw.slice(1);
    if (tag === '\\') {
      if (last === '-' || last === ' ') s.oldNoEol = true;
      if (last === '+' || last === ' ') s.newNoEol = true;
      continue;
    }
    last = tag;
    if (tag === ' ' || raw === '') { s.neu.push({ text: body, ctx: s.old.length }); s.old.push(body); }
    else if (tag === '-') s.old.push(body);
    else if (tag === '+') s.neu.push({ text: body, ctx: null });
  }
  return s;
}

/** How many line comparisons one apply_patch call may spend looking for where its hunks go. */
export const SEARCH_BUDGET = 4_000_000;

/** What is left of the search budget; shared by every file of one patch. */
export interface Budget {
  left: number;
}

function matchesAt(file: string[], pos: number, old: string[], budget: Budget): boolean {
  if (pos < 0 || pos + old.length > file.length) return false;
  for (let k = 0; k < old.length; k++) {
    if (noCr(file[pos + k]!) !== noCr(old[k]!)) {
      budget.left -= k + 1;
      return false;
    }
  }
  budget.left -= old.length;
  return true;
}

/**
 * Applies hunks in order. Each hunk must match exactly (no fuzzy content; a CR at a line's
 * end is ignored, so an LF patch applies to a CRLF file); its position may drift from the
 * header, searched nearest first, never before the previous hunk. Added lines take the
 * file's line ending. Throws PatchFailed naming the hunk and what the file has there.
 */
export function applyHunks(input: Lines, hunks: StructuredPatchHunk[], display: string, crlf: boolean, budget: Budget = { left: SEARCH_BUDGET }): { result: Lines; offsets: number[] } {
  const file = [...input.lines];
  let finalNewline = input.finalNewline;
  let shift = 0;
  let floor = 0;
  const offsets: number[] = [];
  hunks.forEach((h, i) => {
    const s = sides(h);
    const expected = Math.max(0, h.oldStart - 1 + shift);
    let pos = -1;
    if (s.old.length === 0) {
      pos = Math.min(Math.max(expected, floor), file.length);
    } else {
      for (let d = 0; pos < 0 && (expected - d >= floor || expected + d <= file.length - s.old.length); d++) {
        if (budget.left <= 0) {
          throw new ToolError('PatchFailed',
            `Hunk ${i + 1} of ${display} (@@ -${h.oldStart},${h.oldLines}) does not apply where its header says, and the search for it elsewhere was stopped after ${SEARCH_BUDGET} line comparisons (the file and the hunk are large and repetitive). Give the hunk's real line numbers, or split it into smaller hunks.`,
            { details: { path: display, hunk: i + 1, search_stopped: true } });
        }
        if (expected + d >= floor && matchesAt(file, expected + d, s.old, budget)) pos = expected + d;
        else if (d > 0 && expected - d >= floor && matchesAt(file, expected - d, s.old, budget)) pos = expected - d;
      }
    }
    if (pos < 0) {
      const at = Math.min(expected, Math.max(0, file.length - 1));
      let k = 0;
      while (k < s.old.length && noCr(file[at + k] ?? '') === noCr(s.old[k]!)) k++;
      const fileHas = at + k < file.length ? clip(noCr(file[at + k]!)) : 'the end of the file';
      throw new ToolError('PatchFailed',
        `Hunk ${i + 1} of ${display} (@@ -${h.oldStart},${h.oldLines}) does not apply: its lines are not in the file${input.lines.length ? '' : ' (the file is empty)'}. Near line ${at + k + 1} the patch expects ${clip(s.old[k] ?? '')} but the file has ${fileHas}. Read the file again and rebuild the hunk from its current text.`,
        { details: { path: display, hunk: i + 1, expected_line: at + k + 1, patch_has: s.old[k] ?? null, file_has: file[at + k] === undefined ? null : noCr(file[at + k]!) } });
    }
    const kept = file.slice(pos, pos + s.old.length);
    const eol = crlf ? '\r' : '';
    const replacement = s.neu.map((n) => (n.ctx !== null ? kept[n.ctx]! : noCr(n.text) + eol));
    const reachesEnd = pos + s.old.length === file.length;
    file.splice(pos, s.old.length, ...replacement);
    if (reachesEnd) finalNewline = !s.newNoEol;
    offsets.push(pos - (h.oldStart - 1 + shift));
    shift += s.neu.length - s.old.length + (pos - expected);
    floor = pos + replacement.length;
  });
  return { result: { lines: file, finalNewline: file.length > 0 ? finalNewline : false }, offsets };
}
