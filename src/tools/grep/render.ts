import type { FileHit, OutputMode } from './types.js';

export interface MatchItem {
  file: string;
  line: number;
  text: string;
  before?: string[];
  after?: string[];
}

export interface CountItem {
  file: string;
  count: number;
}

export interface Page {
  matches?: MatchItem[];
  files?: string[];
  counts?: CountItem[];
  /** Items in the collected hits (records, files or count rows). */
  available: number;
  /** Sum of match records over the collected hits (content and count modes). */
  matchTotal: number;
  shown: number;
}

/** Cuts the requested page out of sorted hits; `name` turns a search-relative path into a result path. */
export function pageOf(hits: FileHit[], mode: OutputMode, offset: number, limit: number, name: (rel: string) => string): Page {
  const end = offset + limit;
  let matchTotal = 0;
  for (const h of hits) matchTotal += h.count;
  if (mode === 'files_with_matches') {
    const files = hits.slice(offset, end).map((h) => name(h.rel));
    return { files, available: hits.length, matchTotal, shown: files.length };
  }
  if (mode === 'count') {
    const counts = hits.slice(offset, end).map((h) => ({ file: name(h.rel), count: h.count }));
    return { counts, available: hits.length, matchTotal, shown: counts.length };
  }
  const matches: MatchItem[] = [];
  let i = 0;
  for (const h of hits) {
    if (i + h.records.length <= offset) { i += h.records.length; continue; }
    const file = name(h.rel);
    for (const r of h.records) {
      if (i >= offset && i < end) {
        const m: MatchItem = { file, line: r.line, text: r.text };
        if (r.before.length) m.before = r.before;
        if (r.after.length) m.after = r.after;
        matches.push(m);
      }
      i++;
    }
    if (i >= end) break;
  }
  let available = 0;
  for (const h of hits) available += h.records.length;
  return { matches, available, matchTotal, shown: matches.length };
}

/** One chunk of text per item (ripgrep's look: `file:line:text`, context as `file-line-text`). */
export function renderItems(page: Page, withContext: boolean): string[] {
  if (page.files) return page.files.map((f) => `${f}\n`);
  if (page.counts) return page.counts.map((c) => `${c.file}:${c.count}\n`);
  const out: string[] = [];
  let prev: { file: string; last: number } | null = null;
  for (const m of page.matches ?? []) {
    let s = '';
    const first = m.line - (m.before?.length ?? 0);
    if (withContext && prev && (prev.file !== m.file || prev.last + 1 < first)) s += '--\n';
    m.before?.forEach((t, i) => { s += `${m.file}-${first + i}-${t}\n`; });
    const lines = m.text.split('\n');
    lines.forEach((t, i) => { s += `${m.file}:${m.line + i}:${t}\n`; });
    const end = m.line + lines.length - 1;
    m.after?.forEach((t, i) => { s += `${m.file}-${end + 1 + i}-${t}\n`; });
    prev = { file: m.file, last: end + (m.after?.length ?? 0) };
    out.push(s);
  }
  return out;
}

/** Keeps the first `n` items of a page (after the text limit cut the rest). */
export function keepFirst(page: Page, n: number): void {
  if (page.files) page.files = page.files.slice(0, n);
  if (page.counts) page.counts = page.counts.slice(0, n);
  if (page.matches) page.matches = page.matches.slice(0, n);
  page.shown = Math.min(page.shown, n);
}
