import { ToolError } from '../core/errors.js';

/**
 * Globs picomatch would match for seconds: its regexes backtrack. Several `*` in one path segment
 * cost about (name length)^k — `*a*a*a*a*a*b` against a 100-character name held the server's
 * thread 10 s — and three `**` about (path length)^3 (a 3,000-character path: seconds). One
 * segment may hold up to three wildcards (a `*` run, a `{…}` group, an extglob group: ~15 ms
 * on a 255-character name), a glob up to two `**` segments (~20 ms on a 4 KB path).
 *
 * Segments multiply too: a segment with two wildcards, or a group, can match one name in many
 * ways, and each way re-runs the rest (`*a*a*a/*a*b` on two 200-character names: 2 s; `{a,a}/`
 * 26 times: 3 s). Such segments together hold at most MAX_BRANCHING_WILDCARDS, the glob at most
 * MAX_ALTERNATIVES alternatives. And picomatch passes some glob text on as raw regex: a plain
 * `(…)` group, `+` after `)` `]` `}` or inside a group, `?` after `)`, a run of three or more
 * backslashes (it collapses them, leaving the next character unescaped: `\\\\+` is the regex
 * `\\+`), a `[` it never closes (its text is copied raw) — `(a+)+b` held the thread 6 s on a
 * 29-character name; `+(a|[a])` nests quantifiers past picomatch's own extglob check. Those
 * are refused outright (a `+(…)`/`*(…)` may only repeat one literal or single characters).
 */
export const MAX_SEGMENT_WILDCARDS = 3;
export const MAX_GLOBSTARS = 2;
export const MAX_BRANCHING_WILDCARDS = 4;
export const MAX_ALTERNATIVES = 32;

/** A `+(…)`/`*(…)` body picomatch repeats without nested backtracking: plain literals, `|`-separated, none a prefix of another. */
function safeRepeatBody(body: string): boolean {
  const parts = body.split('|');
  if (parts.some((p) => p === '' || /[*?[\]{}()@!+\\",/]/.test(p))) return false;
  // No part a prefix of another (`priv|pub`, not `a|aa`): at any point at most one part can match,
  // so the repetition reads a name one way and backtracks only by whole repeats.
  return parts.every((p, i) => parts.every((q, k) => k === i || !q.startsWith(p)));
}

/**
 * Whether the braces opened at `i` hold only distinct plain names (`{src,lib}`): with no other
 * wildcard in its segment such a group matches a name in at most one way, so it does not multiply.
 */
function literalChoice(glob: string, i: number): boolean {
  const close = glob.indexOf('}', i);
  if (close < 0) return false;
  const alts = glob.slice(i + 1, close).split(',');
  return alts.length > 1 && alts.every((a) => /^[A-Za-z0-9._-]+$/.test(a)) && new Set(alts).size === alts.length;
}

/** Index of the `]` that ends the class opened at `i` as picomatch reads it; -1: not a class; -2: refuse. */
function classEnd(glob: string, i: number): number {
  if (glob.indexOf(']', i + 1) < 0) return -1; // picomatch: a plain "["
  let k = i + 1;
  if (glob[k] === '^') k++;
  if (glob[k] === ']') k++; // first in the class: a character
  for (; k < glob.length; k++) {
    const c = glob[k];
    if (c === '\\') { k++; continue; }
    if (c === '[' && glob[k + 1] === ':') return -2; // POSIX classes: picomatch consumes a "]" of its own
    if (c === ']') return k;
  }
  return -2; // never closed: picomatch copies the class text into the regex unescaped
}

/** Whether a glob (picomatch syntax) may take picomatch long to match: see above. */
export function globTooCostly(text: string): boolean {
  const glob = text.replaceAll('\0', ''); // picomatch drops NUL characters
  if (/\\{3}/.test(glob)) return true;
  let seg = 0;
  let group = false;
  let most = 0;
  let branching = 0;
  let globstars = 0;
  let alternatives = 0;
  let braces = 0;
  const parens: number[] = []; // where each open "(" is
  let quoted = false;
  let prev = ''; // ')' / 'close' (a "]" or "}") when the last token ended one (quotes add none)
  const endSegment = () => {
    most = Math.max(most, seg);
    if (seg >= 2 || group) branching += seg;
    seg = 0;
    group = false;
  };
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    const after = prev;
    prev = '';
    if (c === '\\') { i++; continue; }
    if (quoted || c === '"') { quoted = quoted ? c !== '"' : true; prev = after; continue; }
    if (c === '[') {
      const end = classEnd(glob, i);
      if (end === -2) return true;
      if (end > 0) { i = end; prev = 'close'; continue; }
      continue;
    }
    // A "/" inside a group does not end the segment: the group counts where it starts.
    if (c === '/' && braces === 0 && parens.length === 0) { endSegment(); continue; }
    // `{src,lib}` alone in its segment matches a name in one way at most: not a branching group.
    if (c === '{') { if (braces === 0 && !literalChoice(glob, i)) group = true; braces++; seg++; continue; }
    if (c === '}') { if (braces > 0) braces--; prev = 'close'; continue; }
    if (c === ',' && braces > 0) { alternatives++; continue; }
    if (c === '|') { alternatives++; continue; }
    if ('@*+?!'.includes(c) && glob[i + 1] === '(' && glob[i + 2] !== '?') {
      if (c === '+' || c === '*') {
        let depth = 0;
        let close = -1;
        for (let k = i + 1; k < glob.length && close < 0; k++) {
          if (glob[k] === '\\') k++;
          else if (glob[k] === '(') depth++;
          else if (glob[k] === ')' && --depth === 0) close = k;
        }
        if (close < 0 || !safeRepeatBody(glob.slice(i + 2, close))) return true;
      }
      seg++;
      group = true;
      parens.push(i + 1);
      i++;
      continue;
    }
    if (c === '(') return true; // a plain regex group
    if (c === ')') { parens.pop(); prev = ')'; continue; }
    if (c === '+' && (after !== '' || parens.length > 0)) return true; // a raw regex "+"
    if (c === '?' && after === ')') return true; // a raw regex "?"
    if (c === '*') {
      let j = i;
      while (glob[j + 1] === '*') j++;
      const wholeSegment = j === i + 1 && (i === 0 || glob[i - 1] === '/') && (j + 1 === glob.length || glob[j + 1] === '/');
      // "**" inside a group is a globstar to picomatch after "{", "," "(" or "|": count every one.
      const inGroup = braces > 0 || parens.length > 0;
      if (wholeSegment && !inGroup) globstars++;
      else {
        seg++;
        if (j > i && inGroup) globstars++;
      }
      i = j;
    }
  }
  endSegment();
  return most > MAX_SEGMENT_WILDCARDS || globstars > MAX_GLOBSTARS || (branching > 0 ? branching + globstars : 0) > MAX_BRANCHING_WILDCARDS || alternatives > MAX_ALTERNATIVES;
}

/**
 * Globs a model gives (grep's `glob`, glob's `pattern`, list_dir's `ignore`): one too costly to
 * match is refused (InvalidArguments), with how to split it. `hint` says how else to narrow.
 */
export function refuseCostlyGlobs(globs: readonly string[], arg = 'glob', hint = 'split it into simpler globs, or narrow with path or type'): void {
  for (const g of globs) {
    if (globTooCostly(g.startsWith('!') ? g.slice(1) : g)) {
      throw new ToolError('InvalidArguments', `The ${arg} ${JSON.stringify(g)} has too many wildcards or too much regex syntax to match safely: at most ${MAX_SEGMENT_WILDCARDS} wildcards ("*", "{…}", "@(…)") in one path segment and ${MAX_BRANCHING_WILDCARDS} in segments with more than one, ${MAX_GLOBSTARS} "**" segments, ${MAX_ALTERNATIVES} alternatives, no regex syntax (a plain "(…)", "+" after ")", "]" or "}", three or more "\\\\" in a row, an unclosed "["); ${hint}.`);
    }
  }
}
