import { fstatSync } from 'node:fs';
import picomatch from 'picomatch';
import { ToolError } from '../../core/errors.js';
import { RgUnavailable } from '../grep/rg.js';
import type { ResolvedPath } from '../../core/types.js';
import { CASE_INSENSITIVE_FS } from '../../workspace/path-rules.js';
import { openDir } from '../../workspace/safe-open.js';
import type { Workspace } from '../../workspace/workspace.js';
import { EntryFilter, STATE_DIR_NAME, type FolderFilter, type SkipReason } from '../walk/entry-filter.js';
import type { SeenFolder } from '../walk/link-cache.js';
import { ancestorIgnores, IgnoreStack, readIgnoreFilesSync, RG_IGNORE_FILES, rgReadsOtherwise } from '../walk/ignore-stack.js';
import type { CompiledPattern } from './pattern.js';
import { splitSegments } from './pattern.js';
import { dirOf, openRechecker, quietFolders } from './recheck.js';
import { rgFiles } from './rg-list.js';

const HAS_PROC_FD = process.platform === 'linux';

export interface EngineInput {
  ws: Workspace;
  /** Where the listing starts (the glob's path plus its literal prefix); admitted by Workspace.resolve. */
  start: ResolvedPath;
  /** relToRoot of the folder the caller named (walked even when ignored). */
  named: string;
  compiled: CompiledPattern;
  /** The literal prefix plus '/', or '' (what lies between `named` and `start`). */
  prefix: string;
  hidden: boolean;
  gitignore: boolean;
  signal?: AbortSignal;
  deadline: number;
}

export interface EngineOutput {
  /** Display paths, unsorted. */
  matches: string[];
  policySkipped: number;
  /** Entries looked at (stats only). */
  visited: number;
  stopped: 'time_cap' | null;
  /** Files taken without a check of their own: their folders provably did not change (quietFolders). */
  quiet: number;
}

/** One alternative inside braces: plain name characters, no `..` (which picomatch reads as a range). */
const ALT = '(?:(?!\\.\\.)[A-Za-z0-9._*?-])+';
/** Names rg's globs and picomatch read alike: plain characters and `{a,b}` groups of two or more alternatives, not nested. */
const PLAIN_NAME = new RegExp(`^(?:[A-Za-z0-9._*?,-]|\\{${ALT}(?:,${ALT})+\\})+$`);

/**
 * The pattern's last segment as an rg file-name glob (a pre-filter), when it is certainly a
 * superset of what the pattern matches: braces only as `{a,b}` (picomatch takes `{a}`, `{}`,
 * `{a,}` and stray braces literally, expands `{1..3}`, and rg refuses nested ones), `?` widened
 * to `*` (one UTF-16 unit to picomatch, one character to rg). None when every name passes
 * (`*`): rg would then enter every ignored folder (an override admits what it matches).
 */
export function nameFilter(compiled: CompiledPattern): string | null {
  if (CASE_INSENSITIVE_FS) return null;
  const segs = splitSegments(compiled.pattern);
  const last = segs?.[segs.length - 1];
  if (!last || last.includes('**') || !PLAIN_NAME.test(last)) return null;
  const name = last.replace(/\?/g, '*');
  return /^\*+$/.test(name) ? null : name;
}

/** nameFilter's glob as a regular expression over one file name (names with a dot too: a superset). */
const globRe = (glob: string): RegExp => picomatch.makeRe(glob, { dot: true });

/** The index could not prove what it read: glob.ts answers with the walker (and says why). */
export class IndexStale extends RgUnavailable {}

interface DirState {
  /** Nothing on the way here is denied, asked, hidden, ignored or the state dir. */
  ok: boolean;
  /** The walker would read this folder (the pattern can match below it). */
  read: boolean;
  stack: IgnoreStack | null;
}

/**
 * glob through `rg --files`: ripgrep lists (ignore files and hidden names as the walker
 * applies them), and every entry is then judged here exactly as the walker judges it —
 * THE EntryFilter for the entry and each folder on its way (deny lists, policy rules, the
 * state dir; an ask rule counted once per entry the walker would have visited), the
 * walker's own ignore stack when rules above the start apply, the compiled pattern — and
 * re-checked on disk (each folder still a folder, not a link; the entry still a file, the link
 * still a link), so a folder swapped for a link while rg ran cannot bring in what lies outside.
 * A file is taken without its own check only when every folder on its way provably did not
 * change from before rg started until after it exited (quietFolders: inode and ctime). rg never
 * lists a symbolic link without following it: the links come from the workspace's LinkCache
 * (read while rg runs) and are judged by the walker's own ignore stack.
 */
export async function rgGlob(bin: string | null, o: EngineInput): Promise<EngineOutput> {
  const { ws, start, compiled, prefix } = o;
  /** The index engine: no rg, the files come from the link cache's folder records (see indexGlob). */
  const index = bin === null;
  const filter = new EntryFilter(ws, { hidden: o.hidden, gitignore: o.gitignore });
  const wsRoot = ws.roots[start.rootIndex]!;
  const startStack = o.gitignore ? await ancestorIgnores(wsRoot, start.relToRoot, RG_IGNORE_FILES, o.named, ws.ignoreCache) : IgnoreStack.empty(ws.ignoreCache);
  // rg reads no ignore file above the start (--no-ignore-parent) and prunes by the rules below it:
  // a `!` rule of a stronger kind above could show what those hide (a root .rgignore's `!x.h` over
  // a folder's .ignore `**`), and rg would never list it to be judged (review 25). The walker answers.
  if (!index && startStack.reIncludesOverWeaker) throw new RgUnavailable('an .ignore or .rgignore above the folder re-includes names (a "!" rule), which ripgrep does not read from there');
  const asks = !!ws.gate?.asks;
  // With ask rules every entry is judged (and counted), as by the walker; without them only the
  // entries whose file name can match are listed (a --glob override, below).
  const name = asks || index ? null : nameFilter(compiled);
  // The index tests a file's name first, by the same superset rg's override is given (a name that
  // fails it cannot match; with ask rules every entry is judged, and counted, as by the walker).
  const indexName = index && !asks ? nameFilter(compiled) : null;
  // picomatch also takes a name equal to the pattern itself (`{a,b}.txt` names a file so called).
  const lastSeg = splitSegments(compiled.pattern)?.at(-1);
  const nameRe = indexName ? globRe(indexName) : null;
  const nameOk = nameRe ? (n: string) => nameRe.test(n) || n === lastSeg : null;
  // The walker's stack decides for every entry when rg's own ignore verdicts on files cannot be
  // taken: ignore files above the start apply (rg reads none there, --no-ignore-parent), or the
  // listing uses a --glob override, which rg applies INSTEAD of the ignore files (and of the
  // hidden test) to the files it matches. Folders are still pruned by rg's ignore rules (an
  // override never admits a folder it does not match; one it matches, say `x.h/`, is judged here).
  // Also when a folder below the start holds .git (known once the link cache has read the tree,
  // before rg's first file is judged): rg applies no .gitignore from above a nested repository.
  const emulate = index ? o.gitignore : startStack.size > 0 || (name !== null && o.gitignore);
  const base = start.abs === '/' ? '' : start.abs;

  // The deny lists are not handed to rg as exclusions: matching them costs rg more than the
  // filter below, which judges every entry anyway.
  const args: string[] = [];
  if (o.hidden) args.push('--hidden');
  if (!o.gitignore) args.push('--no-ignore');
  // The file-name filter is a --glob override, not a --type: a type is tested after the ignore
  // files, so rg matched every file of the tree against every .gitignore in force (the Linux
  // tree from its root, one thread: 163 vs 106 ms); a file the override does not match is
  // dropped before any ignore file is looked at, and the ones it matches are judged here.
  if (name) args.push(`--glob=${name}`);
  // Then the folders neither engine reads (a later glob wins over the filter, which would let rg
  // into a folder it names: `.*` names .git and the state dir, `*.*` names .cache).
  if (o.hidden) args.push(`--glob=!${STATE_DIR_NAME}/`);
  else if (name) args.push('--glob=!.*');
  if (o.hidden && o.gitignore) args.push('--glob=!.git/');

  /** The folders this call's list() confirmed or read (it reads every folder under the start): its own view, whatever other calls run. */
  const seenFolders = new Map<string, SeenFolder>();
  /** The pinned start's /proc path, once opened: ignore files are read through it, not by a path above the start. */
  let pinnedDir: string | null = null;
  const readIgnores = (rel: string): Array<string | null> => {
    // The link cache read every folder under the start during this call: only the ignore files it saw are opened.
    const seen = seenFolders.get(rel === '' ? start.abs : `${base}/${rel}`)?.ignores;
    const dir = pinnedDir ?? base;
    return readIgnoreFilesSync(rel === '' ? dir || '/' : `${dir}/${rel}`, seen ? new Set(seen) : null, RG_IGNORE_FILES);
  };
  const relToRootOf = (rel: string) => (start.relToRoot === '' ? rel : rel === '' ? start.relToRoot : `${start.relToRoot}/${rel}`);
  let policySkipped = 0;
  let visited = 0;
  const asked = new Set<string>();
  /** `verify`: the entry is counted only if it passes (a link, looked at through the pinned folders first). */
  const judge = (name: string, rel: string, type: 'dir' | 'file' | 'symlink', stack: IgnoreStack | null, verify?: () => boolean) =>
    counted(filter.check(name, relToRootOf(rel), `${base}/${rel}`, type, stack), rel, verify);
  /** A verdict counted as the walker counts it (see judge). */
  const counted = (why: SkipReason | null, rel: string, verify?: () => boolean) => {
    if (why === 'denied' || why === 'state') return why;
    if (verify && !verify()) return 'moved';
    // Denied entries and the state dir are not even counted (as in the walker): the count must not tell what lies there.
    visited++;
    if (why === 'policy' && !asked.has(rel)) { asked.add(rel); policySkipped++; }
    return why;
  };

  /**
   * Folders as the walker sees them. rg's files come from folders its own rules kept, so their
   * ignore verdict is taken from rg unless rules above the start apply (`withStacks` false);
   * links come from the link cache, which knows no ignore rules: the walker's stack judges every folder.
   */
  const folders = (withStacks: boolean) => {
    const dirs = new Map<string, DirState>();
    // A folder's stack (its own ignore files) is read when first needed: after the folder itself was looked at.
    const lazy = (ok: boolean, read: boolean, of: () => IgnoreStack | null): DirState => {
      let s: IgnoreStack | null | undefined;
      return { ok, read, get stack() { return s === undefined ? (s = of()) : s; } };
    };
    dirs.set('', lazy(true, true, () => (withStacks ? startStack.with(start.relToRoot, readIgnores('')) : null)));
    const state = (rel: string): DirState => {
      let s = dirs.get(rel);
      if (s) return s;
      const slash = rel.lastIndexOf('/');
      const parent = state(slash < 0 ? '' : rel.slice(0, slash));
      if (!parent.ok || !parent.read) s = { ok: false, read: false, stack: null };
      else {
        const dirName = rel.slice(slash + 1);
        const ok = !judge(dirName, rel, 'dir', parent.stack) && !(dirName === '.git' && o.gitignore);
        s = lazy(ok, ok && compiled.canContain(rel.split('/')), () => (ok && parent.stack ? parent.stack.with(relToRootOf(rel), readIgnores(rel)) : parent.stack));
      }
      dirs.set(rel, s);
      return s;
    };
    return state;
  };
  // Built once the start is pinned (the ignore files are read through it).
  let fileDirs: (rel: string) => DirState = () => { throw new Error('glob: folders judged before the start was opened'); };
  let linkDirs: ((rel: string) => DirState) | null = null;

  // The re-check through pinned folders: each folder on the way still a folder, the entry still a
  // file (or still a link). Links are checked as they arrive; files once rg has exited, unless
  // their folder provably did not change (quietFolders). Opened once the start is pinned, and held to be it.
  let checker: ReturnType<typeof openRechecker> | null = null;
  const matched: string[] = [];
  const pending: string[] = [];
  /** The folders the index engine entered (read, or taken from their record), relative to the start. */
  const entered: string[] = [];
  // Workspace.display, without its search of the roots when there is one.
  const show = ws.roots.length === 1 ? relToRootOf : (rel: string) => ws.display(`${base}/${rel}`);
  let quietOk = 0;
  const consider = (rel: string, link: boolean) => {
    if (rel === '' || rel.startsWith('/') || rel === '..' || rel.startsWith('../') || rel.endsWith('/..') || rel.includes('/../')) return;
    const matches = compiled.match(prefix + rel);
    if (!matches && !asks) return;
    const slash = rel.lastIndexOf('/');
    const dirRel = slash < 0 ? '' : rel.slice(0, slash);
    const dir = link ? (linkDirs ??= folders(o.gitignore))(dirRel) : fileDirs(dirRel);
    if (!dir.read) return;
    // A link (from the cache, read by path) is re-checked through the pinned folders before it is
    // counted or kept: one that moved, or lies outside through a folder swapped meanwhile, is left
    // out uncounted. Files wait for rg to exit (quiet folders need no check one by one).
    if (judge(rel.slice(slash + 1), rel, link ? 'symlink' : 'file', dir.stack, link ? () => checker!.check({ rel, link }) : undefined) || !matches) return;
    if (link) matched.push(show(rel));
    else pending.push(rel);
  };

  let opened;
  let r;
  try {
    opened = await openDir(start, ws);
    const cwd = HAS_PROC_FD ? `/proc/${process.pid}/fd/${opened.fh.fd}` : start.abs;
    if (HAS_PROC_FD) pinnedDir = `/proc/self/fd/${opened.fh.fd}`;
    const pinned = fstatSync(opened.fh.fd);
    checker = openRechecker(base, {}, { dev: pinned.dev, ino: pinned.ino });
    fileDirs = folders(emulate);
    linkDirs = emulate || index ? fileDirs : null;
    const started = Date.now();
    const rg = bin === null ? null : rgFiles(bin, args, { cwd, signal: o.signal, deadline: o.deadline, onItem: (rel) => consider(rel, false) });
    // While rg walks: the links (rg lists none), from the per-folder cache. Folders neither engine
    // lists are pruned: the state dir, .git unless nothing is ignored, dot-folders unless hidden.
    const prune = index ? () => false : o.hidden ? (n: string) => n === STATE_DIR_NAME || (o.gitignore && n === '.git') : (n: string) => n.charCodeAt(0) === 46;
    // The index engine judges each folder as the walker does before anything about it is looked at
    // (a denied, hidden or ignored folder is never read), takes each folder's files from its
    // record, current for this call, and gives up when a folder a proven parent listed is gone.
    let gone: string | null = null;
    const hooks = index ? {
      admit: (rel: string) => fileDirs(rel).read,
      enter: (rel: string) => { entered.push(rel); return true; },
      gone: (rel: string) => { gone ??= rel; },
      // consider() for each file of one folder, with the folder's part of the judging done once.
      files: (rel: string, names: readonly string[]) => {
        const dir = fileDirs(rel);
        if (!dir.read) return;
        let ff: FolderFilter | undefined;
        for (const n of names) {
          if ((nameOk && !nameOk(n)) || n === '' || n === '.' || n === '..' || n.includes('/')) continue;
          const r = rel === '' ? n : `${rel}/${n}`;
          const matches = compiled.match(prefix + r);
          if (!matches && !asks) continue;
          ff ??= filter.folder(relToRootOf(rel), rel === '' ? base || '/' : `${base}/${rel}`);
          if (counted(ff.check(n, 'file', dir.stack), r) || !matches) continue;
          pending.push(r);
        }
      },
    } : {};
    // The index looks at and reads every folder through the pinned start (its looks are the proof's first).
    const listed = { prune, deadline: o.deadline, signal: o.signal, seen: seenFolders, ...(index && pinnedDir !== null ? { pinned: pinnedDir } : {}), ...hooks };
    const l = index ? await ws.linkCache.listAsync(start.abs, listed) : ws.linkCache.list(start.abs, listed);
    // (No file of rg's has been judged yet: its output is read by this thread, after this.)
    if (l.nestedGit && o.gitignore && !emulate) linkDirs = fileDirs = folders(true);
    const a = rg ? await rg : { timedOut: false, aborted: false };
    // rg took rules from an ignore file the walker does not read (a link, a file past the size
    // bound) in a folder the walker reads: what rg pruned by them may be missing; the walker answers.
    // Looked at through the pinned start, as the walker's reads of ignore files are.
    const odd = rg ? l.ignoreFiles.find((rel) => fileDirs(dirOf(rel)).read && rgReadsOtherwise(`${pinnedDir ?? base}/${rel}`)) : undefined;
    if (odd !== undefined) throw new RgUnavailable(`${show(odd)} is a symbolic link, over 1 MB or starts with a byte-order mark: ripgrep would read its rules otherwise than glob does`);
    for (const rel of l.links) consider(rel, true);
    // rg has exited: a file in a folder that provably did not change since before rg started is
    // what rg saw there; any other is re-checked through pinned folder descriptors.
    const quiet = quietFolders({ base, pinnedFd: opened.fh.fd, started, before: (abs) => seenFolders.get(abs) });
    // The index walked from the pinned start by name: a folder on the way swapped for a link while
    // it ran would have brought in (and counted) what lies outside. Every folder it entered must be
    // old when looked at, and each on another's way proven unchanged from its look until after
    // every look below it (looks through the pinned start), or the walker answers.
    if (index) {
      const proven = quiet.walked(entered);
      const stale = gone ?? entered.find((rel) => !proven.has(rel));
      if (stale !== undefined) throw new IndexStale(`${show(stale) || '.'} changed a moment ago (or could not be proven unchanged since the index read it): the folders were walked instead`);
    }
    const quietDirs = index ? new Set(entered) : quiet.all(pending.map(dirOf));
    for (const rel of pending) {
      // A name that is not UTF-8 reaches here with U+FFFD in it, which names no file on disk: never
      // taken unchecked, whatever its folder (a real U+FFFD in a name passes the check).
      if (quietDirs.has(dirOf(rel)) && !rel.includes('\uFFFD')) { matched.push(show(rel)); quietOk++; }
      else if (checker.check({ rel, link: false })) matched.push(show(rel));
    }
    r = { timedOut: a.timedOut || l.timedOut, aborted: a.aborted || l.aborted };
  } finally {
    checker?.close();
    await opened?.fh.close().catch(() => {});
  }
  if (r.aborted) throw new ToolError('Cancelled', 'The glob was cancelled.');
  return { matches: matched, policySkipped, visited, stopped: r.timedOut ? 'time_cap' : null, quiet: quietOk };
}
