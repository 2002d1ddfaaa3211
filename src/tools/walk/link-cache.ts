import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, type Stats } from 'node:fs';

const HAS_PROC_FD = process.platform === 'linux';
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
/** Folders remembered at most (all are forgotten past this, and read again). */
export const LINK_CACHE_MAX_DIRS = 500_000;
/**
 * A folder is trusted from its record only when its ctime was this much older than the moment it
 * was read: a change made in the same tick of a coarse file-system clock right after the read
 * would otherwise leave the ctime as recorded (git's "racy" entries, handled the same way).
 */
export const RACY_MS = 2000;

interface Folder {
  ino: number;
  ctimeMs: number;
  trusted: boolean;
  links: string[];
  dirs: string[];
}

export interface LinkList {
  /** Paths of the symbolic links found, relative to the start, '/'-separated. */
  links: string[];
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

  constructor(private readonly racyMs = RACY_MS) {}

  list(startAbs: string, o: { prune: (name: string) => boolean; deadline: number; signal?: AbortSignal }): LinkList {
    const links: string[] = [];
    const base = startAbs === '/' ? '' : startAbs;
    const stack: string[] = [''];
    let reads = 0;
    let n = 0;
    while (stack.length) {
      if ((++n & 255) === 0) {
        if (o.signal?.aborted) return { links, timedOut: false, aborted: true };
        if (Date.now() > o.deadline) return { links, timedOut: true, aborted: false };
      }
      const rel = stack.pop()!;
      const abs = rel === '' ? startAbs : `${base}/${rel}`;
      const f = this.folder(abs, () => reads++);
      if (!f) continue;
      for (const name of f.links) links.push(rel === '' ? name : `${rel}/${name}`);
      for (const name of f.dirs) if (!o.prune(name)) stack.push(rel === '' ? name : `${rel}/${name}`);
    }
    this.lastReads = reads;
    return { links, timedOut: false, aborted: false };
  }

  private folder(abs: string, onRead: () => void): Folder | null {
    let st: Stats | undefined;
    try { st = lstatSync(abs, { throwIfNoEntry: false }); } catch { /* unreadable */ }
    if (!st?.isDirectory()) {
      this.folders.delete(abs);
      return null;
    }
    const known = this.folders.get(abs);
    if (known && known.trusted && known.ino === st.ino && known.ctimeMs === st.ctimeMs) return known;
    onRead();
    const f = readFolder(abs, this.racyMs);
    if (!f) {
      this.folders.delete(abs);
      return null;
    }
    if (this.folders.size >= LINK_CACHE_MAX_DIRS) this.folders.clear();
    this.folders.set(abs, f);
    return f;
  }
}

/** One folder's links and subfolders, with the inode and ctime read before its entries. */
function readFolder(abs: string, racyMs: number): Folder | null {
  const started = Date.now();
  let fd = -1;
  try {
    fd = openSync(abs, DIR_FLAGS);
    const st = fstatSync(fd);
    const entries = readdirSync(HAS_PROC_FD ? `/proc/self/fd/${fd}` : abs, { withFileTypes: true });
    const links: string[] = [];
    const dirs: string[] = [];
    for (const e of entries) {
      if (e.isSymbolicLink()) links.push(e.name);
      else if (e.isDirectory()) dirs.push(e.name);
    }
    return { ino: st.ino, ctimeMs: st.ctimeMs, trusted: started - st.ctimeMs > racyMs, links, dirs };
  } catch {
    return null; /* gone, a link, or unreadable: nothing listed, as find lists nothing there */
  } finally {
    if (fd >= 0) try { closeSync(fd); } catch { /* already closed */ }
  }
}
