import { realpathSync } from 'node:fs';
import path from 'node:path';
import picomatch from 'picomatch';

/** Secrets: no tool may read, list, search, write or create them (SPEC §4). */
export const DEFAULT_DENY = [
  '**/.ssh/**', '**/.aws/**', '**/.gnupg/**', '**/*.pem', '**/*.key',
  '**/.env', '**/.env.*', '**/.netrc', '**/.npmrc',
];

/** Readable, but never written, created or deleted by any tool (SPEC §4). */
export const DEFAULT_PROTECT = [
  '**/.git/config', '**/.git/hooks/**', '**/.bashrc', '**/.zshrc', '**/.profile',
  '**/.bash_profile', '**/.gitconfig', '**/.mcp.json', '**/.claude/**', '**/.cursor/**',
  '**/.vscode/**', '**/.idea/**', '**/.codex/**', '**/.gemini/**',
  // Beyond the spec's list: everything git reads as configuration or runs (.git/modules/*/config,
  // .git/commondir, a `.git` file pointing elsewhere) can turn `git status` into code execution,
  // and any toolgate state dir (another session's, an old one) holds audit logs.
  '**/.git', '**/.toolgate',
];

/** Case-insensitive file systems would let `.SSH` walk past a case-sensitive match. */
export const CASE_INSENSITIVE_FS = process.platform === 'darwin' || process.platform === 'win32';

/**
 * The name that stands for "something inside" a folder when a rule is asked whether it covers
 * anything below it: a NUL, which no file name can hold but `*`, `?` and `**` match. A real
 * name would collide with a rule about that name (a rule on any folder named x would cover every folder).
 */
export const INSIDE = '\u0000';

/**
 * Each pattern, and for one written as an absolute path through a symbolic link (`/tmp/…` on a
 * system where /tmp is a link, a `~/work` link), the same pattern on the link's real path:
 * paths are matched as real paths, so the written one alone would match nothing.
 */
export function withRealBases(patterns: readonly string[]): string[] {
  const out = [...patterns];
  for (const p of patterns) {
    if (!p.startsWith('/')) continue;
    const segs = p.split('/');
    let i = 1;
    while (i < segs.length && !/[*?[\]{}()!+@]/.test(segs[i]!)) i++;
    const base = segs.slice(0, i).join('/');
    if (base === '' || base === '/') continue;
    const real = realPathLoose(base);
    if (real !== path.resolve(base)) {
      const q = [real, ...segs.slice(i)].join('/');
      if (!out.includes(q)) out.push(q);
    }
  }
  return out;
}

/** A compiled glob list, with a quick answer for a path no pattern can touch. */
export type GlobMatcher = ((p: string) => boolean) & {
  /**
   * True only when no pattern can match `s`, any part of it between two characters, nor such a
   * part followed by "/" and INSIDE: every pattern needs a literal text `s` lacks. (A literal holds
   * no "/" and no NUL, so it lies inside the part wherever it occurs.) False whenever unsure.
   */
  noneWithin(s: string): boolean;
  /**
   * noneWithin for every path `dir + "/" + name` of one folder, the folder's part worked out once:
   * the answer for a name is exactly `noneWithin(dir + "/" + name)` (no literal holds "/", so each
   * lies in the folder's part or in the name). `dir` '' stands for no folder part (the path is the name).
   */
  noneWithinUnder(dir: string): (name: string) => boolean;
};

export function compileGlobs(input: string[]): GlobMatcher {
  if (input.length === 0) return Object.assign(() => false, { noneWithin: () => true, noneWithinUnder: () => () => true });
  const patterns = withRealBases(input);
  // A pattern without a slash matches the name at any depth, as in .gitignore. picomatch's own
  // `basename` option would test *every* pattern against the last component only, so that
  // `**/.git/config` or `src/**` never matched: the two kinds are compiled apart.
  // A trailing slash (gitignore: "a directory") would otherwise match nothing at all; the
  // directory's contents are covered because its ancestors are matched too.
  const cleaned = patterns.map((p) => (p.length > 1 ? p.replace(/\/+$/, '') : p));
  const opts = { dot: true, nocase: CASE_INSENSITIVE_FS };
  const fold = (s: string) => (CASE_INSENSITIVE_FS ? caseFold(s) : s);
  // One matcher per pattern, each behind a cheap test of the literal text it needs: walks ask
  // this of every entry, and most paths hold none of `.pem`, `.ssh`, `.env`… (the regexes
  // picomatch builds backtrack over the whole path; a substring test does not).
  const needed: string[][] = [];
  const tests = cleaned.map((p) => {
    const bare = !p.includes('/');
    const m = picomatch(bare ? p : p.replace(/^\/+/, ''), bare ? { ...opts, basename: true } : opts);
    const needs = requiredLiterals(p).map(fold);
    needed.push(needs);
    if (needs.length === 0) return m;
    return (s: string) => {
      const t = fold(s);
      for (const l of needs) if (!t.includes(l)) return false;
      return m(s);
    };
  });
  // noneWithin holds only when every pattern names a literal (and none holds "/" or NUL).
  const sure = needed.every((lits) => lits.length > 0 && lits.every((l) => !l.includes('/') && !l.includes(INSIDE)));
  const never = () => false;
  const noneWithinUnder = (dir: string): ((name: string) => boolean) => {
    if (!sure) return never;
    const t = fold(dir);
    // Per pattern, the literals the folder's part lacks: the name must lack one of them.
    const rest: string[][] = [];
    for (const lits of needed) {
      const missing = lits.filter((l) => !t.includes(l));
      if (missing.length === 0) return never;
      rest.push(missing);
    }
    return (name: string) => {
      const n = fold(name);
      for (const lits of rest) if (lits.every((l) => n.includes(l))) return false;
      return true;
    };
  };
  // With no folder part every literal is missing from it (literals are never empty): the test of a whole path.
  const noneWithin = noneWithinUnder('');
  return Object.assign((p: string) => {
    for (const t of tests) if (t(p)) return true;
    return false;
  }, { noneWithin, noneWithinUnder });
}

/**
 * A string as picomatch's `nocase` compares it (a RegExp `i` flag, no `u`): each UTF-16 unit upper-cased
 * when that gives one unit, and not from outside ASCII into it. toLowerCase is not the same: `AΣ` becomes
 * `aς` (a final sigma) where the RegExp takes `aσ` as equal, and `µ`/`μ`, `ϑ`/`θ` fold apart. Unit by unit,
 * with no context: the fold of a part of a string is a part of the string's fold (noneWithin needs it).
 */
export function caseFold(s: string): string {
  if (/^[\u0000-\u007f]*$/.test(s)) return s.toUpperCase();
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    const up = ch.toUpperCase();
    out += up.length !== 1 || (ch.charCodeAt(0) >= 128 && up.charCodeAt(0) < 128) ? ch : up;
  }
  return out;
}

/**
 * Text every path a glob matches must contain: the pattern's literal runs between `*`, `?` and
 * `/`, when the pattern uses no other glob syntax (braces, classes, extglobs, escapes, quotes, negation,
 * `.`/`..` segments that picomatch may normalise). [] = no such guarantee (always run the matcher).
 */
export function requiredLiterals(pattern: string): string[] {
  // `"` quotes a run for picomatch and is dropped from what it matches: `"a".pem` matches a.pem.
  if (/[[\]{}()\\!+@|,"]/.test(pattern)) return [];
  const segs = pattern.split('/');
  if (segs.some((s) => s === '.' || s === '..')) return [];
  const out: string[] = [];
  for (const seg of segs) for (const run of seg.split(/[*?]+/)) if (run && !out.includes(run)) out.push(run);
  return out;
}

/**
 * Candidate strings for one path: itself and each ancestor, relative and absolute (without the
 * leading slash), empty segments dropped. Every resolve asks it: prefixes are cut from the
 * string, not split and joined again for each ancestor.
 */
export function pathCandidates(rel: string | null, abs: string): string[] {
  const out: string[] = [];
  const add = (p: string) => {
    let i = 0;
    while (p.charCodeAt(i) === 47) i++;
    let s = i ? p.slice(i) : p;
    if (s.endsWith('/') || s.includes('//')) s = s.split('/').filter(Boolean).join('/');
    while (s) {
      out.push(s);
      const cut = s.lastIndexOf('/');
      if (cut < 0) break;
      s = s.slice(0, cut);
    }
  };
  if (rel) add(rel);
  add(abs);
  return out;
}

/**
 * `abs` relative to every folder in `bases` that holds it, other than `rel` (a rule is relative
 * to a root: with nested roots — a client root inside the `--workspace` ceiling, two roots one
 * inside the other — a path has one spelling per root, and a rule holds under each of them).
 */
export function otherRels(abs: string, bases: readonly string[], rel: string | null): string[] {
  const out: string[] = [];
  for (const b of bases) {
    const r = abs === b ? '' : b === '/' ? abs.slice(1) : abs.startsWith(`${b}/`) ? abs.slice(b.length + 1) : null;
    if (r !== null && r !== rel && !out.includes(r)) out.push(r);
  }
  return out;
}

/** The real path of `p`, or of its nearest existing ancestor joined with the rest. */
function realPathLoose(p: string): string {
  const rest: string[] = [];
  let cur = path.resolve(p);
  for (;;) {
    try {
      return path.join(realpathSync(cur), ...rest);
    } catch {
      const parent = path.dirname(cur);
      if (parent === cur) return path.resolve(p);
      rest.unshift(path.basename(cur));
      cur = parent;
    }
  }
}

/** Each path as given and as its real path: a flag naming it through a symlink must still protect it. */
function withRealPaths(paths: string[]): string[] {
  const out: string[] = [];
  for (const p of paths) for (const q of [p, realPathLoose(p)]) if (!out.includes(q)) out.push(q);
  return out;
}

function isUnder(abs: string, dir: string): boolean {
  return abs === dir || abs.startsWith(dir.endsWith('/') ? dir : dir + '/');
}

export interface PathRuleMatch {
  list: 'deny' | 'protect';
  pattern: string;
}

/**
 * The deny (secrets) and protect lists, compiled once. A path is caught when it,
 * or any of its ancestors, matches — a rule on a directory covers what is inside.
 */
export class PathRules {
  /** The deny globs compiled once (walks test each entry with it, not a fresh compile per call). */
  readonly denyMatch: GlobMatcher;
  private readonly protectMatch: GlobMatcher;

  constructor(
    readonly deny: string[],
    readonly protect: string[],
    /** Absolute paths protected whatever their name: the state dir and the policy file. */
    readonly protectedAbs: string[] = [],
    readonly allowHardlinks = false,
    /** Absolute paths no tool may touch at all: the user's toolgate state and runtime dir (grants, pins, sockets, the console secret). */
    readonly deniedAbs: string[] = [],
    /** The roots rules are relative to (the session's roots and the --workspace ceiling): see otherRels. */
    readonly bases: readonly string[] = [],
  ) {
    this.protectedAbs = withRealPaths(protectedAbs);
    this.deniedAbs = withRealPaths(deniedAbs);
    this.denyMatch = compileGlobs(deny);
    this.protectMatch = compileGlobs(protect);
  }

  /** The same lists with more absolute paths protected (the state dir once it is known). */
  withProtected(abs: string[]): PathRules {
    return new PathRules(this.deny, this.protect, [...this.protectedAbs, ...abs], this.allowHardlinks, this.deniedAbs, this.bases);
  }

  /** The same lists with more deny globs (a command's sandbox masks the policy's deny rules too). */
  withDeny(extra: string[]): PathRules {
    return new PathRules([...this.deny, ...extra], this.protect, this.protectedAbs, this.allowHardlinks, this.deniedAbs, this.bases);
  }

  /** The same lists, matched relative to each of these roots too (a session's roots and the ceiling). */
  withBases(bases: string[]): PathRules {
    return new PathRules(this.deny, this.protect, this.protectedAbs, this.allowHardlinks, this.deniedAbs, bases);
  }

  static withDefaults(extraDeny: string[] = [], extraProtect: string[] = [], protectedAbs: string[] = [], allowHardlinks = false, deniedAbs: string[] = []): PathRules {
    return new PathRules([...DEFAULT_DENY, ...extraDeny], [...DEFAULT_PROTECT, ...extraProtect], protectedAbs, allowHardlinks, deniedAbs);
  }


  private matches(match: (p: string) => boolean, rel: string | null, abs: string, asDir: boolean): boolean {
    for (const r of [rel, ...otherRels(abs, this.bases, rel)]) {
      for (const c of pathCandidates(r, abs)) if (match(c)) return true;
      // A directory whose children are all denied (e.g. `**/.ssh/**`) must not be listed either.
      if (asDir && (match(r ? `${r}/${INSIDE}` : INSIDE) || match(`${abs.replace(/^\/+/, '')}/${INSIDE}`))) return true;
    }
    return false;
  }

  isDenied(rel: string | null, abs: string, asDir = false): boolean {
    if (this.deniedAbs.length && this.deniedAbs.some((p) => isUnder(abs, p))) return true;
    return this.matches(this.denyMatch, rel, abs, asDir);
  }

  isProtected(rel: string | null, abs: string): boolean {
    if (this.protectedAbs.some((p) => isUnder(abs, p))) return true;
    return this.matches(this.protectMatch, rel, abs, false);
  }
}
