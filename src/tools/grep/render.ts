import { renderBody } from '../../core/render.js';
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

/** Each entry as the text block will show it (rendered by core/render.ts), one chunk per entry. */
export function itemChunks(page: Page): string[] {
  const one = (key: 'matches' | 'files' | 'counts', v: unknown) => `${renderBody({ [key]: [v] })}\n`;
  if (page.files) return page.files.map((f) => one('files', f));
  if (page.counts) return page.counts.map((c) => one('counts', c));
  return (page.matches ?? []).map((m) => one('matches', m));
}

/** Keeps the first `n` items of a page (after the text limit cut the rest). */
export function keepFirst(page: Page, n: number): void {
  if (page.files) page.files = page.files.slice(0, n);
  if (page.counts) page.counts = page.counts.slice(0, n);
  if (page.matches) page.matches = page.matches.slice(0, n);
  page.shown = Math.min(page.shown, n);
}
