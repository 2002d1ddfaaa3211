import { closeSync, constants, fstatSync, lstatSync, openSync, readSync } from 'node:fs';
import { readFdSync } from '../../workspace/safe-open.js';
import { compileIgnore, folderTester, testIgnore, type CompiledIgnore, type IgnoreCompileCache, type IgnoreVerdict } from './ignore-cache.js';

/** Ignore files read in every directory, in order: a later file's rules win (as ripgrep ranks .ignore over .gitignore). */
export const DEFAULT_IGNORE_FILES = ['.gitignore', '.ignore'];

/** What ripgrep reads, weakest first (.rgignore beats .ignore beats .gitignore): glob's engines both read these, so they agree. */
export const RG_IGNORE_FILES = [...DEFAULT_IGNORE_FILES, '.rgignore'];

/** An ignore file bigger than this is not a list of patterns; it is skipped. */
export const MAX_IGNORE_FILE_BYTES = 1024 * 1024;

interface Level {
  /** The directory the rules belong to, relative to the root ('' for the root). */
  base: string;
  ig: CompiledIgnore;
  /** The file's kind, its index in RG_IGNORE_FILES: a match in a higher kind wins at any depth. */
  kind: number;
}

/** A line with a rule (not blank, not a comment), the first one perhaps after a byte-order mark, which the package drops (review 26). */
const HAS_RULE = /^\uFEFF?[ \t]*[^#\s]/m;
const HAS_PROC_FD = process.platform === 'linux';
const DIR_NOFOLLOW = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/**
 * The ignore rules in force in one directory: one level per ancestor's ignore file that has rules.
 * As ripgrep ranks them: a match in an .rgignore decides before any .ignore, and one in an
 * .ignore before any .gitignore, whatever their depth; among files of one kind the deepest
 * with a matching rule decides. Immutable, so sibling directories share their parent's stack.
 */
export class IgnoreStack {
  /** The levels in the order they are asked: the strongest kind first, and within a kind the deepest. */
  private readonly ordered: readonly Level[];

  private constructor(private readonly levels: readonly Level[], private readonly cache: IgnoreCompileCache | undefined) {
    this.ordered = levels.map((l, i) => ({ l, i })).sort((a, b) => b.l.kind - a.l.kind || b.i - a.i).map(({ l }) => l);
  }

  /** `cache` (the workspace's) reuses compiled rules across calls; without it every stack compiles its own. */
  static empty(cache?: IgnoreCompileCache): IgnoreStack {
    return new IgnoreStack([], cache);
  }

  get size(): number {
    return this.levels.length;
  }

  /**
   * Some .ignore or .rgignore level has a rule that re-includes (`!…`): it may show what a file of a
   * weaker kind hides at any depth (a deeper file of the same kind would win over it).
   */
  get reIncludesOverWeaker(): boolean {
    return this.levels.some((l) => l.ig.negates && l.kind > 0);
  }

  /**
   * This stack plus the rules of the directory `base`: `texts[k]` is the text of the ignore file
   * RG_IGNORE_FILES[k] there, or null. Unchanged when they hold no rules.
   */
  with(base: string, texts: ReadonlyArray<string | null>): IgnoreStack {
    const add: Level[] = [];
    texts.forEach((t, kind) => {
      if (t !== null && HAS_RULE.test(t)) add.push({ base, kind, ig: this.cache ? this.cache.get(t) : compileIgnore(t) });
    });
    return add.length ? new IgnoreStack([...this.levels, ...add], this.cache) : this;
  }

  /**
   * The stack without the levels that ignore `relDir` itself: a folder named explicitly is
   * listed or searched even if ignored (as ripgrep does with a path argument), and the
   * `ignore` package would otherwise hide all of its contents through their parent.
   */
  admitting(relDir: string): IgnoreStack {
    if (relDir === '') return this;
    const keep = this.levels.filter(({ base, ig }) => {
      const rel = base === '' ? relDir : relDir.startsWith(base + '/') ? relDir.slice(base.length + 1) : '';
      if (rel === '') return true;
      try {
        return !testIgnore(ig, rel + '/').ignored;
      } catch {
        return true;
      }
    });
    return keep.length === this.levels.length ? this : new IgnoreStack(keep, this.cache);
  }

  /**
   * ignored() for the entries of one folder (`dirRelToRoot`): the tester takes an entry's name (one
   * path segment) and answers ignored(`dirRelToRoot/name`, isDir). Each level's part is found once
   * for the folder, and its answers are remembered by name (folderTester).
   */
  folder(dirRelToRoot: string): (name: string, isDir: boolean) => boolean {
    const whole = (name: string, isDir: boolean) => this.ignored(dirRelToRoot === '' ? name : `${dirRelToRoot}/${name}`, isDir);
    // A folder path the walks never give (a leading or trailing slash, a double one): asked whole.
    if (dirRelToRoot.startsWith('/') || dirRelToRoot.endsWith('/') || dirRelToRoot.includes('//')) return whole;
    // The levels in the order ignored() asks them, each with the folder's path below its base.
    const order: Array<(key: string) => IgnoreVerdict> = [];
    for (const { base, ig } of this.ordered) {
      let dir: string;
      if (base === '') dir = dirRelToRoot;
      else if (dirRelToRoot === base) dir = '';
      else if (dirRelToRoot.startsWith(base + '/')) dir = dirRelToRoot.slice(base.length + 1);
      else continue;
      order.push(folderTester(ig, dir));
    }
    return (name, isDir) => {
      if (name === '' || name.includes('/')) return whole(name, isDir);
      const key = isDir ? `${name}/` : name;
      for (const t of order) {
        const v = t(key);
        if (v.ignored) return true;
        if (v.unignored) return false;
      }
      return false;
    };
  }

  /**
   * Whether `relToRoot` is ignored. Of the files of the highest kind with a rule that matches,
   * the deepest decides, so a `!keep.log` in a subdirectory's .gitignore re-includes what the
   * root's .gitignore `*.log` excluded (and not what a .ignore excluded). Ancestors
   * that are ignored are never walked into, which gives git's "cannot re-include a file
   * whose parent is excluded".
   */
  ignored(relToRoot: string, isDir: boolean): boolean {
    for (const { base, ig } of this.ordered) {
      let rel: string;
      if (base === '') rel = relToRoot;
      else if (relToRoot.startsWith(base + '/')) rel = relToRoot.slice(base.length + 1);
      else continue;
      if (rel === '') continue;
      let r;
      try {
        r = testIgnore(ig, isDir ? rel + '/' : rel);
      } catch {
        continue; // a name the ignore package cannot read as a relative path: no rule applies
      }
      if (r.ignored) return true;
      if (r.unignored) return false;
    }
    return false;
  }
}

/**
 * Reads one ignore file in `dirPath` without following a symlink and only if it is a small
 * regular file; null when there is none. `dirPath` may be a /proc/self/fd/N directory path.
 * Synchronous: O_NONBLOCK means a FIFO planted under the name cannot block the open, the
 * size is checked before reading, and four thread-pool round trips per folder cost more than
 * reading a few hundred bytes.
 */
export async function readIgnoreFile(dirPath: string, name: string): Promise<string | null> {
  return readIgnoreFileSync(dirPath, name);
}

export function readIgnoreFileSync(dirPath: string, name: string): string | null {
  const file = `${dirPath}/${name}`;
  let fd: number;
  try {
    // Most folders hold none of the names asked for: a look that cannot throw answers that
    // (1 µs; a failed open throws, and building its error costs 5 µs). What the look sees
    // decides nothing else: the open below still refuses a link, and fstat judges what it opened.
    if (!lstatSync(file, { throwIfNoEntry: false })) return null;
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > MAX_IGNORE_FILE_BYTES) return null;
    return readFdSync(fd, st.size).toString('utf8');
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * Whether ripgrep would take rules from `file` that readIgnoreFileSync refuses: rg follows a
 * symbolic link named like an ignore file (git does not) and reads a file of any size.
 */
export function rgReadsOtherwise(file: string): boolean {
  let st;
  try { st = lstatSync(file, { throwIfNoEntry: false }); } catch { return false; }
  if (!st) return false;
  if (st.isSymbolicLink() || (st.isFile() && st.size > MAX_IGNORE_FILE_BYTES)) return true;
  return st.isFile() && st.size >= 3 && startsWithBom(file);
}

/**
 * A file that starts with a UTF-8 byte-order mark: git and the `ignore` package drop it, ripgrep 13
 * (Debian 12's) keeps it as part of the first rule (BurntSushi/ripgrep#2177; review 26).
 */
function startsWithBom(file: string): boolean {
  let fd: number;
  try { fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK); } catch { return false; }
  try {
    const b = Buffer.alloc(3);
    return readSync(fd, b, 0, 3, 0) === 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf;
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}

/** The ignore files named `files` in `dirPath` (null for each it lacks), among the names the directory holds (`present`, when known). */
export function readIgnoreFilesSync(dirPath: string, present: ReadonlySet<string> | null, files: readonly string[]): Array<string | null> {
  return files.map((f) => (present && !present.has(f) ? null : readIgnoreFileSync(dirPath, f)));
}

export async function readIgnoreFiles(dirPath: string, present: ReadonlySet<string> | null, files: readonly string[]): Promise<Array<string | null>> {
  return readIgnoreFilesSync(dirPath, present, files);
}

/**
 * The stack in force inside `relDir` (relative to `root`) from the ignore files of `root`
 * and every directory down to `relDir`'s parent: what applies to a walk that starts in a
 * subdirectory. The start directory's own files are read by the walk itself. Levels that
 * ignore `named` (the folder the caller named, by default `relDir`) are dropped.
 */
export async function ancestorIgnores(root: string, relDir: string, files: readonly string[], named = relDir, cache?: IgnoreCompileCache): Promise<IgnoreStack> {
  let stack = IgnoreStack.empty(cache);
  if (relDir === '') return stack;
  const parts = relDir.split('/');
  // Each folder on the way is opened without following a link, through its parent's descriptor
  // (from the root): a folder swapped for a link to outside cannot lend an outside ignore file's
  // rules to the answer. One that cannot be opened so ends the reading (fewer rules: ignore files
  // decide what is shown among what the policy allows, never what it hides).
  const fds: number[] = [];
  try {
    for (let i = 0; i < parts.length; i++) {
      const base = parts.slice(0, i).join('/');
      let dirPath = base === '' ? root : `${root}/${base}`;
      if (HAS_PROC_FD) {
        const parent = fds[fds.length - 1];
        try { fds.push(openSync(parent === undefined ? root : `/proc/self/fd/${parent}/${parts[i - 1]}`, DIR_NOFOLLOW)); } catch { break; }
        dirPath = `/proc/self/fd/${fds[fds.length - 1]}`;
      }
      stack = stack.with(base, await readIgnoreFiles(dirPath, null, files));
    }
  } finally {
    for (const fd of fds) try { closeSync(fd); } catch { /* closed */ }
  }
  return stack.admitting(named);
}
