import { closeSync, constants, fstatSync, lstatSync, openSync, readlinkSync, statfsSync, type Stats } from 'node:fs';
import { ToolError } from '../../core/errors.js';
import { inFolder } from '../../workspace/dir-stat.js';
import { realFolders } from '../walk/real-dirs.js';
import { RACY_MS } from '../walk/link-cache.js';

const HAS_PROC_FD = process.platform === 'linux';
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
/** Folder descriptors a pinned re-check keeps open at most (the oldest are closed first). */
export const PINNED_DIR_CACHE = 256;

export interface Candidate { rel: string; link: boolean }
/** A folder's identity (device and inode), e.g. the one the lister was pinned to. */
export interface FolderId { dev: number; ino: number }

export interface RecheckHooks {
  /** Test seam: runs after an entry's folder was checked, before the entry is. */
  afterFolder?: (dirRel: string) => void;
}

/** Checks candidates one at a time, as an external lister reports them; close() when done. */
export interface Rechecker {
  check(c: Candidate): boolean;
  /** The entry's lstat, when every folder on its way is still a real folder; else undefined. */
  lstat(rel: string): Stats | undefined;
  close(): void;
}

/** The folder part of a '/'-separated relative path ('' for an entry of the base). */
export const dirOf = (rel: string) => { const s = rel.lastIndexOf('/'); return s < 0 ? '' : rel.slice(0, s); };
const kept = (c: Candidate, st: Stats | undefined) => (c.link ? !!st?.isSymbolicLink() : !!st?.isFile());

/**
 * Re-checks on disk what an external lister (ripgrep) reported under `base`: every folder on the
 * way still a real folder, the entry still a file (or still a link). On Linux each entry is
 * lstat'ed through a descriptor of its folder, and each folder is opened O_DIRECTORY|O_NOFOLLOW
 * through its parent's descriptor (/proc/self/fd/<parent>/<name>), starting from `base` (opened
 * the same way and checked through /proc/self/fd to be `base`): a folder swapped for a link at any
 * moment cannot make a name pass whose file exists only outside, since a descriptor stays on the
 * folder it was opened on. Elsewhere: by path.
 */
export function openRechecker(base: string, hooks: RecheckHooks = {}, expect?: FolderId): Rechecker {
  return HAS_PROC_FD ? new PinnedRechecker(base, hooks, expect) : byPath(base, hooks);
}

/**
 * Each path's lstat through pinned folder descriptors (openRechecker on `rootAbs`, expected to be
 * `expect` when given), the thread given back every 512 paths: a folder swapped for a link to
 * outside cannot make an outside file's state answer for a name.
 */
export async function lstatPinned(rels: readonly string[], rootAbs: string, expect?: FolderId): Promise<Array<Stats | undefined>> {
  const pinned = openRechecker(rootAbs === '/' ? '' : rootAbs, {}, expect);
  const out = new Array<Stats | undefined>(rels.length);
  try {
    for (let i = 0; i < rels.length; i++) {
      if (i > 0 && i % 512 === 0) await new Promise<void>((r) => setImmediate(r));
      out[i] = pinned.lstat(rels[i]!);
    }
  } finally {
    pinned.close();
  }
  return out;
}

/** The whole list at once (tests, and callers that have it). */
export function recheckCandidates(base: string, candidates: Candidate[], hooks: RecheckHooks = {}): { ok: Candidate[]; moved: number } {
  const r = openRechecker(base, hooks);
  const ok: Candidate[] = [];
  let moved = 0;
  try {
    for (const c of candidates) if (r.check(c)) ok.push(c); else moved++;
  } finally {
    r.close();
  }
  return { ok, moved };
}

function byPath(base: string, hooks: RecheckHooks): Rechecker {
  const realDir = realFolders(base);
  const lstat = (rel: string): Stats | undefined => {
    const dirRel = dirOf(rel);
    try {
      if (!realDir(dirRel)) return undefined;
      hooks.afterFolder?.(dirRel);
      return lstatSync(`${base}/${rel}`, { throwIfNoEntry: false });
    } catch { return undefined; /* gone or unreadable: left out */ }
  };
  return { lstat, check: (c) => kept(c, lstat(c.rel)), close() {} };
}

/**
 * Folder descriptors by folder (relative to base; -1: not a real folder), opened on demand, each
 * through its parent's, and kept (up to PINNED_DIR_CACHE) so that entries streaming in folder by
 * folder cost one lstat each.
 */
class PinnedRechecker implements Rechecker {
  private readonly fds = new Map<string, number>();
  private root = -1;

  constructor(base: string, private readonly hooks: RecheckHooks, expect?: FolderId) {
    try { this.root = openSync(base || '/', DIR_FLAGS); } catch { /* gone, a link or unreadable */ }
    try {
      if (this.root >= 0 && readlinkSync(`/proc/self/fd/${this.root}`) !== (base || '/')) this.dropRoot();
      // `base` may name another folder now (one above it swapped with a copy): then nothing the
      // lister reported from the folder it was pinned to is checked here, every entry has moved.
      if (this.root >= 0 && expect) { const st = fstatSync(this.root); if (st.dev !== expect.dev || st.ino !== expect.ino) this.dropRoot(); }
    } catch { if (this.root >= 0) this.dropRoot(); }
  }

  private dropRoot() {
    closeSync(this.root);
    this.root = -1;
  }

  private dirFd(dirRel: string): number {
    if (dirRel === '') return this.root;
    const cached = this.fds.get(dirRel);
    if (cached !== undefined) return cached;
    const slash = dirRel.lastIndexOf('/');
    const parent = this.dirFd(slash < 0 ? '' : dirRel.slice(0, slash));
    const seg = dirRel.slice(slash + 1);
    let fd = -1;
    // '.', '..' and empty segments (a leading '/' is one) never name a folder below (rg prints none; a caller's bug must not climb out).
    if (parent >= 0 && slash !== 0 && seg !== '' && seg !== '.' && seg !== '..') {
      try { fd = openSync(`/proc/self/fd/${parent}/${seg}`, DIR_FLAGS); } catch (e) {
        // Out of descriptors is not "changed place": an answer quietly missing entries would be wrong.
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'EMFILE' || code === 'ENFILE') throw new ToolError('IOError', 'The server ran out of file descriptors while checking the results; retry, or raise its open-file limit (ulimit -n).');
        /* a link, gone or unreadable */
      }
    }
    // The parent was used above and is not needed again for this entry: the oldest may go.
    if (this.fds.size >= PINNED_DIR_CACHE) {
      const [oldest, ofd] = this.fds.entries().next().value as [string, number];
      this.fds.delete(oldest);
      if (ofd >= 0) closeSync(ofd);
    }
    this.fds.set(dirRel, fd);
    return fd;
  }

  lstat(rel: string): Stats | undefined {
    const slash = rel.lastIndexOf('/');
    const dirRel = slash < 0 ? '' : rel.slice(0, slash);
    const name = rel.slice(slash + 1);
    if (slash === 0 || name === '' || name === '.' || name === '..') return undefined;
    const fd = this.dirFd(dirRel);
    if (fd < 0) return undefined;
    this.hooks.afterFolder?.(dirRel);
    try {
      return lstatSync(`/proc/self/fd/${fd}/${name}`, { throwIfNoEntry: false });
    } catch { return undefined; /* unreadable */ }
  }

  check(c: Candidate): boolean {
    return kept(c, this.lstat(c.rel));
  }

  close(): void {
    for (const fd of this.fds.values()) if (fd >= 0) try { closeSync(fd); } catch { /* already closed */ }
    this.fds.clear();
    if (this.root >= 0) try { closeSync(this.root); } catch { /* already closed */ }
    this.root = -1;
  }
}

/**
 * File systems whose timestamps this kernel sets from its own clock (statfs f_type): ext2/3/4,
 * xfs, btrfs, tmpfs, overlayfs, f2fs, zfs, bcachefs, ramfs. Not network or FUSE file systems,
 * where a server's clock sets them.
 */
const LOCAL_FS = new Set([0xef53, 0x58465342, 0x9123683e, 0x01021994, 0x794c7630, 0xf2f52010, 0x2fc12fc1, 0xca451a4e, 0x858458f6]);

export interface Observation { dev: number; ino: number; ctimeMs: number; through?: string }

/**
 * Folders whose entries provably did not change while an external lister (ripgrep) ran, so what
 * it listed in them needs no re-check one entry at a time. A folder is quiet when it and every
 * folder on its way from `base` are found now (`after`, once the lister has exited) with a ctime
 * older than `cutoff` (the lister's start minus a margin far above the file system's clock tick)
 * — and, when `before` is given (an observation made after the lister started), with the same
 * inode and ctime as then. Creating, removing or renaming an entry sets its folder's ctime to the
 * current time, and no user can set a ctime back: so no entry of any folder on the way was
 * created, removed, renamed or swapped for a link from the lister's start until now, and each
 * path it opened named the folder found now. The base is the lister's pinned working folder (`pinnedFd`), and the
 * `after` look goes through it (a by-path look could land on another tree, as `before` may). Only on
 * Linux, on a local file system (LOCAL_FS) and on the base's device (a mount inside the tree is
 * not quiet). Call it only after the lister has exited: answers are remembered.
 */
/** One folder at a time (remembered), or `all` for many at once (fewer looks: each folder's way is looked at once for all). */
export type QuietCheck = ((dirRel: string) => boolean) & {
  all(dirs: Iterable<string>): Set<string>;
  /**
   * `all` for the entries' folders, with each entry's lstat made first, in the same stretch inside
   * the pinned folder and before any look. For an entry whose folder comes out quiet the lstat is
   * proven to have landed on the entry rg listed: its folder and every folder on its way were found
   * unchanged since before rg started by looks made after it. `stats` has no key for an entry
   * whose path is not plain (empty, absolute, or with ".", ".." or empty segments).
   */
  withStats(rels: readonly string[]): { quiet: Set<string>; stats: Map<string, Stats | undefined> };
  /**
   * `all` for folders whose own look was made during the walk through the pinned folder
   * (`before` records with `through` this pinned folder's /proc path: LinkCache.listAsync with
   * ListHooks.pinned). That look stands as the first: it must be old, on the pinned device, and
   * the pinned folder itself for ''. Only the folders on another's way are looked at again,
   * deepest first, after every look below them: each found unchanged since before the walk proves
   * that the looks below it landed in it. A record without `through`, or through another folder,
   * is not quiet.
   */
  walked(dirs: Iterable<string>): Set<string>;
};

/** How many '/' a path holds. */
function slashes(r: string): number {
  let n = 0;
  for (let i = r.indexOf('/'); i >= 0; i = r.indexOf('/', i + 1)) n++;
  return n;
}

/** A path relative to a folder that names an entry below it: no empty, "." or ".." segment (so no lookup leaves it). */
const plainRel = (rel: string) => rel !== '' && rel.split('/').every((seg) => seg !== '' && seg !== '.' && seg !== '..');

/**
 * How long before the lister started a folder's ctime must be for it to count as old. The kernel
 * stamps a change with its coarse clock (at most one tick, 1-10 ms, behind the real time) truncated
 * to the file system's granularity: nanoseconds on ext4 with large inodes, XFS, btrfs, tmpfs, f2fs;
 * whole seconds on ext4 with 128-byte inodes. A ctime that is not a multiple of 10 ms shows a
 * granularity finer than that, and FINE_MS covers tick and granularity with room to spare; any
 * other ctime (whole seconds, or by chance a round value) gets RACY_MS.
 */
export const FINE_MS = 100;
export function ctimeMargin(ctimeMs: number): number {
  return ctimeMs % 10 !== 0 ? FINE_MS : RACY_MS;
}

export function quietFolders(o: {
  base: string; pinnedFd: number;
  /** When the lister started (Date.now() before it was spawned): a ctime counts as old when older than this less ctimeMargin. */
  started?: number;
  /** Or one fixed cutoff for every ctime (tests). */
  cutoff?: number;
  before?: (abs: string) => Observation | undefined; afterLook?: (rel: string) => void;
  /** Test seam: runs after withStats' lstats, before its first look. */
  afterStats?: () => void;
}): QuietCheck {
  const started = o.started;
  const fixed = o.cutoff;
  const old = (ctimeMs: number) => (fixed !== undefined ? ctimeMs < fixed : started !== undefined && ctimeMs < started - ctimeMargin(ctimeMs));
  const no: QuietCheck = Object.assign(() => false, { all: () => new Set<string>(), walked: () => new Set<string>(), withStats: () => ({ quiet: new Set<string>(), stats: new Map<string, Stats | undefined>() }) });
  if (!HAS_PROC_FD) return no;
  let pinned: Stats;
  try {
    // The pinned folder's file system (by path, `base` may name another folder by now).
    if (!LOCAL_FS.has(statfsSync(`/proc/self/fd/${o.pinnedFd}`).type)) return no;
    pinned = fstatSync(o.pinnedFd);
  } catch { return no; }
  /** One folder seen now, alone (its way is not judged here); `inside`: the path that names the pinned folder, with its slash ('' once inside it). */
  const looksQuiet = (rel: string, inside: string): boolean => {
    const abs = rel === '' ? (o.base || '/') : `${o.base}/${rel}`;
    const b = o.before?.(abs);
    if (o.before && !(b && old(b.ctimeMs) && b.dev === pinned.dev)) return false;
    if (rel === '' && b && b.ino !== pinned.ino) return false;
    let v = false;
    try {
      // Now, through the pinned folder (where the lister walked), not by path: a folder above
      // `base` swapped with an old copy of the tree must not make both looks land on the copy.
      const a = rel === '' ? fstatSync(o.pinnedFd) : lstatSync(inside + rel, { throwIfNoEntry: false });
      // ctime only moves forward: one older than the cutoff, seen after the lister exited, means
      // no entry changed from the lister's start until now (`before`, when given, must agree).
      v = !!a?.isDirectory() && a.dev === pinned.dev && old(a.ctimeMs) && (!b || (a.ino === b.ino && a.ctimeMs === b.ctimeMs));
    } catch { /* unreadable: not quiet */ }
    o.afterLook?.(rel);
    return v;
  };
  const pinnedPath = `/proc/self/fd/${o.pinnedFd}`;
  /** A folder's look made during the walk, through the pinned folder, taken as its first look (`walked`). */
  const seenQuiet = (rel: string): boolean => {
    const b = o.before?.(rel === '' ? (o.base || '/') : `${o.base}/${rel}`);
    return !!b && b.through === pinnedPath && b.dev === pinned.dev && old(b.ctimeMs) && (rel !== '' || b.ino === pinned.ino);
  };
  const memo = new Map<string, boolean>();
  const quiet = (rel: string): boolean => {
    let v = memo.get(rel);
    if (v === undefined) memo.set(rel, (v = judgeAll([rel], (r) => looksQuiet(r, `${pinnedPath}/`)).has(rel)));
    return v;
  };
  // Many folders: every look in one stretch inside the pinned folder (dir-stat.ts: no /proc walk per look).
  quiet.all = (dirs: Iterable<string>) => inFolder(pinnedPath, (inside) => judgeAll(dirs, (rel) => looksQuiet(rel, inside)));
  quiet.walked = (dirs: Iterable<string>) => inFolder(pinnedPath, (inside) => judgeAll(dirs, (rel) => looksQuiet(rel, inside), seenQuiet));
  quiet.withStats = (rels: readonly string[]) => inFolder(pinnedPath, (inside) => {
    const stats = new Map<string, Stats | undefined>();
    for (const rel of rels) {
      if (!plainRel(rel) || stats.has(rel)) continue;
      let st: Stats | undefined;
      try { st = lstatSync(inside + rel, { throwIfNoEntry: false }); } catch { /* unreadable: no answer */ }
      stats.set(rel, st);
    }
    o.afterStats?.();
    return { quiet: judgeAll(rels.map(dirOf), (rel) => looksQuiet(rel, inside)), stats };
  });
  return quiet;
}

/**
 * Which of `dirs` are quiet, with each folder involved looked at once, and each folder on the way
 * of another once more afterwards. A look at a/b follows a by name: it lands on the real a/b only
 * if a still held it then. So, first every folder (pass 1), then every folder that is on another's
 * way again, deepest first, up to the pinned one (pass 2): a's second look comes after every look
 * below it, and an old ctime then proves a unchanged from rg's start until after them; a's own
 * second look is proven the same way by its parent's, and the pinned folder needs no path.
 * `firstLook` replaces pass 1 when each folder was already looked at through the pinned folder
 * while the walk ran (QuietCheck.walked).
 */
function judgeAll(dirs: Iterable<string>, looksQuiet: (rel: string) => boolean, firstLook: (rel: string) => boolean = looksQuiet): Set<string> {
  const wanted = [...new Set(dirs)];
  const all = new Set<string>(wanted);
  const onWay = new Set<string>();
  for (const d of wanted) {
    for (let r = d; r !== '';) {
      r = dirOf(r);
      const seen = onWay.has(r);
      onWay.add(r);
      all.add(r);
      if (seen) break;
    }
  }
  const first = new Map<string, boolean>();
  for (const r of all) first.set(r, firstLook(r));
  // Deepest first; each depth counted once (not at every comparison of the sort).
  const byDepth = [...onWay].map((r) => ({ r, d: r === '' ? -1 : slashes(r) })).sort((x, y) => y.d - x.d);
  const second = new Map<string, boolean>();
  for (const { r } of byDepth) second.set(r, first.get(r) === true && looksQuiet(r));
  const wayOk = new Map<string, boolean>();
  const way = (r: string): boolean => {
    if (r === '') return second.get('') ?? false;
    let v = wayOk.get(r);
    if (v === undefined) wayOk.set(r, (v = second.get(r) === true && way(dirOf(r))));
    return v;
  };
  const out = new Set<string>();
  for (const d of wanted) if (first.get(d) === true && (d === '' || way(dirOf(d)))) out.add(d);
  return out;
}
