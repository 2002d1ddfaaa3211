import { constants, type Dirent } from 'node:fs';
import { open, readdir, readlink, realpath, stat, type FileHandle } from 'node:fs/promises';
import { ToolError } from '../../core/errors.js';
import { IgnoreFile, isIgnored, KIND_COUNT, type IgnoreLayer } from './gitignore.js';
import type { JsPattern } from './regex.js';
import { searchText, decodeForSearch } from './search-text.js';
import type { DenyFilter, Selection } from './select.js';
import { COLLECT_CAP, type EngineResult, type FileHit, type Query } from './types.js';

/** The built-in engine: an in-process walk and JavaScript regex, used when ripgrep is absent. */

const HAS_PROC_FD = process.platform === 'linux';
export const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
const CONCURRENCY = 16;
/** Bigger files are skipped (and counted) rather than read whole into memory. */
const MAX_FILE_BYTES = 64 * 1024 * 1024;
const KIND_NAMES = ['.rgignore', '.ignore', '.gitignore'] as const;

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

async function readSmall(path: string): Promise<string | null> {
  let fh: FileHandle | undefined;
  try {
    fh = await open(path, OPEN_FLAGS);
    const st = await fh.stat();
    if (!st.isFile() || st.size > 1024 * 1024) return null;
    return (await fh.readFile()).toString('utf8');
  } catch {
    return null;
  } finally {
    await fh?.close().catch(() => {});
  }
}

/** The ignore files of one directory (only those its listing shows), or null when it has none. */
async function readLayer(dirPath: string, names: ReadonlySet<string>, strip: number, add: string): Promise<IgnoreLayer | null> {
  const files: Array<IgnoreFile | undefined> = new Array(KIND_COUNT).fill(undefined);
  let any = false;
  for (let k = 0; k < KIND_NAMES.length; k++) {
    if (!names.has(KIND_NAMES[k]!)) continue;
    const text = await readSmall(`${dirPath}/${KIND_NAMES[k]}`);
    if (text) { files[k] = new IgnoreFile(text); any = true; }
  }
  const hasGit = names.has('.git');
  if (hasGit) {
    const text = await readSmall(`${dirPath}/.git/info/exclude`);
    if (text) { files[3] = new IgnoreFile(text); any = true; }
  }
  return any || hasGit ? { strip, add, files, hasGit } : null;
}

/** Ignore files between the workspace root and the search directory (ripgrep reads parents too). */
async function parentLayers(root: DirRoot): Promise<IgnoreLayer[]> {
  if (root.relToRoot === '') return [];
  const parts = root.relToRoot.split('/');
  const layers: IgnoreLayer[] = [];
  for (let i = 0; i < parts.length; i++) {
    const dir = i === 0 ? root.wsRoot : `${root.wsRoot}/${parts.slice(0, i).join('/')}`;
    let names: Set<string>;
    try {
      names = new Set(await readdir(dir));
    } catch {
      continue;
    }
    const layer = await readLayer(dir, names, 0, `${parts.slice(i).join('/')}/`);
    if (layer) layers.push(layer);
  }
  return layers;
}

/** Reads a file whose size is known with one read for small files (FileHandle.readFile stats again). */
export async function readAll(fh: FileHandle, size: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(size);
  let n = 0;
  while (n < size) {
    const { bytesRead } = await fh.read(buf, n, size - n, n);
    if (bytesRead === 0) break;
    n += bytesRead;
  }
  return buf.subarray(0, n);
}

/** Confirms an open descriptor is the file at `expected` (no symlink or directory swapped in on the way). */
export async function descriptorIs(fh: FileHandle, expected: string, ino: number): Promise<boolean> {
  try {
    if (HAS_PROC_FD) return (await readlink(`/proc/self/fd/${fh.fd}`)) === expected;
    // No /proc (macOS): re-resolve the path and compare the inode with the descriptor's.
    return (await realpath(expected)) === expected && (await stat(expected)).ino === ino;
  } catch {
    return false;
  }
}

function itemsOf(hit: FileHit, q: Query): number {
  return q.mode === 'content' ? hit.records.length : 1;
}

export async function builtinSearchDir(root: DirRoot, o: BuiltinOptions): Promise<EngineResult> {
  const { q, pat, select, deny } = o;
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
  // Like the ripgrep engine: everything up to the collection cap (exact totals), then only the first entries.
  const stopAt = Math.max(o.needed, o.collectCap ?? COLLECT_CAP[q.mode]);

  const advance = () => {
    while (ready < results.length && results[ready] !== undefined) {
      const h = results[ready];
      if (h) readyItems += itemsOf(h, q);
      ready++;
    }
    if (readyItems >= stopAt) enough = true;
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
      const text = decodeForSearch(await readAll(fh, st.size));
      if (text === null) return null;
      const found = searchText(text, pat, q.multiline, q.mode, q.context);
      if (!found) return null;
      if (st.nlink > 1 && !o.allowHardlinks) { skipped.hardlinked++; return null; }
      if (!(await descriptorIs(fh, `${root.abs === '/' ? '' : root.abs}/${rel}`, st.ino))) { skipped.moved++; return null; }
      return { rel, records: found.records, count: found.count };
    } finally {
      await fh.close().catch(() => {});
    }
  };

  const schedule = async (rel: string, path: string) => {
    while (inflight.size >= CONCURRENCY) await Promise.race(inflight);
    const seq = results.length;
    results.push(undefined);
    const p: Promise<void> = searchFile(rel, path)
      .then((hit) => { results[seq] = hit; }, (e) => { results[seq] = null; failure ??= e; })
      .finally(() => { inflight.delete(p); advance(); });
    inflight.add(p);
  };

  const stop = (): boolean => {
    if (o.signal.aborted) throw new ToolError('Cancelled', 'The search was cancelled.');
    if (enough || capped) return true;
    if (Date.now() > o.deadline) { capped = 'time'; return true; }
    if (visited > o.visitCap) { capped = 'visits'; return true; }
    return false;
  };

  const walk = async (rel: string, path: string, layers: IgnoreLayer[]): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await readdir(path, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const names = new Set(entries.map((e) => e.name));
    const layer = await readLayer(path, names, rel === '' ? 0 : rel.length + 1, '');
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
        await schedule(childRel, `${path}/${e.name}`);
      }
    }
  };

  try {
    await walk('', root.path, await parentLayers(root));
  } finally {
    await Promise.allSettled([...inflight]);
  }
  if (failure) throw failure;
  if (o.signal.aborted) throw new ToolError('Cancelled', 'The search was cancelled.');
  advance();
  if (skipped.large) notes.push(`${skipped.large} file(s) over ${MAX_FILE_BYTES / 1024 / 1024} MB were not searched by the built-in engine.`);
  if (skipped.hardlinked) notes.push(`${skipped.hardlinked} matching file(s) with several hard links were left out (paths.allow_hardlinks is off).`);
  if (skipped.moved) notes.push(`${skipped.moved} matching file(s) changed place during the search and were left out.`);
  // Only what was finished in walk order counts, so an early stop still gives the first files in path order.
  const hits = results.slice(0, ready).filter((h): h is FileHit => !!h);
  return { hits, capped, searched, visited, complete: !enough && !capped && ready === results.length, sortedPrefix: true, notes };
}

/** Searches one already opened and verified file (openFileForRead). */
export async function builtinSearchFile(fh: FileHandle, o: Pick<BuiltinOptions, 'q' | 'pat'>): Promise<EngineResult> {
  const text = decodeForSearch(await fh.readFile());
  const found = text === null ? null : searchText(text, o.pat, o.q.multiline, o.q.mode, o.q.context);
  return {
    hits: found ? [{ rel: '', records: found.records, count: found.count }] : [],
    capped: null, searched: 1, complete: true, sortedPrefix: true,
    notes: text === null ? ['The file is binary (it has a NUL byte near the start); it was not searched.'] : [],
  };
}
