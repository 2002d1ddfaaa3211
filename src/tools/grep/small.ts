import { closeSync, constants, lstatSync, opendirSync, openSync, readlinkSync, type Dirent } from 'node:fs';
import path from 'node:path';
import { toJsPattern, type JsPattern } from './regex.js';
import { BINARY_WINDOW, type Query } from './types.js';

/**
 * grep searches a small folder (or file) itself even when ripgrep is present: starting rg costs
 * its process (~2 ms of CPU on this machine class, spread over the server, rg and the kernel)
 * where the built-in engine reads a few hundred small files in less. Only for patterns both
 * engines read the same way (sameInBothEngines), so the engine never changes an answer.
 */

/**
 * Entries up to which grep searches a folder itself (TOOLGATE_GREP_WALK_MAX; 0: always ripgrep).
 * Where the two cross, measured through the server (bench/grep-small.ts): see docs/grep.md.
 */
export const DEFAULT_GREP_WALK_MAX = 1000;
/** Bytes read past which a "small" folder or file goes to ripgrep after all (rg reads big files faster). */
export const SMALL_GREP_BYTES = 2 * 1024 * 1024;

export function grepWalkMax(env: NodeJS.ProcessEnv = process.env): number {
  const v = env.TOOLGATE_GREP_WALK_MAX?.trim();
  if (!v) return DEFAULT_GREP_WALK_MAX;
  const n = Number(v);
  return Number.isInteger(n) && n >= 0 ? n : DEFAULT_GREP_WALK_MAX;
}

/** Escapes whose classes differ: Rust's \d \w \b (and \p names) are Unicode-wide, JavaScript's \d \w \b ASCII. */
const UNICODE_ESCAPE = /\\[dDwWbBsSpP]/;
/** An inline flag group that turns on case folding, e.g. (?i) or (?is). */
const INLINE_I = /\(\?[a-zA-Z]*i/;

export interface SmallSearch {
  pat: JsPattern;
  /**
   * The pattern is literal text: invalid UTF-8 in a file cannot change its matches. Otherwise a
   * file that decodes to U+FFFD sends the search to ripgrep (its "." and [^…] do not match an
   * invalid byte; JavaScript's match the U+FFFD the decoder put there).
   */
  literal: boolean;
}

/**
 * The query's pattern as the built-in engine runs it, when ripgrep would match exactly the same
 * lines; null otherwise. Not: multiline; an escape whose class is Unicode-wide in Rust and ASCII
 * (or, for \s, a little wider) in JavaScript; case folding of a pattern with non-ASCII
 * characters (the two fold a few of those differently); U+FFFD in the pattern; anything the
 * translation refuses.
 */
export function sameInBothEngines(q: Query): SmallSearch | null {
  if (q.multiline || q.pattern.includes('\uFFFD')) return null;
  if (!q.fixed_strings && UNICODE_ESCAPE.test(q.pattern)) return null;
  if ((q.ignore_case || (!q.fixed_strings && INLINE_I.test(q.pattern))) && !/^[\x00-\x7f]*$/.test(q.pattern)) return null;
  // rg pre-selects files by a glob in its own syntax, then both engines filter with picomatch: where
  // the two read a glob differently (extglob groups, a brace group without a comma, {1..3}) they disagree.
  if (q.globs.some((g) => /[()]/.test(g) || /\{[^,}]*\}/.test(g))) return null;
  let pat: JsPattern;
  try {
    pat = toJsPattern(q);
  } catch {
    return null;
  }
  // Judged on the JavaScript source that runs, not on the rg pattern (see needsWorker).
  if (!linearInJs(pat.re.source, true) || slowInThread(pat, SMALL_GREP_BYTES)) return null;
  return { pat, literal: q.fixed_strings || /^[^\\^$.*+?()[\]{}|]+$/.test(q.pattern) };
}

/**
 * Whether JavaScript's backtracking engine runs the pattern in time linear in the text: no
 * repetition (* + ? {n,m}) and no alternation inside a group, so every start position costs at
 * most the pattern's length. Anything else goes to ripgrep (a linear-time engine): one synchronous
 * search of `a.*b` over a 100 KB line took 3.5 s here, `.*.*y` over 10 KB two minutes, `(a+)+b`
 * doubles with every character — all of it on the server's one JavaScript thread, where no
 * time cap or cancellation can stop it. `jsSource`: `p` is a translated JavaScript source
 * (toJsPattern), the one to judge: the two syntaxes read some text differently (in Rust's, ")"
 * in "[[:alpha:])]" is inside the class; a scan that ends the class at the first "]" saw it
 * close a group, and "(a|a)(a|a)…" after it as no group at all).
 */
export function linearInJs(p: string, jsSource = false): boolean {
  let depth = 0;
  let inClass = false;
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    if (c === '\\') {
      // JavaScript's \u{…} and \p{…}: one character or class, its braces no repetition.
      if (jsSource && /[upP]/.test(p[i + 1] ?? '') && p[i + 2] === '{') { const end = p.indexOf('}', i); if (end > 0) i = end; else i++; continue; }
      i++;
      continue;
    }
    if (inClass) { if (c === ']') inClass = false; continue; }
    // A "]" first in a class (after any "^") is a character in Rust's syntax; JavaScript's "[]" is an empty class.
    if (c === '[') { inClass = true; if (p[i + 1] === '^') i++; if (!jsSource && p[i + 1] === ']') i++; continue; }
    if (c === '(') { depth++; if (p[i + 1] === '?') i++; continue; }
    if (c === ')') { depth--; continue; }
    if (c === '*' || c === '+' || c === '?' || (c === '{' && /^\{\d/.test(p.slice(i)))) return false;
    if (c === '|' && depth > 0) return false;
  }
  return true;
}

/**
 * Text characters × pattern source characters past which a search may not run on the server's
 * thread even when the pattern is linear (linearInJs): each start position still costs up to the
 * pattern's length (10,000 characters allowed), so 8,000 "." over a 1 MB line held it 6.5 s, a
 * 5,000-character fixed string with ignore_case (a regex, not indexOf) 3 s, 400 "." over a 16 MB
 * file (the built-in engine reads up to 64 MB) 2.6 s. At this bound ~50 ms a pass at worst.
 */
export const THREAD_STEPS = 1 << 26;

/** Whether searching `chars` characters with `pat` here may take long: the worker runs it instead (literal text uses indexOf). */
export function slowInThread(pat: JsPattern, chars: number): boolean {
  return pat.literal === null && chars * pat.re.source.length > THREAD_STEPS;
}

const ABOVE_ROOT_NAMES = ['.gitignore', '.ignore', '.rgignore', '.git'];

/**
 * Whether a folder above the workspace root holds an ignore file or a `.git`. ripgrep, searching
 * a subfolder, reads the ignore files of every folder above it, past the workspace root; the
 * built-in engine stops at the root. So a subfolder search goes to ripgrep when there are any.
 * About 4 lstats a level, each time (a file added up there counts at once).
 */
export function ignoreFilesAboveRoot(wsRoot: string): boolean {
  for (let dir = path.dirname(wsRoot); ; dir = path.dirname(dir)) {
    for (const name of ABOVE_ROOT_NAMES) if (lstatSync(path.join(dir, name), { throwIfNoEntry: false })) return true;
    if (dir === path.dirname(dir)) return false;
  }
}

/**
 * A search given a budget (BuiltinOptions.budget) met what it leaves to ripgrep: more entries or
 * bytes than the budget ('size'), or text where the two engines could differ ('text').
 */
export class UseRipgrep extends Error {
  constructor(readonly why: 'size' | 'text', message: string) {
    super(message);
  }
}

/** Throws UseRipgrep where ripgrep could read a file differently (see BuiltinOptions.budget). */
export function sameTextInBothEngines(buf: Buffer, text: string | null, literal: boolean, rel: string): void {
  if (buf.length > BINARY_WINDOW && buf.indexOf(0, BINARY_WINDOW) >= 0) throw new UseRipgrep('text', `${rel || 'the file'} has a NUL byte past its first block`);
  if (!literal && text?.includes('\uFFFD')) throw new UseRipgrep('text', `${rel || 'the file'} is not valid UTF-8`);
}

/**
 * A subfolder of a small search, opened through its parent's descriptor path without following a
 * link (O_NOFOLLOW) and checked to be the real folder at `expected` (/proc/self/fd): its
 * descriptor's path, for listing it and opening what is in it. Throws otherwise. Linux only
 * (grep.ts searches small folders here only where /proc/self/fd exists).
 */
export function openPinnedDir(path: string, expected: string): { fd: number; path: string } {
  const fd = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    if (readlinkSync(`/proc/self/fd/${fd}`) !== expected) throw new Error(`${expected} changed place during the search`);
  } catch (e) {
    closeSync(fd);
    throw e;
  }
  return { fd, path: `/proc/self/fd/${fd}` };
}

/**
 * A folder's entries for a small search, read synchronously but never more than `max`: past it
 * the search goes to ripgrep (UseRipgrep 'size') before a huge folder is read whole on the server
 * thread (readdirSync of 300,000 entries took 245 ms here). `max` is generous (entries the deny
 * list hides count here, not in the budget), so it says nothing about what those are.
 */
export function listWithin(path: string, max: number): Dirent[] {
  const dir = opendirSync(path, { bufferSize: 256 });
  try {
    const out: Dirent[] = [];
    for (let e = dir.readSync(); e; e = dir.readSync()) {
      if (out.length >= max) throw new UseRipgrep('size', `more than ${max} entries in one folder`);
      out.push(e);
    }
    return out;
  } finally {
    dir.closeSync();
  }
}
