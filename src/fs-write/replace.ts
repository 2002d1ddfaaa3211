import { ToolError } from '../core/errors.js';
import { explainNoMatch } from './near-match.js';
import { linesAt, toCrlf, toLf, type TextFile } from './text.js';

/** Longest old_string / new_string the edit tools accept (characters): bounds the work one call can ask for. */
export const MAX_EDIT_STRING = 1024 * 1024;

export interface EditSpec {
  old_string: string;
  new_string: string;
  replace_all?: boolean;
}

export interface EditOutcome {
  /** How many places were replaced. */
  replacements: number;
  /** 1-based lines (in the text as this edit saw it) where each replacement starts. */
  lines: number[];
}

/** Index of the first range whose end is after `pos` (ranges sorted, disjoint); length when none. */
function firstEndAfter(ranges: Array<[number, number]>, pos: number): number {
  let lo = 0;
  let hi = ranges.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ranges[mid]![1] > pos) hi = mid; else lo = mid + 1;
  }
  return lo;
}

/** How many of the sorted positions are <= limit. */
function countAtOrBefore(sorted: number[], limit: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! <= limit) lo = mid + 1; else hi = mid;
  }
  return lo;
}

/** Merges two lists of disjoint ranges, each sorted by start. */
function mergeSorted(a: Array<[number, number]>, b: Array<[number, number]>): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) out.push(j >= b.length || (i < a.length && a[i]![0] <= b[j]![0]) ? a[i++]! : b[j++]!);
  return out;
}

function findAll(text: string, needle: string): number[] {
  const out: number[] = [];
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length)) out.push(i);
  return out;
}

/**
 * Applies edits in order to the in-memory text. A CRLF file is edited in LF form (so an
 * old_string written with \n matches) and put back as CRLF; an LF file gets LF whatever the
 * arguments used. An edit may not touch text an earlier edit produced (overlap → refused).
 * Throws before anything is written; the caller writes the result once.
 */
export function applyEdits(file: TextFile, edits: EditSpec[], display: string): { text: string; outcomes: EditOutcome[] } {
  const crlf = file.eol === 'crlf';
  const normalise = crlf || file.eol === 'lf' || (file.eol === 'none' && !file.text.includes('\r'));
  let work = crlf ? toLf(file.text) : file.text;
  /** Ranges of `work` written by earlier edits, sorted by start (disjoint). */
  let produced: Array<[number, number]> = [];
  const outcomes: EditOutcome[] = [];
  const multi = edits.length > 1;

  edits.forEach((e, idx) => {
    const which = multi ? `edit ${idx + 1}: ` : '';
    const where = multi ? { edit_index: idx } : {};
    const oldS = normalise ? toLf(e.old_string) : e.old_string;
    const newS = normalise ? toLf(e.new_string) : e.new_string;
    if (oldS === '') throw new ToolError('InvalidArguments', `${which}old_string is empty; give the exact text to replace (use write_file to create or overwrite a whole file).`, { details: where });
    if (oldS === newS) throw new ToolError('InvalidArguments', `${which}old_string and new_string are the same; nothing would change.`, { details: where });
    const at = findAll(work, oldS);
    if (at.length === 0) {
      const near = explainNoMatch(work, oldS);
      throw new ToolError('NoMatch', `${which}old_string was not found in ${display}. ${near.hint}`, { details: { path: display, ...where, closest: near } });
    }
    const lines = linesAt(work, at);
    if (at.length > 1 && !e.replace_all) {
      const shown = lines.slice(0, 20).join(', ') + (lines.length > 20 ? ', …' : '');
      throw new ToolError('AmbiguousMatch', `${which}old_string matches ${at.length} places in ${display} (lines ${shown}); add surrounding lines to make it unique or set replace_all.`,
        { details: { path: display, ...where, count: at.length, lines } });
    }
    for (const pos of at) {
      // produced is sorted and disjoint, so its ends are sorted too: the first range ending after pos is the only candidate.
      const hit = produced[firstEndAfter(produced, pos)];
      if (hit && hit[0] < pos + oldS.length) {
        throw new ToolError('InvalidArguments', `${which}old_string overlaps text that an earlier edit wrote (line ${lines[at.indexOf(pos)]}); merge the overlapping edits into one.`,
          { details: { path: display, ...where, overlaps: true } });
      }
    }
    // Build the new text and move the recorded ranges along.
    const delta = newS.length - oldS.length;
    const parts: string[] = [];
    let last = 0;
    const mine: Array<[number, number]> = [];
    at.forEach((pos, k) => {
      parts.push(work.slice(last, pos), newS);
      last = pos + oldS.length;
      const start = pos + k * delta;
      mine.push([start, start + newS.length]);
    });
    parts.push(work.slice(last));
    const shifted = produced.map(([s, end]) => {
      const before = countAtOrBefore(at, s - oldS.length);
      return [s + before * delta, end + before * delta] as [number, number];
    });
    produced = mergeSorted(shifted, mine);
    work = parts.join('');
    outcomes.push({ replacements: at.length, lines });
  });
  return { text: crlf ? toCrlf(work) : work, outcomes };
}
