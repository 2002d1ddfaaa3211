import picomatch from 'picomatch';
import { globTooCostly } from '../../workspace/glob-cost.js';

/**
 * .gitignore rules as ripgrep applies them during a walk: each path is tested on its own
 * (the walk never enters an ignored directory, so parents need no re-check — and a search
 * started inside an ignored directory still sees its files, as with ripgrep). The `ignore`
 * package always re-checks parent directories, which differs in exactly that case.
 */
interface Rule {
  negative: boolean;
  dirOnly: boolean;
  anchored: boolean;
  test: (s: string) => boolean;
}

export type IgnoreVerdict = 'ignore' | 'keep' | null;

/**
 * Rules of one ignore file compiled at most: each costs ~25 µs to compile and a regex test for
 * every entry the walk meets (a 1 MB file of 55,000 rules: 1.4 s, then 0.4 s an entry, on the
 * server's thread; 10,000 still over a second under load). Past it the rules are left out (skipped).
 */
export const MAX_IGNORE_RULES = 2_000;

export class IgnoreFile {
  private readonly rules: Rule[] = [];
  /** Rules left out: past MAX_IGNORE_RULES, or too costly for picomatch to match on the server's thread (globTooCostly). */
  skipped = 0;

  constructor(text: string) {
    for (const raw of text.split('\n')) {
      if (this.rules.length >= MAX_IGNORE_RULES) {
        const t = raw.trim();
        if (t && !t.startsWith('#')) this.skipped++;
        continue;
      }
      const rule = parseLine(raw);
      if (rule === 'costly') this.skipped++;
      else if (rule) this.rules.push(rule);
    }
  }

  get empty(): boolean {
    return this.rules.length === 0;
  }

  /** rel: relative to the ignore file's directory. The last matching rule decides. */
  verdict(rel: string, isDir: boolean): IgnoreVerdict {
    let name: string | undefined;
    for (let i = this.rules.length - 1; i >= 0; i--) {
      const r = this.rules[i]!;
      if (r.dirOnly && !isDir) continue;
      let hit: boolean;
      if (r.anchored) hit = r.test(rel);
      else {
        if (name === undefined) {
          const slash = rel.lastIndexOf('/');
          name = slash < 0 ? rel : rel.slice(slash + 1);
        }
        hit = r.test(name);
      }
      if (hit) return r.negative ? 'keep' : 'ignore';
    }
    return null;
  }
}

function parseLine(raw: string): Rule | 'costly' | null {
  let line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
  if (line === '' || line.startsWith('#')) return null;
  // Trailing spaces are dropped unless escaped with a backslash. A scan from the end, not
  // /(?<!\\)[ \t]+$/: that regex tries each blank of a run, to its end, before failing at the
  // character after it — quadratic (100,000 spaces and an "x" in a .gitignore: 5 s of the server's thread).
  let end = line.length;
  while (end > 0 && (line[end - 1] === ' ' || line[end - 1] === '\t')) end--;
  if (end < line.length) line = line.slice(0, end > 0 && line[end - 1] === '\\' ? end + 1 : end);
  let negative = false;
  if (line.startsWith('!')) { negative = true; line = line.slice(1); }
  else if (line.startsWith('\\!') || line.startsWith('\\#')) line = line.slice(1);
  if (line === '' || line === '/') return null;
  let dirOnly = false;
  if (line.endsWith('/')) { dirOnly = true; line = line.slice(0, -1); }
  const anchored = line.includes('/');
  if (line.startsWith('/')) line = line.slice(1);
  // `foo/**` also names everything below foo; `**/foo` matches foo at any depth (picomatch does both).
  // Glob syntax as ripgrep reads it, not picomatch's: a "!" left after "\!" is a plain character
  // (nonegate), "[!…]" is a negated class (picomatch, without extglobs, reads "[!a]" as "! or a"),
  // and ( ) | are plain characters, not a regex group.
  const glob = line.replace(/\\.|\[!|[()|]/g, (m) => (m === '[!' ? '[^' : m.length === 2 ? m : `\\${m}`));
  if (globTooCostly(glob)) return 'costly';
  try {
    return { negative, dirOnly, anchored, test: picomatch(glob, { dot: true, noextglob: true, nonegate: true }) };
  } catch {
    return null;
  }
}

/** Ignore files ripgrep reads in each directory, strongest first. */
export const IGNORE_FILE_NAMES = ['.rgignore', '.ignore', '.gitignore'] as const;

/** Kinds of ignore file, strongest first: .rgignore, .ignore, .gitignore, .git/info/exclude. */
export const KIND_COUNT = 4;

/**
 * The ignore files of one directory, by kind. For a directory at or below the search root,
 * `strip` is how many leading characters of a search-relative path lead into it; for one
 * above the search root, `add` is the path from it down to the search root plus '/'.
 */
export interface IgnoreLayer {
  strip: number;
  add: string;
  files: Array<IgnoreFile | undefined>;
  /** The directory holds a .git: git rules from further up stop applying (as in ripgrep). */
  hasGit: boolean;
}

/**
 * ripgrep's precedence: a kind of file beats the weaker kinds whatever the depth; inside one
 * kind the deepest file with a verdict wins; git rules stop at the nearest repository root.
 * `rel` is relative to the search root.
 */
export function isIgnored(layers: readonly IgnoreLayer[], rel: string, isDir: boolean): boolean {
  for (let k = 0; k < KIND_COUNT; k++) {
    for (let i = layers.length - 1; i >= 0; i--) {
      const layer = layers[i]!;
      const f = layer.files[k];
      if (f) {
        const v = f.verdict(layer.add + (layer.strip ? rel.slice(layer.strip) : rel), isDir);
        if (v) return v === 'ignore';
      }
      if (k >= 2 && layer.hasGit) break;
    }
  }
  return false;
}
