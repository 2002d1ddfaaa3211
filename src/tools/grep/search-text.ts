import type { JsPattern } from './regex.js';
import { BINARY_WINDOW, MAX_LINE_CHARS, type MatchRecord, type OutputMode } from './types.js';

/** Characters of a cut line shown before the match, so the match is seen with what leads to it. */
const LEAD_CHARS = 100;

/**
 * One line as results show it: no trailing CR, cut to MAX_LINE_CHARS (both engines). With
 * `at` (where the match starts in the line), a long line is cut AROUND the match — "…" marks
 * each side that was cut — so a match at character 5,000 of a minified line is shown.
 */
export function cutLine(s: string, at = 0): string {
  const t = s.charCodeAt(s.length - 1) === 13 ? s.slice(0, -1) : s;
  if (t.length <= MAX_LINE_CHARS) return t;
  let start = Math.max(0, Math.min(at - LEAD_CHARS, t.length - MAX_LINE_CHARS));
  // Never split a surrogate pair.
  if (start > 0 && /[\udc00-\udfff]/.test(t[start]!)) start--;
  let end = start + MAX_LINE_CHARS;
  if (end < t.length && /[\ud800-\udbff]/.test(t[end - 1]!)) end--;
  return `${start > 0 ? '…' : ''}${t.slice(start, end)}${end < t.length ? '…' : ''}`;
}

/** Whether `shown` is what cutLine makes of `line` for some match position (confirming a result against the file). */
export function showsLine(line: string, shown: string): boolean {
  const t = line.charCodeAt(line.length - 1) === 13 ? line.slice(0, -1) : line;
  if (t.length <= MAX_LINE_CHARS) return t === shown;
  const lead = shown.startsWith('…');
  const trail = shown.endsWith('…');
  const body = shown.slice(lead ? 1 : 0, trail ? -1 : undefined);
  if (body.length < MAX_LINE_CHARS - 1 || body.length > MAX_LINE_CHARS) return false;
  if (!lead) return t.startsWith(body);
  if (!trail) return t.endsWith(body);
  return t.includes(body);
}

/** The text of a match record: its lines, each cut (the one holding `at`, a character offset into raw, around it), without the final newline. */
export function recordText(raw: string, at = 0): string {
  const body = raw.endsWith('\n') ? raw.slice(0, -1) : raw;
  if (!body.includes('\n')) return cutLine(body, at);
  let offset = 0;
  return body.split('\n').map((line) => {
    const col = at >= offset && at <= offset + line.length ? at - offset : 0;
    offset += line.length + 1;
    return cutLine(line, col);
  }).join('\n');
}

/** Where the pattern first matches in one line (0 when unknown). */
function matchColumn(line: string, pat: JsPattern): number {
  if (pat.literal !== null) return Math.max(0, line.indexOf(pat.literal));
  pat.re.lastIndex = 0;
  const m = pat.re.exec(line);
  pat.re.lastIndex = 0;
  return m ? m.index : 0;
}

/**
 * Gives each record its context lines: up to `n` before and after, never crossing into the
 * previous or next record, and nothing shown twice. `lineAt` returns undefined past the end.
 */
export function attachContext(recs: MatchRecord[], n: number, lineAt: (line: number) => string | undefined): void {
  if (n <= 0) return;
  for (let i = 0; i < recs.length; i++) {
    const r = recs[i]!;
    // A line between two records is shown once: as the earlier record's after-context.
    const prevEnd = i > 0 ? recs[i - 1]!.end + recs[i - 1]!.after.length : 0;
    const nextStart = i + 1 < recs.length ? recs[i + 1]!.line : Number.POSITIVE_INFINITY;
    for (let l = Math.max(r.line - n, prevEnd + 1, 1); l < r.line; l++) {
      const t = lineAt(l);
      if (t !== undefined) r.before.push(t);
    }
    for (let l = r.end + 1; l <= r.end + n && l < nextStart; l++) {
      const t = lineAt(l);
      if (t === undefined) break;
      r.after.push(t);
    }
  }
}

/**
 * Bytes → text as ripgrep reads them: a UTF-8 BOM dropped, UTF-16 with a BOM transcoded,
 * null for a binary file (a NUL in the first 64 KB). A NUL further in ends the search there,
 * at a 64 KB boundary, roughly as ripgrep stops reading at the buffer that holds it.
 */
export function decodeForSearch(buf: Buffer): string | null {
  let text: string;
  if (buf.length >= 2 && ((buf[0] === 0xff && buf[1] === 0xfe) || (buf[0] === 0xfe && buf[1] === 0xff))) {
    const body = Buffer.from(buf.subarray(2, 2 + ((buf.length - 2) & ~1)));
    if (buf[0] === 0xfe) body.swap16();
    // As ripgrep's transcoder: a lone surrogate and an odd last byte become U+FFFD.
    text = body.toString('utf16le').replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\uFFFD');
    if ((buf.length - 2) % 2 === 1) text += '\uFFFD';
    const z = text.indexOf('\0');
    if (z >= 0 && z < BINARY_WINDOW / 2) return null;
    return z >= 0 ? text.slice(0, z) : text;
  }
  let b = buf;
  if (b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) b = b.subarray(3);
  const z = b.indexOf(0);
  if (z >= 0) {
    if (z < BINARY_WINDOW) return null;
    const cut = Math.floor(z / BINARY_WINDOW) * BINARY_WINDOW;
    b = b.subarray(0, b.lastIndexOf(10, cut - 1) + 1);
  }
  return b.toString('utf8');
}

export interface TextHits {
  records: MatchRecord[];
  count: number;
}

/**
 * The text's lines as split('\n') gives them, less a last empty one (after a final newline), as
 * offsets where each starts: 4 bytes a line, outside the JavaScript heap (an array of the lines
 * themselves cost ~24 bytes each: 500 MB for a 64 MB file of short lines, past a worker's heap).
 */
class Lines {
  readonly count: number;
  private readonly starts: Uint32Array;
  private readonly last: number;

  constructor(private readonly text: string) {
    let n = 0;
    for (let p = text.indexOf('\n'); p >= 0; p = text.indexOf('\n', p + 1)) n++;
    this.last = text.endsWith('\n') ? text.length - 1 : text.length;
    this.count = text.length === 0 ? 0 : text.endsWith('\n') ? n : n + 1;
    this.starts = new Uint32Array(this.count);
    let k = 0;
    for (let p = 0; k < this.count; p = text.indexOf('\n', p) + 1) this.starts[k++] = p;
  }

  /** Line `i` (0-based). */
  at(i: number): string {
    return this.text.slice(this.starts[i]!, i + 1 < this.count ? this.starts[i + 1]! - 1 : this.last);
  }

  /** The 1-based number of the line holding offset `off`. */
  lineOf(off: number): number {
    let lo = 0;
    let hi = this.count - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid]! <= off) lo = mid; else hi = mid - 1;
    }
    return lo + 1;
  }

  startOf(line: number): number {
    return this.starts[line - 1] ?? 0;
  }
}

/**
 * Searches one decoded file as ripgrep does: line by line (a match never crosses a newline)
 * unless multiline, where matches sharing a line are merged into one record. `mode` files
 * stops at the first match. Only content mode keeps records (at most `limit`: the engine's
 * collection cap, past which it says "at least"); names and counts only count, keeping no line
 * and no record — a 64 MB file of short matching lines made 32 million of each, and the
 * server ran out of memory.
 */
export function searchText(text: string, pat: JsPattern, multiline: boolean, mode: OutputMode, context: number, limit = Number.POSITIVE_INFINITY): TextHits | null {
  const re = pat.re;
  if (pat.literal !== null) {
    if (text.indexOf(pat.literal) < 0) return null;
  } else {
    re.lastIndex = 0;
    if (!re.test(text)) return null;
  }
  const records: MatchRecord[] = [];
  const wantText = mode === 'content';
  let count = 0;
  const lineMatches = (line: string) => (pat.literal !== null ? line.includes(pat.literal) : (re.lastIndex = 0, re.test(line)));
  if (!multiline && !wantText) {
    // The lines Lines gives, one at a time.
    for (let s = 0; s < text.length;) {
      let e = text.indexOf('\n', s);
      if (e < 0) e = text.length;
      if (lineMatches(text.slice(s, e))) {
        count++;
        if (mode === 'files_with_matches') break;
      }
      s = e + 1;
    }
    return count ? { records: [], count } : null;
  }
  const lines = new Lines(text);
  if (!multiline) {
    for (let i = 0; i < lines.count; i++) {
      const line = lines.at(i);
      if (!lineMatches(line)) continue;
      if (records.length >= limit) break;
      records.push({ line: i + 1, end: i + 1, text: cutLine(line, line.length > MAX_LINE_CHARS ? matchColumn(line, pat) : 0), before: [], after: [] });
    }
    count = records.length;
  } else {
    // An empty text has one (empty) line here, where a match can be.
    const lineOf = (off: number): number => (lines.count ? lines.lineOf(off) : 1);
    re.lastIndex = 0;
    const firstAt = new Map<MatchRecord, number>();
    /** Last line of the latest record. */
    let lastEnd = 0;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      const s = m.index;
      const e = s + m[0].length;
      if (m[0].length === 0) re.lastIndex = s + (text.codePointAt(s)! > 0xffff ? 2 : 1);
      if (s >= text.length && (text.length === 0 || text.endsWith('\n'))) break;
      const first = lineOf(s);
      const last = e > s ? lineOf(e - 1) : first;
      if (count > 0 && first <= lastEnd) {
        lastEnd = Math.max(lastEnd, last);
        if (wantText) records[records.length - 1]!.end = lastEnd;
      } else {
        // A record more than the limit is not started (the one before it is whole: no later match extends it).
        if (wantText && count >= limit) break;
        count++;
        lastEnd = last;
        if (wantText) {
          const rec: MatchRecord = { line: first, end: last, text: '', before: [], after: [] };
          records.push(rec);
          firstAt.set(rec, s - lines.startOf(first));
        }
        if (mode === 'files_with_matches') break;
      }
      if (re.lastIndex > text.length) break;
    }
    if (wantText) {
      for (const r of records) {
        const shown: string[] = [];
        for (let l = r.line; l <= r.end && l <= lines.count; l++) shown.push(cutLine(lines.at(l - 1), l === r.line ? firstAt.get(r) ?? 0 : 0));
        r.text = shown.join('\n');
      }
    }
  }
  if (count === 0) return null;
  if (wantText) attachContext(records, context, (l) => (l >= 1 && l <= lines.count ? cutLine(lines.at(l - 1)) : undefined));
  return { records: wantText ? records : [], count };
}
