import { lineAt } from './text.js';

export interface NearMatch {
  kind: 'line_endings' | 'whitespace' | 'case' | 'quotes' | 'partial' | 'none';
  /** 1-based line in the file where the near-match starts. */
  line?: number;
  /** What the file has and what old_string has where they first differ. */
  file_has?: string;
  old_string_has?: string;
  hint: string;
  /** Set when the line-by-line searches (whitespace, quotes) were skipped: file lines × old_string lines was too large. */
  skipped?: 'size';
}

/**
 * The line-block searches compare old_string with every place in the file: up to
 * file lines × old_string lines comparisons. Above this they are skipped (a few repeated
 * lines would otherwise hold the event loop for seconds); the cheaper checks still run.
 */
export const MAX_LINE_WORK = 10_000_000;
/** Characters the per-line indexOf fallback may scan in total. */
const MAX_SCAN = 50_000_000;

const clip = (s: string, n = 160) => (s.length > n ? `${s.slice(0, n)}…` : s);
const show = (s: string) => JSON.stringify(clip(s));
const squash = (s: string) => s.trim().replace(/\s+/g, ' ');
const QUOTES: Record<string, string> = { '\u2018': "'", '\u2019': "'", '\u201c': '"', '\u201d': '"', '\u2013': '-', '\u2014': '-', '\u00a0': ' ' };
const plainQuotes = (s: string) => s.replace(/[\u2018\u2019\u201c\u201d\u2013\u2014\u00a0]/g, (c) => QUOTES[c]!);

function describeWhitespace(fileLine: string, oldLine: string): string {
  const lead = (s: string) => s.match(/^[ \t]*/)![0];
  const name = (ws: string) => ws === '' ? 'no indentation' : ws.includes('\t') && ws.includes(' ') ? `mixed tabs/spaces (${show(ws)})` : ws.includes('\t') ? `${ws.length} tab(s)` : `${ws.length} space(s)`;
  if (lead(fileLine) !== lead(oldLine)) return `the file indents it with ${name(lead(fileLine))}, old_string with ${name(lead(oldLine))}`;
  if (fileLine.trimEnd() === oldLine.trimEnd()) return 'trailing whitespace differs';
  return 'spacing inside the line differs';
}

/** Lines of old_string without the empty lines at its ends (a stray newline should not hide a match). */
function coreLines(old: string): string[] {
  const lines = old.split('\n');
  while (lines.length > 1 && lines[lines.length - 1]!.trim() === '') lines.pop();
  while (lines.length > 1 && lines[0]!.trim() === '') lines.shift();
  return lines;
}

function findLineBlock(fileLines: string[], oldLines: string[], norm: (s: string) => string): number {
  const want = oldLines.map(norm);
  const have = fileLines.map(norm);
  outer: for (let i = 0; i + want.length <= have.length; i++) {
    for (let k = 0; k < want.length; k++) if (have[i + k] !== want[k]) continue outer;
    return i;
  }
  return -1;
}

/** Longest prefix of `old` that occurs in `text` (occurrence is monotone in the length, so bisect). */
function longestPrefix(text: string, old: string): { len: number; at: number } {
  let lo = 0;
  let hi = old.length;
  let at = -1;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    const i = text.indexOf(old.slice(0, mid));
    if (i >= 0) { lo = mid; at = i; } else hi = mid - 1;
  }
  return { len: lo, at: lo === 0 ? -1 : at >= 0 ? at : text.indexOf(old.slice(0, lo)) };
}

/** Why old_string was not found, and where the closest thing to it is. */
export function explainNoMatch(text: string, old: string): NearMatch {
  // Line endings (a file with mixed endings is matched as it is).
  for (const variant of [old.replace(/\r?\n/g, '\r\n'), old.replace(/\r\n/g, '\n')]) {
    const i = variant !== old ? text.indexOf(variant) : -1;
    if (i >= 0) return { kind: 'line_endings', line: lineAt(text, i), hint: `old_string matches at line ${lineAt(text, i)} except for line endings (the file uses ${variant.includes('\r\n') ? 'CRLF' : 'LF'} there).` };
  }
  const fileLines = text.split('\n').map((l) => l.replace(/\r$/, ''));
  const oldLines = coreLines(old.replace(/\r\n/g, '\n'));
  const big = fileLines.length * oldLines.length > MAX_LINE_WORK;
  const result = explainLines(text, old, fileLines, oldLines, big);
  if (!big) return result;
  return {
    ...result, skipped: 'size',
    hint: `${result.hint} (The whitespace and quote near-match search was skipped for size: ${fileLines.length} file lines × ${oldLines.length} old_string lines is too much to compare; use a shorter old_string.)`,
  };
}

function explainLines(text: string, old: string, fileLines: string[], oldLines: string[], big: boolean): NearMatch {
  const ws = big ? -1 : findLineBlock(fileLines, oldLines, squash);
  if (ws >= 0) {
    const k = oldLines.findIndex((l, j) => l !== fileLines[ws + j]);
    const at = k < 0 ? 0 : k;
    return {
      kind: 'whitespace', line: ws + 1 + at, file_has: clip(fileLines[ws + at]!), old_string_has: clip(oldLines[at]!),
      hint: `old_string matches lines ${ws + 1}-${ws + oldLines.length} except for whitespace: at line ${ws + 1 + at} ${describeWhitespace(fileLines[ws + at]!, oldLines[at]!)}. Copy the lines exactly as read_file shows them.`,
    };
  }
  const ci = text.toLowerCase().indexOf(old.toLowerCase());
  if (ci >= 0) return { kind: 'case', line: lineAt(text, ci), file_has: clip(text.slice(ci, ci + old.length)), old_string_has: clip(old), hint: `old_string matches at line ${lineAt(text, ci)} except for upper/lower case.` };
  const q = big ? -1 : findLineBlock(fileLines, oldLines, (s) => squash(plainQuotes(s)));
  if (q >= 0) return { kind: 'quotes', line: q + 1, hint: `old_string matches lines ${q + 1}-${q + oldLines.length} except for quote or dash characters (curly vs straight quotes, en/em dashes, non-breaking spaces).` };

  const pre = longestPrefix(text, old);
  if (pre.len >= Math.min(12, old.length) && pre.at >= 0) {
    const divergeAt = pre.at + pre.len;
    const line = lineAt(text, divergeAt);
    const fileRest = text.slice(text.lastIndexOf('\n', divergeAt - 1) + 1).split('\n')[0]!.replace(/\r$/, '');
    const oldRest = old.slice(old.lastIndexOf('\n', pre.len - 1) + 1).split('\n')[0]!.replace(/\r$/, '');
    return {
      kind: 'partial', line, file_has: clip(fileRest), old_string_has: clip(oldRest),
      hint: `The start of old_string matches at line ${lineAt(text, pre.at)}, but at line ${line} the file has ${show(fileRest)} where old_string has ${show(oldRest)}. Read the file again and copy the text exactly.`,
    };
  }
  for (let j = 0, scanned = 0; j < oldLines.length && scanned < MAX_SCAN; j++) {
    const l = oldLines[j]!.trim();
    if (l.length < 6) continue;
    scanned += text.length;
    const i = text.indexOf(l);
    if (i >= 0) {
      return { kind: 'partial', line: lineAt(text, i), file_has: clip(fileLines[lineAt(text, i) - 1]!), old_string_has: clip(oldLines[j]!),
        hint: `Line ${j + 1} of old_string appears at line ${lineAt(text, i)} of the file, but the text around it differs. Read the file again and copy the text exactly.` };
    }
  }
  return { kind: 'none', hint: 'Nothing like old_string is in the file. Read the file again (it may have changed) and copy the text exactly.' };
}
