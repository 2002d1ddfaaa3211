import { closeSync, constants, fstatSync, openSync, readdirSync, type Dirent } from 'node:fs';
import { open, readdir, type FileHandle } from 'node:fs/promises';
import { ToolError } from '../../core/errors.js';
import { IgnoreFile, isIgnored, KIND_COUNT, type IgnoreLayer } from './gitignore.js';
import type { JsPattern } from './regex.js';
import { searchText, decodeForSearch, type TextHits } from './search-text.js';
import { EXPIRED, needsWorker, RegexMatcher } from './regex-matcher.js';
import type { DenyFilter, Selection } from './select.js';
import { COLLECT_CAP, type EngineResult, type FileHit, type Query } from './types.js';
import { listWithin, openPinnedDir, sameTextInBothEngines, slowInThread, UseRipgrep } from './small.js';
import { descriptorIsSync } from './verify.js';
import { descriptorIs, MAX_FILE_BYTES, readAll } from './search-file.js';
import { readFdSync } from '../../workspace/safe-open.js';
import { readIgnoreFileSync } from '../walk/ignore-stack.js';

/** The built-in engine: an in-process walk and JavaScript regex, used when ripgrep is absent. */

export const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
const CONCURRENCY = 16;
/** Files in flight when the worker searches (regex-matcher.ts): its batches, not the thread pool, set the pace. */
const WORKER_CONCURRENCY = 256;
/**
 * Bytes of the files in flight (being read, or waiting for the worker's answer) past which the
 * walk waits, whatever their number: a runaway match holds the worker, and 256 files of up to
 * 64 MB each read meanwhile would wait in memory (60 of 16 MB: +1.9 GB).
 */
const MAX_BYTES_IN_FLIGHT = 64 * 1024 * 1024;
const KIND_NAMES = ['.rgignore', '.ignore', '.gitignore'] as const;
/**
 * Files up to this size are opened, read and searched synchronously: the five thread-pool round
 * trips of an async read cost ~150 µs a file under load, the system calls themselves ~10 µs.
 * Bigger files (and anything that is not a regular file) keep the async path.
 */
const SYNC_MAX_BYTES = 256 * 1024;
/** Synchronous work between two turns of the event loop (cancellation, other sessions' calls). */
const SYNC_SLICE_MS = 8;
/** A small search reads at most this many entries of one folder per entry of its budget (listWithin). */
const RAW_ENTRIES_PER_BUDGET = 16;

export interface BuiltinOptions {
  q: Query;
  pat: JsPattern;
  select: Selection;
  deny: DenyFilter;
  allowHardlinks: boolean;
  signal: AbortSignal;
  /** Epoch ms after which the walk stops (time cap). */
  deadline: number;
  visitCap: number;
  /** Items (records in content mode, files otherwise) the caller needs: offset + head_limit + 1. */
  needed: number;
  /** Overrides COLLECT_CAP (tests). */
  collectCap?: number;
  /**
   * For a folder searched here although ripgrep is present (it is small): past this many entries
   * or bytes read, stop and throw UseRipgrep, so a folder that grew goes to ripgrep after all.
   * So does a NUL byte past the first block (where ripgrep stops depends on its buffers) and,
   * unless the pattern is literal, invalid UTF-8 (see SmallSearch.literal).
   */
  budget?: { visits: number; bytes: number; literal: boolean };
}

export interface DirRoot {
  /** Real path of the search directory. */
  abs: string;
  /** A path naming exactly the opened directory (/proc/self/fd/N on Linux). */
  path: string;
  /** Real path of the workspace root holding it, and the directory relative to that root. */
  wsRoot: string;
  relToRoot: string;
}

/** The ignore files of one directory (only those its listing shows), or null when it has none. */
function readLayer(dirPath: string, names: ReadonlySet<string>, strip: number, add: string): IgnoreLayer | null {
  const files: Array<IgnoreFile | undefined> = new Array(KIND_COUNT).fill(undefined);
  let any = false;
  for (let k = 0; k < KIND_NAMES.length; k++) {
    if (!names.has(KIND_NAMES[k]!)) continue;
    const text = readIgnoreFileSync(dirPath, KIND_NAMES[k]!);
    if (text) { files[k] = new IgnoreFile(text); any = true; }
  }
  const hasGit = names.has('.git');
  if (hasGit) {
    const text = readIgnoreFileSync(dirPath, '.git/info/exclude');
    if (text) { files[3] = new IgnoreFile(text); any = true; }
  }
  return any || hasGit ? { strip, add, files, hasGit } : null;
}

/** Ignore files between the workspace root and the search directory (ripgrep reads parents too). Synchronous: a few folders. */
function parentLayers(root: DirRoot): IgnoreLayer[] {
  if (root.relToRoot === '') return [];
  const parts = root.relToRoot.split('/');
  const layers: IgnoreLayer[] = [];
  for (let i = 0; i < parts.length; i++) {
    const dir = i === 0 ? root.wsRoot : `${root.wsRoot}/${parts.slice(0, i).join('/')}`;
    let names: Set<string>;
    try {
      names = new Set(readdirSync(dir));
    } catch {
      continue;
    }
    const layer = readLayer(dir, names, 0, `${parts.slice(i).join('/')}/`);
    if (layer) layers.push(layer);
  }
  return layers;
}

function itemsOf(hit: FileHit, q: Query): number {
  return q.mode === 'content' ? hit.records.length : 1;
}

export async function builtinSearchDir(root: DirRoot, o: BuiltinOptions): Promise<EngineResult> {
  const { q, pat, select, deny } = o;
  // Like the ripgrep engine: everything up to the collection cap (exact totals), then only the first entries
  // (a file's records too: searchText keeps no more).
  const stopAt = Math.max(o.needed, o.collectCap ?? COLLECT_CAP[q.mode]);
  // A pattern JavaScript may backtrack on runs in a worker thread the search's end, cancel or time cap
  // stops; so does any other text too long for it to search here (slowInThread), the worker started then.
  const inWorker = needsWorker(pat);
  let matcher = inWorker ? new RegexMatcher(pat, { ...q, limit: stopAt }, o.signal, o.deadline) : null;
  const concurrency = inWorker ? WORKER_CONCURRENCY : CONCURRENCY;
  const results: Array<FileHit | null | undefined> = [];
  const inflight = new Set<Promise<void>>();
  const notes: string[] = [];
  let visited = 0;
  let searched = 0;
  let ready = 0;
  let readyItems = 0;
  let enough = false;
  let capped: EngineResult['capped'] = null;
  let failure: unknown;
  const skipped = { large: 0, hardlinked: 0, moved: 0 };
  let bytesRead = 0;
  let bytesInFlight = 0;
  /** The size searchSmallSync saw of the file it left in flight (an async read, or the worker). */
  let sizeSeen = 0;
  let sliceStart = performance.now();

  const advance = () => {
    while (ready < results.length && results[ready] !== undefined) {
      const h = results[ready];
      if (h) readyItems += itemsOf(h, q);
      ready++;
    }
    if (readyItems >= stopAt) enough = true;
  };

  /** A hit from a file's text, or null (binary, no match, a hard link, moved); a promise when the worker searches. */
  const judge = (rel: string, buf: Buffer, nlink: number, isAt: () => boolean): FileHit | null | Promise<FileHit | null> => {
    bytesRead += buf.length;
    const b = o.budget;
    if (b && bytesRead > b.bytes) throw new UseRipgrep('size', `more than ${b.bytes} bytes to search`);
    const text = decodeForSearch(buf);
    if (b) sameTextInBothEngines(buf, text, b.literal, rel);
    if (text === null) return null;
    if (!inWorker && !slowInThread(pat, text.length)) return hitOf(rel, searchText(text, pat, q.multiline, q.mode, q.context, stopAt), nlink, isAt);
    matcher ??= new RegexMatcher(pat, { ...q, limit: stopAt }, o.signal, o.deadline);
    // Asked now: the file's descriptor is closed by the time the worker answers.
    const at = isAt();
    return matcher.search(text).then((found) => {
      if (found !== EXPIRED) return hitOf(rel, found, nlink, () => at);
      capped ??= 'time';
      return null;
    });
  };

  const hitOf = (rel: string, found: TextHits | null, nlink: number, isAt: () => boolean): FileHit | null => {
    if (!found) return null;
    if (nlink > 1 && !o.allowHardlinks) { skipped.hardlinked++; return null; }
    if (!isAt()) { skipped.moved++; return null; }
    return { rel, records: found.records, count: found.count };
  };

  let rulesLeftOut = 0;
  /** An ignore file's rules too costly to match here (IgnoreFile.skipped): ripgrep answers a small search; the built-in engine leaves them out. */
  const weigh = (layer: IgnoreLayer | null): IgnoreLayer | null => {
    for (const f of layer?.files ?? []) {
      if (!f?.skipped) continue;
      if (o.budget) throw new UseRipgrep('text', 'an ignore file has rules too many or too costly to match here');
      rulesLeftOut += f.skipped;
    }
    return layer;
  };

  const expectedAt = (rel: string) => `${root.abs === '/' ? '' : root.abs}/${rel}`;

  /** A small regular file, searched without the thread pool; undefined: not one (take the async path). */
  const searchSmallSync = (rel: string, path: string): FileHit | null | undefined | Promise<FileHit | null> => {
    let fd: number;
    try {
      fd = openSync(path, OPEN_FLAGS);
    } catch {
      return null; // gone, swapped for a symlink (ELOOP) or unreadable: nothing to report
    }
    try {
      const st = fstatSync(fd);
      if (!st.isFile()) return null;
      sizeSeen = st.size;
      // A hard link may be an outside file: its content must not pick the engine (the text checks), so rg answers.
      if (o.budget && st.nlink > 1 && !o.allowHardlinks) throw new UseRipgrep('text', `${rel} has several hard links`);
      // With a budget every file is read here (its folder's descriptor, in the path, is closed after the folder).
      if (o.budget && bytesRead + st.size > o.budget.bytes) throw new UseRipgrep('size', `more than ${o.budget.bytes} bytes to search`);
      if (st.size > SYNC_MAX_BYTES && !o.budget) return undefined;
      searched++;
      return judge(rel, readFdSync(fd, st.size), st.nlink, () => { try { return descriptorIsSync(fd, expectedAt(rel), st.ino); } catch { return false; } });
    } catch (e) {
      if (e instanceof UseRipgrep) throw e;
      return null;
    } finally {
      closeSync(fd);
    }
  };

  const searchFile = async (rel: string, path: string): Promise<FileHit | null> => {
    let fh: FileHandle;
    try {
      fh = await open(path, OPEN_FLAGS);
    } catch {
      return null; // gone, swapped for a symlink (ELOOP) or unreadable: nothing to report
    }
    try {
      const st = await fh.stat();
      if (!st.isFile()) return null;
      if (st.size > MAX_FILE_BYTES) { skipped.large++; return null; }
      searched++;
      const buf = await readAll(fh, st.size);
      const at = await descriptorIs(fh, expectedAt(rel), st.ino);
      // Awaited here: a promise returned from inside try/finally has no handler until the finally's
      // await ends — a cancel rejecting it meanwhile was an unhandled rejection, which ended the server.
      return await judge(rel, buf, st.nlink, () => at);
    } finally {
      await fh.close().catch(() => {});
    }
  };

  /** Waits while `concurrency` files or MAX_BYTES_IN_FLIGHT are in flight, and lets the event loop turn after SYNC_SLICE_MS of work. */
  const pause = async () => {
    while (inflight.size >= concurrency || (inflight.size > 0 && bytesInFlight >= MAX_BYTES_IN_FLIGHT)) await Promise.race(inflight);
    if (performance.now() - sliceStart > SYNC_SLICE_MS) {
      await new Promise<void>((r) => setImmediate(r));
      sliceStart = performance.now();
    }
  };

  /** Searches a file now when it is small, else starts an async read; its result keeps its place in walk order. */
  const schedule = (rel: string, path: string): void => {
    const seq = results.length;
    results.push(undefined);
    sizeSeen = 0;
    const small = searchSmallSync(rel, path);
    if (small !== undefined && !(small instanceof Promise)) {
      results[seq] = small;
      advance();
      return;
    }
    const bytes = sizeSeen;
    bytesInFlight += bytes;
    const p: Promise<void> = (small ?? searchFile(rel, path))
      .then((hit) => { results[seq] = hit; }, (e: unknown) => { results[seq] = null; failure ??= e; })
      .finally(() => { bytesInFlight -= bytes; inflight.delete(p); advance(); });
    inflight.add(p);
  };

  const stop = (): boolean => {
    if (o.signal.aborted) throw new ToolError('Cancelled', 'The search was cancelled.');
    if (enough || capped) return true;
    if (Date.now() > o.deadline) { capped = 'time'; return true; }
    if (o.budget && visited > o.budget.visits) throw new UseRipgrep('size', `more than ${o.budget.visits} entries`);
    if (visited > o.visitCap) { capped = 'visits'; return true; }
    return false;
  };

  const walk = async (rel: string, path: string, layers: IgnoreLayer[]): Promise<void> => {
    let entries: Dirent[];
    let pinned: number | undefined;
    try {
      // A small folder (budget) is read without the thread pool: an async readdir cost ~160 µs of a
      // 300-file search's 7 ms each (15 folders: 7.0 → 4.6 ms). Each subfolder through its own
      // checked descriptor (openPinnedDir): one swapped for a link to outside is not entered, so
      // nothing there is counted, read, or weighed against the budget.
      if (o.budget && rel !== '') ({ fd: pinned, path } = openPinnedDir(path, expectedAt(rel)));
      entries = o.budget ? listWithin(path, RAW_ENTRIES_PER_BUDGET * o.budget.visits) : await readdir(path, { withFileTypes: true });
    } catch (e) {
      if (pinned !== undefined) closeSync(pinned);
      if (e instanceof UseRipgrep) throw e;
      return;
    }
    try {
      await walkEntries(rel, path, layers, entries);
    } finally {
      if (pinned !== undefined) closeSync(pinned);
    }
  };

  const walkEntries = async (rel: string, path: string, layers: IgnoreLayer[], entries: Dirent[]): Promise<void> => {
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const names = new Set(entries.map((e) => e.name));
    const layer = weigh(readLayer(path, names, rel === '' ? 0 : rel.length + 1, ''));
    const ls = layer ? [...layers, layer] : layers;
    for (const e of entries) {
      if (stop()) return;
      const childRel = rel === '' ? e.name : `${rel}/${e.name}`;
      // Denied entries are not even counted: the visit count must not tell what lies there.
      if (e.isDirectory() ? deny.dirDenied(childRel) : deny.fileDenied(childRel)) continue;
      visited++;
      if (e.isDirectory()) {
        if (select.dirExcluded(childRel, e.name) || isIgnored(ls, childRel, true)) continue;
        await walk(childRel, `${path}/${e.name}`, ls);
      } else if (e.isFile()) {
        // Symbolic links, FIFOs, sockets and devices are never opened.
        if (!select.fileSelectedHere(childRel, e.name) || isIgnored(ls, childRel, false)) continue;
        if (inflight.size >= concurrency || bytesInFlight >= MAX_BYTES_IN_FLIGHT || performance.now() - sliceStart > SYNC_SLICE_MS) await pause();
        schedule(childRel, `${path}/${e.name}`);
      }
    }
  };

  try {
    const above = parentLayers(root);
    above.forEach(weigh);
    await walk('', root.path, above);
  } finally {
    await Promise.allSettled([...inflight]);
    matcher?.close();
  }
  if (failure) throw failure;
  if (o.signal.aborted) throw new ToolError('Cancelled', 'The search was cancelled.');
  advance();
  if (skipped.large) notes.push(`${skipped.large} file(s) over ${MAX_FILE_BYTES / 1024 / 1024} MB were not searched by the built-in engine.`);
  if (rulesLeftOut) notes.push(`${rulesLeftOut} ignore-file rule(s) too many or with too many wildcards to match here were left out (ripgrep applies them).`);
  if (skipped.hardlinked) notes.push(`${skipped.hardlinked} matching file(s) with several hard links were left out (paths.allow_hardlinks is off).`);
  // skipped.moved gets no note: a file read through a folder swapped for a link to outside matched, which a count would tell.
  // Only what was finished in walk order counts, so an early stop still gives the first files in path order.
  const hits = results.slice(0, ready).filter((h): h is FileHit => !!h);
  return { hits, capped, searched, visited, complete: !enough && !capped && ready === results.length, sortedPrefix: true, notes };
}
