// searchText was rewritten for memory (review-rx: no record or line object a match in names and
// counts, lines as offsets, a record limit in content mode). Here it is checked against the
// version before (569f346, copied below as `before`) on many small random texts and patterns:
// the same records, counts and context in every mode, single-line and multiline.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { toJsPattern, type JsPattern } from './regex.js';
import { attachContext, cutLine, searchText, type TextHits } from './search-text.js';
import { MAX_LINE_CHARS, type MatchRecord, type OutputMode } from './types.js';

function matchColumn(line: string, pat: JsPattern): number {
  if (pat.literal !== null) return Math.max(0, line.indexOf(pat.literal));
  pat.re.lastIndex = 0;
  const m = pat.re.exec(line);
  pat.re.lastIndex = 0;
  return m ? m.index : 0;
}
function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines;
}
function before(text: string, pat: JsPattern, multiline: boolean, mode: OutputMode, context: number): TextHits | null {
  const re = pat.re;
  if (pat.literal !== null) {
    if (text.indexOf(pat.literal) < 0) return null;
  } else {
    re.lastIndex = 0;
    if (!re.test(text)) return null;
  }
  const lines = splitLines(text);
  const records: MatchRecord[] = [];
  const wantText = mode === 'content';
  if (!multiline) {
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      if (pat.literal !== null ? !line.includes(pat.literal) : (re.lastIndex = 0, !re.test(line))) continue;
      records.push({ line: i + 1, end: i + 1, text: wantText ? cutLine(line, line.length > MAX_LINE_CHARS ? matchColumn(line, pat) : 0) : '', before: [], after: [] });
      if (mode === 'files_with_matches') break;
    }
  } else {
    // Line starts, to turn offsets into line numbers.
    const starts = [0];
    for (let p = text.indexOf('\n'); p >= 0 && p + 1 < text.length; p = text.indexOf('\n', p + 1)) starts.push(p + 1);
    const lineOf = (off: number): number => {
      let lo = 0;
      let hi = starts.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (starts[mid]! <= off) lo = mid; else hi = mid - 1;
      }
      return lo + 1;
    };
    re.lastIndex = 0;
    const firstAt = new Map<MatchRecord, number>();
    for (let m = re.exec(text); m; m = re.exec(text)) {
      const s = m.index;
      const e = s + m[0].length;
      if (m[0].length === 0) re.lastIndex = s + (text.codePointAt(s)! > 0xffff ? 2 : 1);
      if (s >= text.length && (text.length === 0 || text.endsWith('\n'))) break;
      const first = lineOf(s);
      const last = e > s ? lineOf(e - 1) : first;
      const prev = records[records.length - 1];
      if (prev && first <= prev.end) prev.end = Math.max(prev.end, last);
      else {
        const rec: MatchRecord = { line: first, end: last, text: '', before: [], after: [] };
        records.push(rec);
        firstAt.set(rec, s - starts[first - 1]!);
        if (mode === 'files_with_matches') break;
      }
      if (re.lastIndex > text.length) break;
    }
    if (wantText) for (const r of records) r.text = lines.slice(r.line - 1, r.end).map((l, k) => cutLine(l, k === 0 ? firstAt.get(r) ?? 0 : 0)).join('\n');
  }
  if (records.length === 0) return null;
  if (wantText) attachContext(records, context, (l) => (l >= 1 && l <= lines.length ? cutLine(lines[l - 1]!) : undefined));
  return { records: wantText ? records : [], count: records.length };
}

function rng(seed: number) {
  return () => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed / 0x80000000; };
}

test('searchText answers as before the rewrite: random texts, patterns, modes, multiline and context', () => {
  const rand = rng(7);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const chars = ['a', 'b', 'a', 'b', '\n', '\n', '\r', 'é', '😀', ' '];
  const single = ['a', 'ab', 'a|b', '^a', 'b$', '^$', '\\s', '.', 'a.b', '[^a]', 'é', '😀', '(?i)A', '^', 'b\\r'];
  const multi = ['a\\nb', '\\n', 'b\\n\\na', '(?s)a.b', '^b', 'a$', '\\s', 'b\\na|a'];
  let checked = 0;
  for (let n = 0; n < 6000; n++) {
    const len = Math.floor(rand() * 40);
    let text = '';
    for (let k = 0; k < len; k++) text += pick(chars);
    if (rand() < 0.05) text += `${'x'.repeat(MAX_LINE_CHARS + 50)}ab${'y'.repeat(200)}\n`;
    const multiline = rand() < 0.4;
    const pattern = pick(multiline ? multi : single);
    const pat: JsPattern = toJsPattern({ pattern, fixed_strings: false, ignore_case: false, multiline });
    const mode = pick(['content', 'count', 'files_with_matches'] as const satisfies readonly OutputMode[]);
    const context = mode === 'content' ? Math.floor(rand() * 3) : 0;
    const want = before(text, pat, multiline, mode, context);
    assert.deepEqual(searchText(text, pat, multiline, mode, context), want, JSON.stringify({ text, pattern, multiline, mode, context }));
    // With a record limit: the first `limit` records of the same answer.
    if (want && mode === 'content' && want.records.length > 1) {
      const limit = 1 + Math.floor(rand() * (want.records.length - 1));
      const cut = searchText(text, pat, multiline, mode, 0, limit)!;
      const plain = before(text, pat, multiline, mode, 0)!;
      assert.deepEqual(cut.records, plain.records.slice(0, limit), JSON.stringify({ text, pattern, multiline, limit }));
    }
    checked++;
  }
  assert.equal(checked, 6000);
});
