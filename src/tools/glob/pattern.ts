import picomatch from 'picomatch';
import { ToolError } from '../../core/errors.js';
import { refuseCostlyGlobs } from '../../workspace/glob-cost.js';
import { CASE_INSENSITIVE_FS } from '../../workspace/path-rules.js';

const GLOB_CHARS = /[*?[\]{}()!+@\\]/;

/** Splits a pattern on `/` outside braces and brackets; null when a `/` sits inside braces (`{a/b,c}`). */
export function splitSegments(pattern: string): string[] | null {
  const out: string[] = [];
  let cur = '';
  let braces = 0;
  let bracket = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\' && i + 1 < pattern.length) { cur += c + pattern[++i]; continue; }
    if (bracket) { if (c === ']') bracket = false; cur += c; continue; }
    if (c === '[') bracket = true;
    else if (c === '{') braces++;
    else if (c === '}' && braces > 0) braces--;
    else if (c === '/') {
      if (braces > 0) return null;
      out.push(cur);
      cur = '';
      continue;
    }
    cur += c;
  }
  out.push(cur);
  return out;
}

export interface CompiledPattern {
  /** The pattern as matched (leading `./` removed). */
  pattern: string;
  /** Leading literal folders (no glob characters): the walk starts there. '' for none. */
  base: string;
  /** Whether a path relative to the glob's `path` matches. */
  match(rel: string): boolean;
  /** Whether a directory (relative to `base`, split into names) can hold a match; prunes the walk. */
  canContain(parts: readonly string[]): boolean;
  /** The pattern names dot-files or dot-folders explicitly (`.github/**`, `**\/.eslintrc*`). */
  mentionsDot: boolean;
}

/**
 * Compiles a glob once: picomatch for the whole path, plus one matcher per folder level so
 * the walk never enters a folder that cannot hold a match (`src/*\/test/*.ts` reads only
 * `src` and its direct children named `test`).
 */
export function compilePattern(raw: string, opts: { hidden: boolean }): CompiledPattern {
  let pattern = raw;
  while (pattern.startsWith('./')) pattern = pattern.slice(2);
  if (pattern === '' || pattern === '.') throw new ToolError('InvalidArguments', 'pattern is empty; give a file pattern such as "**/*.ts".');
  if (pattern.startsWith('/')) {
    throw new ToolError('InvalidArguments', `pattern "${raw}" is absolute; patterns are relative to path — set path to the folder and pattern to e.g. "**/*.ts".`);
  }
  if (pattern.startsWith('!')) throw new ToolError('InvalidArguments', `pattern "${raw}" is a negation; glob takes one positive pattern such as "src/**/*.ts".`);
  refuseCostlyGlobs([pattern], 'pattern', 'split it into several glob calls, or set path to narrow the folder');
  const segments = splitSegments(pattern);
  if ((segments ?? pattern.split('/')).some((s) => s === '..')) {
    throw new ToolError('InvalidArguments', `pattern "${raw}" contains "..": patterns stay inside path — set path to the folder you want instead.`);
  }
  const pm = { dot: opts.hidden, nocase: CASE_INSENSITIVE_FS };
  const whole = picomatch(pattern, pm);

  let baseParts: string[] = [];
  let rest: string[] | null = null;
  if (segments) {
    let i = 0;
    while (i < segments.length - 1 && segments[i] !== '' && !GLOB_CHARS.test(segments[i]!)) i++;
    baseParts = segments.slice(0, i).filter((s) => s !== '.');
    rest = segments.slice(i);
  }
  const segMatch = rest?.map((s) => (s === '**' ? null : picomatch(s, pm)));
  const restPattern = rest ? rest.join('/') : pattern;

  return {
    pattern,
    base: baseParts.join('/'),
    match: (rel) => whole(rel),
    canContain(parts) {
      if (!rest || !segMatch) return true;
      for (let i = 0; i < parts.length; i++) {
        if (i >= rest.length) return false;
        const m = segMatch[i];
        if (m === null) return true; // `**` crosses any number of folders from here on
        if (!m!(parts[i]!)) return false;
      }
      return parts.length < rest.length;
    },
    mentionsDot: /(^|\/|\{|,)\./.test(restPattern),
  };
}
