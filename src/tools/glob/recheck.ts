import { closeSync, constants, lstatSync, openSync, readlinkSync } from 'node:fs';
import { realFolders } from '../walk/real-dirs.js';

const HAS_PROC_FD = process.platform === 'linux';
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

export interface Candidate { rel: string; link: boolean }

export interface RecheckHooks {
  /** Test seam: runs after the folder of a group of entries was checked, before its entries are. */
  afterFolder?: (dirRel: string) => void;
}

const dirOf = (rel: string) => { const s = rel.lastIndexOf('/'); return s < 0 ? '' : rel.slice(0, s); };
const entryOf = (rel: string) => rel.slice(rel.lastIndexOf('/') + 1);
const kept = (c: Candidate, st: ReturnType<typeof lstatSync> | undefined) => (c.link ? !!st?.isSymbolicLink() : !!st?.isFile());

/**
 * Re-checks on disk what an external lister (ripgrep) reported under `base`: every folder on the
 * way still a real folder, the entry still a file (or still a link). On Linux each entry is
 * lstat'ed through a descriptor of its folder, and each folder is opened O_DIRECTORY|O_NOFOLLOW
 * through its parent's descriptor (/proc/self/fd/<parent>/<name>), starting from `base` (opened
 * the same way and checked through /proc/self/fd to be `base`): a folder swapped for a link at any
 * moment cannot make a name pass whose file exists only outside. Candidates are taken folder by
 * folder and only the chain of folders to the current one is open. Elsewhere: by path.
 */
export function recheckCandidates(base: string, candidates: Candidate[], hooks: RecheckHooks = {}): { ok: Candidate[]; moved: number } {
  return HAS_PROC_FD ? pinned(base, candidates, hooks) : byPath(base, candidates, hooks);
}

function byPath(base: string, candidates: Candidate[], hooks: RecheckHooks): { ok: Candidate[]; moved: number } {
  const realDir = realFolders(base);
  const ok: Candidate[] = [];
  let moved = 0;
  for (const c of candidates) {
    const dirRel = dirOf(c.rel);
    let good = false;
    try {
      if (realDir(dirRel)) {
        hooks.afterFolder?.(dirRel);
        good = kept(c, lstatSync(`${base}/${c.rel}`, { throwIfNoEntry: false }));
      }
    } catch { /* gone or unreadable: left out */ }
    if (good) ok.push(c); else moved++;
  }
  return { ok, moved };
}

/** Sort key: folder by folder ('/' below every other character), so a folder's subtree is contiguous. */
const folderKey = (rel: string) => dirOf(rel).replaceAll('/', '\u0000');

function pinned(base: string, candidates: Candidate[], hooks: RecheckHooks): { ok: Candidate[]; moved: number } {
  const sorted = candidates.map((c) => ({ c, key: folderKey(c.rel) })).sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0)).map((x) => x.c);
  const ok: Candidate[] = [];
  let moved = 0;
  // stack[i] = descriptor of the folder named by the first i segments (stack[0] = base); -1 = not a real folder.
  const stack: number[] = [];
  const names: string[] = [];
  try {
    let root = -1;
    try { root = openSync(base || '/', DIR_FLAGS); } catch { /* gone, a link or unreadable */ }
    stack.push(root);
    try { if (root >= 0 && readlinkSync(`/proc/self/fd/${root}`) !== (base || '/')) { closeSync(root); stack[0] = -1; } } catch { closeSync(root); stack[0] = -1; }
    let lastDir: string | null = null;
    let dirFd = -1;
    for (const c of sorted) {
      const dirRel = dirOf(c.rel);
      if (dirRel !== lastDir) {
        lastDir = dirRel;
        const segs = dirRel === '' ? [] : dirRel.split('/');
        let common = 0;
        while (common < names.length && common < segs.length && names[common] === segs[common]) common++;
        while (names.length > common) { names.pop(); const fd = stack.pop()!; if (fd >= 0) closeSync(fd); }
        for (let i = common; i < segs.length; i++) {
          const parent = stack[stack.length - 1]!;
          let fd = -1;
          if (parent >= 0) {
            try { fd = openSync(`/proc/self/fd/${parent}/${segs[i]}`, DIR_FLAGS); } catch { /* a link, gone or unreadable */ }
          }
          names.push(segs[i]!);
          stack.push(fd);
        }
        dirFd = stack[stack.length - 1]!;
        if (dirFd >= 0) hooks.afterFolder?.(dirRel);
      }
      let good = false;
      if (dirFd >= 0) {
        try { good = kept(c, lstatSync(`/proc/self/fd/${dirFd}/${entryOf(c.rel)}`, { throwIfNoEntry: false })); } catch { /* unreadable */ }
      }
      if (good) ok.push(c); else moved++;
    }
  } finally {
    for (const fd of stack) if (fd >= 0) try { closeSync(fd); } catch { /* already closed */ }
  }
  return { ok, moved };
}
