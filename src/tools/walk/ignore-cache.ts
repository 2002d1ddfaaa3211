import ignore, { type Ignore } from 'ignore';
import { CASE_INSENSITIVE_FS } from '../../workspace/path-rules.js';

/** What `testIgnore` answers: one of three shared objects, so the memo holds no object per path. */
export type IgnoreVerdict = Readonly<{ ignored: boolean; unignored: boolean }>;
const IGNORED: IgnoreVerdict = Object.freeze({ ignored: true, unignored: false });
const UNIGNORED: IgnoreVerdict = Object.freeze({ ignored: false, unignored: true });
const NEITHER: IgnoreVerdict = Object.freeze({ ignored: false, unignored: false });

/** One compiled ignore file set, shared by every stack built from the same text. */
export interface CompiledIgnore {
  readonly ig: Ignore;
  /** Answers by path (a pure memo: the rules of one compiled set never change). Bounded by MEMO_MAX_PATHS. */
  readonly memo: Map<string, IgnoreVerdict>;
  /** The package's rules with a cheap test before each one's regular expression, or null (the package answers). */
  readonly scan: RuleScan | null;
  /** Folder testers' answers (folderTester): by the folder's path ('' or ending in '/'), then by entry name. */
  readonly leaves: Map<string, Map<string, IgnoreVerdict>>;
  /** Entries in `leaves` (each folder's map counted as FOLDER_MAP_ENTRIES more); `gen` counts the times both memos were emptied; `max` bounds memo and leaves together. */
  readonly count: { leaves: number; gen: number; readonly max: number };
  /** The rules hold one that re-includes (`!…`): hasNegation, found once per text. */
  readonly negates: boolean;
}

/** What the scan reads of the `ignore` package's compiled rules (its own fields; checked when compiled). */
interface PackageRule { negative: boolean; regex: RegExp; _basenameOnly: boolean }

/**
 * The `ignore` package's rule scan (last matching rule decides; a basename-only rule is handed the
 * basename when at least half the rules are), with each rule's regular expression skipped when a
 * cheap test shows it cannot match: a rule whose expression ends with fixed text and then "end, or
 * a last slash" can only match a path that, without a last slash, ends with that text. The kernel's
 * root .gitignore has ~100 rules, most like `*.o`: a path met for the first time was tested against
 * every one (~10 µs); now a few `endsWith` pass or fail first.
 */
interface RuleScan { rules: PackageRule[]; shortcut: boolean; suffix: Array<string | null> }

const END = '(?=$|\\/$)';
/** Characters that stand for themselves in a regular expression source (no escape needed). */
const PLAIN = /[A-Za-z0-9_~#%,:;=@!<>"'&` -]/;
/** An escaped character that stands for itself (`\.` is a dot); `\/` ends the text (a slash is not kept); any other escape makes it unsure. */
const ESCAPED = new Set(['.', '*', '+', '?', '^', '$', '|', '(', ')', '[', ']', '{', '}', '\\', '-']);

/**
 * The fixed text right before `(?=$|\/$)` at the end of a rule's expression, or null (no such
 * text, an alternation outside the package's `(?:^|\/)` start, or anything unsure). Exported for tests.
 */
export function fixedSuffix(source: string): string | null {
  if (!source.endsWith(END)) return null;
  const body = source.slice(0, -END.length);
  if (body.split('(?:^|\\/)').join('').includes('|')) return null;
  let out = '';
  let i = body.length - 1;
  while (i >= 0) {
    let slashes = 0;
    while (i - 1 - slashes >= 0 && body[i - 1 - slashes] === '\\') slashes++;
    const ch = body[i]!;
    if (slashes % 2 === 1) {
      // Any other escape may end in the text already read: `\u2028` (V8 writes a line separator
      // in a source so), `\x41`, `\cA`, `\0`, `\12`. Unsure: no cheap test for this rule.
      if (ch === '/') break;
      if (!ESCAPED.has(ch)) return null;
      out = ch + out;
      i -= 2;
    } else {
      if (!PLAIN.test(ch)) break;
      out = ch + out;
      i -= 1;
    }
  }
  return out === '' ? null : out;
}

function ruleScan(ig: Ignore): RuleScan | null {
  if (CASE_INSENSITIVE_FS || process.platform === 'win32') return null;
  const manager = (ig as unknown as { _rules?: { _rules?: unknown; _basenameCount?: unknown } })._rules;
  const rules = manager?._rules;
  if (!Array.isArray(rules) || typeof manager!._basenameCount !== 'number') return null;
  const suffix: Array<string | null> = [];
  for (const r of rules as PackageRule[]) {
    if (typeof r?.negative !== 'boolean' || !(r.regex instanceof RegExp) || r.regex.flags !== '' || typeof r._basenameOnly !== 'boolean') return null;
    suffix.push(fixedSuffix(r.regex.source));
  }
  return { rules: rules as PackageRule[], shortcut: manager!._basenameCount * 2 >= rules.length, suffix };
}

/** Where a path's last segment starts, less one (a trailing slash belongs to the segment): -1 when it is the whole path. */
const lastSlash = (path: string) => path.lastIndexOf('/', path.charCodeAt(path.length - 1) === 47 ? path.length - 2 : path.length - 1);

/** The package's parent of a path (it tests each parent first): 'a/b/c' → 'a/b/', 'a/b/' → 'a/', 'a' → ''. */
const parentOf = (path: string) => path.slice(0, lastSlash(path) + 1);

/** The package's last segment, with a trailing slash kept. */
const basenameOf = (path: string) => path.slice(lastSlash(path) + 1);

/** The package's rule scan of one path (no parents), with the cheap tests first. */
function scanRules(s: RuleScan, path: string): IgnoreVerdict {
  const bare = path.charCodeAt(path.length - 1) === 47 ? path.slice(0, -1) : path;
  const base = s.shortcut ? basenameOf(path) : path;
  for (let i = s.rules.length - 1; i >= 0; i--) {
    const suffix = s.suffix[i];
    if (suffix !== null && !bare.endsWith(suffix)) continue;
    const r = s.rules[i]!;
    if (r.regex.test(s.shortcut && r._basenameOnly ? base : path)) return r.negative ? UNIGNORED : IGNORED;
  }
  return NEITHER;
}

/**
 * Distinct paths one compiled set remembers before its memos are emptied (with the rule scan, each
 * parent folder is one of them, as it was in the package's own memo, emptied with it; the folder
 * testers' answers count too, each folder's map as FOLDER_MAP_ENTRIES more): ~12–15 MB at most,
 * the Linux kernel's whole tree twice over. Counting distinct paths, not tests: a glob that tests
 * the same 10,000 paths on every call keeps them all, where counting tests emptied the memo every
 * fifth call and that call paid the whole rule scan again (45–78 ms on the kernel's 158-line
 * .gitignore).
 */
export const MEMO_MAX_PATHS = 200_000;
/**
 * Distinct ignore texts kept compiled. A walk reads them in the same order every call, so an LRU
 * smaller than a tree's set evicts every one before its next use: the kernel holds 282, and at
 * 256 each glob of its root recompiled them all and lost their memos (glob's ripgrep engine
 * judges every listed file by them: "**\/*.*" 850 ms a call, 300 with them kept).
 */
export const MAX_ENTRIES = 1024;
const MAX_TEXT_CHARS = 4 * 1024 * 1024;

/**
 * Whether the compiled rules hold one that re-includes (`!…`): read from the package's own rules
 * when they are where this release keeps them, else from the text (a line starting with `!`, after
 * the byte-order mark the package drops from the first: review 26).
 */
function hasNegation(ig: Ignore, text: string): boolean {
  const rules = (ig as unknown as { _rules?: { _rules?: unknown } })._rules?._rules;
  if (Array.isArray(rules) && rules.every((r) => typeof (r as PackageRule)?.negative === 'boolean')) return rules.some((r) => (r as PackageRule).negative);
  return /^\uFEFF?!/m.test(text);
}

/** `maxPaths`: the memo's bound (tests give a small one). */
export function compileIgnore(rules: string, maxPaths = MEMO_MAX_PATHS): CompiledIgnore {
  const ig = ignore({ ignorecase: CASE_INSENSITIVE_FS }).add(rules);
  return { ig, memo: new Map(), scan: ruleScan(ig), leaves: new Map(), count: { leaves: 0, gen: 0, max: maxPaths }, negates: hasNegation(ig, rules) };
}

/**
 * What a folder's own map costs against the bound, in entries: a Map and its key (~300 bytes)
 * against ~60 for an entry (review 25: counted as one, a set of one-file folders held ~3 times what
 * the path memo did for the same answers).
 */
const FOLDER_MAP_ENTRIES = 4;

/** Empties both memos (and the package's own cache) when `adding` more answers would take them past `max` between them. */
function bound(c: CompiledIgnore, adding = 1): void {
  if (c.memo.size + c.count.leaves + adding <= c.count.max) return;
  c.memo.clear();
  c.leaves.clear();
  c.count.leaves = 0;
  c.count.gen++;
  (c.ig as unknown as { _initCache?: () => void })._initCache?.();
}

/** testIgnore's answer for `rel`, without remembering `rel` itself (its parents are). */
function verdictOf(c: CompiledIgnore, rel: string): IgnoreVerdict {
  if (c.scan && rel.charCodeAt(0) !== 47 && !rel.includes('//') && ignore.isPathValid(rel)) {
    const parent = parentOf(rel);
    const p = parent === '' ? null : testIgnore(c, parent);
    return p?.ignored ? p : scanRules(c.scan, rel);
  }
  const r = c.ig.test(rel);
  return r.ignored ? IGNORED : r.unignored ? UNIGNORED : NEITHER;
}

/**
 * Tests one path against a compiled set through its memo. With the rule scan (ruleScan), as the
 * package does: each parent first ('a/', then 'a/b/', remembered here too), the parent's answer
 * when it is ignored, else the path's own scan. Paths the package would refuse or read otherwise
 * (not relative, a double slash) go to the package.
 */
export function testIgnore(c: CompiledIgnore, rel: string): IgnoreVerdict {
  const hit = c.memo.get(rel);
  if (hit !== undefined) return hit;
  const v = verdictOf(c, rel);
  bound(c);
  c.memo.set(rel, v);
  return v;
}

/**
 * testIgnore for the entries of one folder, remembered by name: `dir` is the folder relative to the
 * rules' base ('' for the base itself); the tester takes an entry's name (one segment, no '/'), with
 * '/' after a folder's, and answers testIgnore(c, `dir/key`). A path the package refuses answers
 * NEITHER, not remembered (IgnoreStack.ignored skips a level that throws). The folder is remembered by path, as
 * every entry's parent; its entries by name in the folder's own map: a glob over a folder whose
 * names come from its record (the same strings on every call) builds and hashes no path per entry.
 */
export function folderTester(c: CompiledIgnore, dir: string): (key: string) => IgnoreVerdict {
  const prefix = dir === '' ? '' : `${dir}/`;
  let m: Map<string, IgnoreVerdict> | undefined;
  let gen = -1;
  // The folder's map as the memos now hold it (emptied maps are let go, by their generation).
  const current = () => {
    if (gen !== c.count.gen) {
      gen = c.count.gen;
      m = c.leaves.get(prefix);
    }
  };
  return (key) => {
    current();
    const hit = m?.get(key);
    if (hit !== undefined) return hit;
    let v: IgnoreVerdict;
    try {
      v = verdictOf(c, prefix + key);
    } catch {
      // As IgnoreStack.ignored skips a level that throws, and remembers nothing: a stack overflow
      // on a very deep path must not be kept as an answer (review 25).
      return NEITHER;
    }
    current(); // the parents' tests may have emptied the memos
    bound(c, m ? 1 : 1 + FOLDER_MAP_ENTRIES);
    current();
    if (!m) {
      m = new Map<string, IgnoreVerdict>();
      c.leaves.set(prefix, m);
      c.count.leaves += FOLDER_MAP_ENTRIES;
    }
    m.set(key, v);
    c.count.leaves++;
    return v;
  };
}

/**
 * Compiled ignore rules keyed by their TEXT (not by the file's path): the files are still read
 * on every call (a few hundred bytes, one open), so a changed, replaced, linked or deleted
 * ignore file is seen at once, and only the compile (rules → regular expressions, a quarter of
 * a list_dir call) is skipped when the text is one seen before. Same text, same rules: the
 * answer cannot differ from a fresh compile. Bounded (LRU) by entries and by characters.
 * One per workspace (held across calls), never module-level.
 */
export class IgnoreCompileCache {
  private readonly byText = new Map<string, CompiledIgnore>();
  private chars = 0;

  get size(): number {
    return this.byText.size;
  }

  get(rules: string): CompiledIgnore {
    const hit = this.byText.get(rules);
    if (hit) {
      this.byText.delete(rules);
      this.byText.set(rules, hit);
      return hit;
    }
    const c = compileIgnore(rules);
    if (rules.length > MAX_TEXT_CHARS / 4) return c;
    this.byText.set(rules, c);
    this.chars += rules.length;
    for (const [k] of this.byText) {
      if (this.byText.size <= MAX_ENTRIES && this.chars <= MAX_TEXT_CHARS) break;
      this.byText.delete(k);
      this.chars -= k.length;
    }
    return c;
  }
}
