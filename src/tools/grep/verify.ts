import { closeSync, fstatSync, openSync, readlinkSync, realpathSync, statSync, type Stats } from 'node:fs';
import { readFdSync } from '../../workspace/safe-open.js';
import { dirOf, lstatPinned, openRechecker, type FolderId, type QuietCheck, type Rechecker } from '../glob/recheck.js';
import { OPEN_FLAGS } from './fallback.js';
import type { JsPattern } from './regex.js';
import { EXPIRED, needsWorker, RegexMatcher, type Found } from './regex-matcher.js';
import { decodeForSearch, searchText, showsLine } from './search-text.js';
import { slowInThread } from './small.js';
import type { FileHit, OutputMode } from './types.js';

/**
 * Checks files ripgrep reported before anything about them is returned: still a regular file
 * (not swapped for a symlink), one hard link unless allowed (a hard link can point at a file
 * outside the workspace), lstat'ed through a descriptor of its folder opened folder by folder
 * without following links (glob's pinned re-check), so a directory swapped for a symlink during
 * the walk, and back, cannot make a hit pass or count whose file exists only outside. Only the
 * hits that will be shown or counted are checked: the first `need` items in order, or all of
 * them when there are at most `budget` hits — the cost follows the answer, not the tree.
 * Synchronous lstat (~2 µs, against ~12 µs through the thread pool) in slices, yielding
 * to the event loop between them.
 */
export interface Verified {
  hits: FileHit[];
  /** Every hit was checked: totals are exact. */
  exact: boolean;
  hardlinked: number;
  moved: number;
}

const SLICE = 512;
const HAS_PROC_FD = process.platform === 'linux';

/** The descriptor is the real file at `expected` (Linux: its /proc link; elsewhere path and inode agree). */
export function descriptorIsSync(fd: number, expected: string, ino: number): boolean {
  if (HAS_PROC_FD) return readlinkSync(`/proc/self/fd/${fd}`) === expected;
  return realpathSync(expected) === expected && statSync(expected).ino === ino;
}
const CONFIRM_WINDOW = 64;

/** A hit's lstat, proven to be of the entry rg listed; null when there is none (verifyHits looks itself). */
export type Known = (h: FileHit) => { st: Stats | undefined } | null;

/**
 * Which hits' folders are quiet (quietFolders), with each hit's lstat made first, before the looks
 * that prove its folder and every folder on its way unchanged since before rg started
 * (QuietCheck.withStats): for a hit in a quiet folder verifyHits takes that lstat, and opens no
 * descriptor per folder nor walks /proc per hit. Past `budget` hits verifyHits checks only the
 * page, so the lstats are left to it.
 */
export function quietHits(quiet: QuietCheck, hits: readonly FileHit[], budget: number): { dirs: Set<string>; known: Known } {
  if (hits.length > budget) return { dirs: quiet.all(hits.map((h) => dirOf(h.rel))), known: () => null };
  const { quiet: dirs, stats } = quiet.withStats(hits.map((h) => h.rel));
  return { dirs, known: (h) => (stats.has(h.rel) && dirs.has(dirOf(h.rel)) ? { st: stats.get(h.rel) } : null) };
}

/**
 * What an ask rule leaves out, counted from rg's listing by name (rgListFiles): only names that are
 * files in the searched folder now, looked at through its pinned descriptors. rg lists by path, so a
 * folder swapped for a link while it ran could add names that exist only outside; counted, they
 * would tell what lies there.
 */
export async function countListed(listing: readonly string[], rootAbs: string, searched: FolderId, count: (rel: string) => void): Promise<void> {
  const stats = await lstatPinned(listing, rootAbs, searched);
  listing.forEach((rel, i) => { if (stats[i]?.isFile()) count(rel); });
}

export async function verifyHits(sorted: FileHit[], rootAbs: string, opts: {
  allowHardlinks: boolean; need: number; budget: number; itemsOf: (h: FileHit) => number; isFileRoot: boolean; searched?: FolderId;
  /** A hit's lstat already proven to be of the entry rg listed (quietHits), or null: checked here. */
  known?: Known;
}): Promise<Verified> {
  if (opts.isFileRoot) return { hits: sorted, exact: true, hardlinked: 0, moved: 0 };
  const base = rootAbs === '/' ? '' : rootAbs;
  // Through pinned folders, as glob does: a folder swapped for a link and back cannot make a name pass
  // (and be counted) whose file exists only outside.
  // `searched`: the folder rg was pinned to; a base that names another folder now fails every hit.
  let pinned = null as Rechecker | null;
  const check = (h: FileHit): 'ok' | 'hardlinked' | 'moved' => {
    const k = opts.known?.(h);
    const st = k ? k.st : (pinned ??= openRechecker(base, {}, opts.searched)).lstat(h.rel);
    if (!st?.isFile()) return 'moved';
    return st.nlink > 1 && !opts.allowHardlinks ? 'hardlinked' : 'ok';
  };
  const all = sorted.length <= opts.budget;
  const out: FileHit[] = [];
  let items = 0;
  let hardlinked = 0;
  let moved = 0;
  let i = 0;
  try {
    while (i < sorted.length && (all || items < opts.need)) {
      if (i > 0 && i % SLICE === 0) await new Promise<void>((r) => setImmediate(r));
      const h = sorted[i++]!;
      const v = check(h);
      if (v === 'ok') { out.push(h); items += opts.itemsOf(h); }
      else if (v === 'hardlinked') hardlinked++;
      else moved++;
    }
  } finally {
    pinned?.close();
  }
  return { hits: out, exact: i >= sorted.length, hardlinked, moved };
}

export interface ConfirmCheck {
  mode: OutputMode; pat: JsPattern | null; multiline: boolean; allowHardlinks: boolean;
  /** For a pattern that goes to the worker: the call's signal and the search's time cap. */
  signal: AbortSignal; deadline: number;
}

/**
 * ripgrep walks by path name, so a folder swapped for a symlink and back while it ran could
 * have fed it a file from outside. Before entries are returned, each file on the page is opened
 * here (no symlink at the end, descriptor checked to be the real in-workspace file): every
 * returned line must be what that file holds at that line number, and for names and counts the
 * file must match (as often) — so nothing about an outside file's content reaches the result.
 */
export async function confirmContent(sorted: FileHit[], rootAbs: string, need: number, check: ConfirmCheck): Promise<{ hits: FileHit[]; changed: number; expired: boolean }> {
  const base = rootAbs === '/' ? '' : rootAbs;
  // A pattern JavaScript may backtrack on is run in a worker thread (regex-matcher.ts), never here;
  // so is a text too long to search here with the pattern (slowInThread).
  const inWorker = !!check.pat && check.mode !== 'content' && needsWorker(check.pat);
  let matcher = null as RegexMatcher | null;
  let expired = false;
  // Synchronous calls: five syscalls a file cost microseconds, the thread pool tens of them.
  const confirm = (h: FileHit): boolean | Promise<boolean> => {
    const abs = h.rel === '' ? rootAbs : `${base}/${h.rel}`;
    let fd = -1;
    try {
      fd = openSync(abs, OPEN_FLAGS);
      const st = fstatSync(fd);
      if (!st.isFile() || !descriptorIsSync(fd, abs, st.ino)) return false;
      // The path may name another file than verifyHits checked (a folder above swapped with a copy
      // since): a hard link's content must not confirm anything, or the answer tells about its outside twin.
      if (st.nlink > 1 && !check.allowHardlinks) return false;
      const text = decodeForSearch(readFdSync(fd, st.size));
      if (text === null) return false;
      if (check.mode === 'content') {
        const lines = text.split('\n');
        return h.records.every((r) => r.text.split('\n').every((t, k) => lines[r.line - 1 + k] !== undefined && showsLine(lines[r.line - 1 + k]!, t)));
      }
      if (!check.pat) return true; // a pattern only ripgrep can run: the folder and lstat checks stand alone
      // A file name only: a literal with no line break is in some line exactly when it is in the text.
      const lit = check.pat.literal;
      if (check.mode === 'files_with_matches' && !check.multiline && lit !== null && !/[\r\n]/.test(lit)) return text.includes(lit);
      // Names and counts: the real file must match (as often) under the translated pattern.
      const judge = (found: Found) => {
        if (found === EXPIRED) expired = true;
        return found === EXPIRED ? false : check.mode === 'files_with_matches' ? !!found : found?.count === h.count;
      };
      if (!inWorker && !slowInThread(check.pat, text.length)) return judge(searchText(text, check.pat, check.multiline, check.mode, 0));
      matcher ??= new RegexMatcher(check.pat, { multiline: check.multiline, mode: check.mode, context: 0 }, check.signal, check.deadline);
      return matcher.search(text).then(judge);
    } catch {
      return false;
    } finally {
      if (fd >= 0) closeSync(fd);
    }
  };
  const out: FileHit[] = [];
  let items = 0;
  let changed = 0;
  let i = 0;
  while (i < sorted.length && items < need) {
    // A window at a time, in parallel; sized by what is still needed (a file gives at least one item).
    const batch = sorted.slice(i, i + Math.min(CONFIRM_WINDOW, Math.max(1, need - items)));
    if (i > 0) await new Promise<void>((r) => setImmediate(r));
    let oks: boolean[];
    try { oks = await Promise.all(batch.map(confirm)); } catch (e) { matcher?.close(); throw e; }
    oks.forEach((ok, k) => {
      if (ok) { out.push(batch[k]!); items += check.mode === 'content' ? batch[k]!.records.length : 1; } else changed++;
    });
    i += batch.length;
  }
  matcher?.close();
  return { hits: out.concat(sorted.slice(i)), changed, expired };
}
