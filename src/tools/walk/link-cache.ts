import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, type Stats } from 'node:fs';
import { inFolder } from '../../workspace/dir-stat.js';
import { RG_IGNORE_FILES } from './ignore-stack.js';

const HAS_PROC_FD = process.platform === 'linux';
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
/** Folders remembered at most (all are forgotten past this, and read again). */
export const LINK_CACHE_MAX_DIRS = 500_000;
/**
 * Bytes the records of every cache of the process may hold together (each workspace, so each HTTP
 * session, has its own cache), as estimated by recordBytes: past it the cache that adds a folder
 * forgets its own records; when the others hold the budget, the folder is used without being kept.
 */
export const LINK_CACHE_MAX_BYTES = 128 * 1024 * 1024;
/** What a record costs on the heap, roughly: the object and its arrays, the path it is kept under, each name. */
export function recordBytes(abs: string, f: { links: string[]; dirs: string[]; files: string[]; ignores: string[] }): number {
  let n = 200 + 2 * abs.length;
  for (const list of [f.links, f.dirs, f.files, f.ignores]) for (const name of list) n += 40 + 2 * name.length;
  return n;
}
const budget = { bytes: 0 };
const finished = new FinalizationRegistry<{ bytes: number }>((account) => { budget.bytes -= account.bytes; });
/**
 * A folder is trusted from its record only when its ctime was this much older than the moment it
 * was read: a change made in the same tick of a coarse file-system clock right after the read
 * would otherwise leave the ctime as recorded (git's "racy" entries, handled the same way).
 */
export const RACY_MS = 2000;

interface Folder {
  dev: number;
  ino: number;
  ctimeMs: number;
  trusted: boolean;
  links: string[];
  dirs: string[];
  /** Its regular files (glob's index engine). */
  files: string[];
  /** Entries named like an ignore file (RG_IGNORE_FILES order), whatever their type. */
  ignores: string[];
  /** Holds an entry named .git (a repository, or a submodule's .git file). */
  git: boolean;
  /** The list() call that last confirmed or read this record. */
  seen: number;
}

/**
 * A folder as one list() call found it (its lstat in that call, or the fstat of its read).
 * `through`: the pinned folder's /proc path the look was made through (ListHooks.pinned), if any.
 */
export interface SeenFolder { readonly dev: number; readonly ino: number; readonly ctimeMs: number; readonly ignores: readonly string[]; readonly through?: string }

export interface ListHooks {
  prune: (name: string) => boolean;
  /**
   * listAsync only, Linux: the start's pinned folder as `/proc/self/fd/N`. Every folder is then
   * looked at and read through it (from inside it: dir-stat.ts inFolder), not by its path from
   * `/`, and `seen` records say so (SeenFolder.through): a folder above the start swapped meanwhile
   * cannot make a look land elsewhere, and what lies below is proven by quietFolders' `walked`.
   * The hooks then run with the process's working directory in that folder: none may use a
   * relative path, process.cwd() or start a process without its own cwd.
   */
  pinned?: string;
  /** Filled with every folder this call confirmed or read, by absolute path: the call's own view, whatever other calls run meanwhile. */
  seen?: Map<string, SeenFolder>;
  deadline: number;
  signal?: AbortSignal;
  /** Asked of each folder before anything about it is looked at: false leaves it unread. */
  admit?: (rel: string) => boolean;
  enter?: (rel: string, generation: number) => boolean;
  /** A folder admitted but gone, or no longer a folder, when looked at. */
  gone?: (rel: string) => void;
  files?: (rel: string, names: readonly string[]) => void;
}

export interface LinkList {
  /** Paths of the symbolic links found, relative to the start, '/'-separated. */
  links: string[];
  /** Paths of the entries named like an ignore file (whatever their type), relative to the start. */
  ignoreFiles: string[];
  /** A folder below the start holds .git: ripgrep applies no .gitignore from above it (a nested repository). */
  nestedGit: boolean;
  /** This call's number, for ignoreFilesIn. */
  generation: number;
  timedOut: boolean;
  aborted: boolean;
}

/**
 * The symbolic links under a folder, for glob's ripgrep engine (rg never lists a link it does not
 * follow). Instead of a `find -type l` walk on every call, each folder's links and subfolders are
 * remembered with its inode and ctime: a folder whose ctime and inode are unchanged has had no
 * entry created, removed or renamed in it (any of those sets the folder's ctime, which no user can
 * set back), so one lstat per folder replaces reading it. A folder changed within RACY_MS of being
 * read is read again next time. Folders are read through a descriptor opened without following
 * links. What this returns is only a list of candidates: every link glob returns is then judged by
 * name and re-checked on disk through pinned folders (recheck.ts), as find's list was.
 */
export class LinkCache {
  private readonly folders = new Map<string, Folder>();
  /** Folders read (not taken from the cache) by the last list(): for tests and stats. */
  lastReads = 0;
  /** Counts list() calls: a record is current for the call that last saw it. */
  private generation = 0;
  /** Bytes its records hold (recordBytes); an object of its own, for the finalizer. */
  private readonly account = { bytes: 0 };

  constructor(private readonly racyMs = RACY_MS) {
    finished.register(this, this.account);
  }

  /**
   * `enter`, when given, is asked of each folder (its record current for this call, `generation`)
   * before anything of it is taken: false leaves out its links, files and everything below.
   * `files` receives each entered folder's regular files.
   */
  list(startAbs: string, o: ListHooks): LinkList {
    if (o.pinned !== undefined) throw new Error('LinkCache.list: looks through a pinned folder are listAsync\'s');
    const steps = this.steps(startAbs, o, { inside: null });
    for (;;) { const r = steps.next(); if (r.done) return r.value; }
  }

  /** list(), giving the thread back every 256 folders (a cold read of a big tree takes seconds). */
  async listAsync(startAbs: string, o: ListHooks): Promise<LinkList> {
    const via: { inside: string | null } = { inside: null };
    const steps = this.steps(startAbs, o, via);
    const { pinned } = o;
    // Each stretch runs inside the pinned folder and steps back out before the thread is given back.
    const step = pinned === undefined ? () => steps.next() : () => inFolder(pinned, (inside) => { via.inside = inside; try { return steps.next(); } finally { via.inside = null; } });
    for (;;) {
      const r = step();
      if (r.done) return r.value;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  /**
   * The walk of list(), pausing (yield) every 256 folders, where it also checks the deadline and
   * the signal. `via.inside`, when set: the prefix that names the pinned start ('' from inside it).
   */
  private *steps(startAbs: string, o: ListHooks, via: { inside: string | null }): Generator<void, LinkList> {
    const links: string[] = [];
    const ignoreFiles: string[] = [];
    let nestedGit = false;
    const gen = ++this.generation;
    const base = startAbs === '/' ? '' : startAbs;
    const stack: string[] = [''];
    let reads = 0;
    let n = 0;
    while (stack.length) {
      if ((++n & 255) === 0) {
        yield;
        if (o.signal?.aborted) return { links, ignoreFiles, nestedGit, generation: gen, timedOut: false, aborted: true };
        if (Date.now() > o.deadline) return { links, ignoreFiles, nestedGit, generation: gen, timedOut: true, aborted: false };
      }
      const rel = stack.pop()!;
      if (o.admit && !o.admit(rel)) continue;
      const abs = rel === '' ? startAbs : `${base}/${rel}`;
      const through = o.pinned !== undefined && via.inside !== null ? o.pinned : undefined;
      if (o.pinned !== undefined && through === undefined) throw new Error('LinkCache: a pinned listing looked outside its folder');
      const f = this.folder(abs, gen, () => reads++, through === undefined ? abs : `${via.inside}${rel === '' ? '.' : rel}`);
      if (f) o.seen?.set(abs, through === undefined ? f : { dev: f.dev, ino: f.ino, ctimeMs: f.ctimeMs, ignores: f.ignores, through });
      else o.gone?.(rel);
      if (!f || (o.enter && !o.enter(rel, gen))) continue;
      if (o.files && f.files.length) o.files(rel, f.files);
      for (const name of f.links) links.push(rel === '' ? name : `${rel}/${name}`);
      for (const name of f.ignores) ignoreFiles.push(rel === '' ? name : `${rel}/${name}`);
      if (f.git && rel !== '') nestedGit = true;
      // Last pushed, first entered: the subfolders in name order (glob's answer then comes nearly sorted).
      for (let i = f.dirs.length - 1; i >= 0; i--) {
        const name = f.dirs[i]!;
        if (!o.prune(name)) stack.push(rel === '' ? name : `${rel}/${name}`);
      }
    }
    this.lastReads = reads;
    return { links, ignoreFiles, nestedGit, generation: gen, timedOut: false, aborted: false };
  }

  /**
   * Which ignore files a folder holds, as list() call `generation` saw it: undefined when that
   * call did not confirm the folder, or another list() has run since (then read them all). Saves
   * three failed opens per folder when ignore rules above the start make glob read every folder's.
   */
  ignoreFilesIn(abs: string, generation: number): readonly string[] | undefined {
    if (generation !== this.generation) return undefined;
    const f = this.folders.get(abs);
    return f && f.seen === generation ? f.ignores : undefined;
  }

  /**
   * A folder's device, inode and ctime as list() call `generation` observed them (its lstat in
   * that call, or the fstat of its read), or undefined (not seen by that call, or another ran since).
   */
  observed(abs: string, generation: number): { dev: number; ino: number; ctimeMs: number } | undefined {
    if (generation !== this.generation) return undefined;
    const f = this.folders.get(abs);
    return f && f.seen === generation ? f : undefined;
  }

  /** The record kept under `abs`, looked at (and read when needed) by `look`: abs itself, or a path through the pinned start. */
  private folder(abs: string, gen: number, onRead: () => void, look: string): Folder | null {
    let st: Stats | undefined;
    try { st = lstatSync(look, { throwIfNoEntry: false }); } catch { /* unreadable */ }
    if (!st?.isDirectory()) {
      this.forget(abs);
      return null;
    }
    const known = this.folders.get(abs);
    if (known && known.trusted && known.ino === st.ino && known.dev === st.dev && known.ctimeMs === st.ctimeMs) {
      known.seen = gen;
      return known;
    }
    onRead();
    const f = readFolder(look, this.racyMs, gen);
    this.forget(abs);
    if (!f) return null;
    const size = recordBytes(abs, f);
    if (this.folders.size >= LINK_CACHE_MAX_DIRS || budget.bytes + size > LINK_CACHE_MAX_BYTES) this.clear();
    // Still over: other caches hold the budget. Used for this call, not kept (observed() knows it not).
    if (budget.bytes + size > LINK_CACHE_MAX_BYTES) return f;
    this.folders.set(abs, f);
    this.account.bytes += size;
    budget.bytes += size;
    return f;
  }

  private forget(abs: string): void {
    const f = this.folders.get(abs);
    if (!f) return;
    this.folders.delete(abs);
    const size = recordBytes(abs, f);
    this.account.bytes -= size;
    budget.bytes -= size;
  }

  /** Forgets every record (and gives their bytes back to the process's budget). */
  clear(): void {
    this.folders.clear();
    budget.bytes -= this.account.bytes;
    this.account.bytes = 0;
  }
}

/** One folder's links and subfolders, with the inode and ctime read before its entries (`look`: its path, or one through the pinned start). */
function readFolder(look: string, racyMs: number, seen: number): Folder | null {
  const started = Date.now();
  let fd = -1;
  try {
    fd = openSync(look, DIR_FLAGS);
    const st = fstatSync(fd);
    const entries = readdirSync(HAS_PROC_FD ? `/proc/self/fd/${fd}` : look, { withFileTypes: true });
    const links: string[] = [];
    const dirs: string[] = [];
    const files: string[] = [];
    const found = new Set<string>();
    let git = false;
    for (const e of entries) {
      if (e.isSymbolicLink()) links.push(e.name);
      else if (e.isDirectory()) dirs.push(e.name);
      else if (e.isFile()) files.push(e.name);
      if (e.name.charCodeAt(0) === 46 && RG_IGNORE_FILES.includes(e.name)) found.add(e.name);
      else if (e.name === '.git') git = true;
    }
    const ignores = RG_IGNORE_FILES.filter((n) => found.has(n));
    // In name order (code units, as glob sorts its answer): a walk of the records lists each folder's files sorted.
    dirs.sort();
    files.sort();
    return { dev: st.dev, ino: st.ino, ctimeMs: st.ctimeMs, trusted: started - st.ctimeMs > racyMs, links, dirs, files, ignores, git, seen };
  } catch {
    return null; /* gone, a link, or unreadable: nothing listed, as find lists nothing there */
  } finally {
    if (fd >= 0) try { closeSync(fd); } catch { /* already closed */ }
  }
}
