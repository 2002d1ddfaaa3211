import { ToolError } from '../core/errors.js';

/**
 * Globs picomatch would match for seconds: its regexes backtrack. Several `*` in one path segment
 * cost about (name length)^k — `*a*a*a*a*a*b` against a 100-character name held the server's
 * thread 10 s — and three `**` about (path length)^3 (a 3,000-character path: seconds). One
 * segment may hold up to three wildcards (a `*` run, a `{…}` group, an extglob group: ~15 ms
 * on a 255-character name), a glob up to two `**` segments (~20 ms on a 4 KB path).
 */
export const MAX_SEGMENT_WILDCARDS = 3;
export const MAX_GLOBSTARS = 2;

/** Whether a glob (picomatch syntax) may take picomatch long to match: see above. */
export function globTooCostly(glob: string): boolean {
  let seg = 0;
  let most = 0;
  let globstars = 0;
  let braces = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '\\') { i++; continue; }
    if (c === '[') {
      // A class is one character: skip to its end (a "]" first in it is a character).
      const end = glob.indexOf(']', i + 2);
      if (end > 0) { i = end; continue; }
    }
    // A "/" inside braces does not end the segment: the group counts where it starts.
    if (c === '/' && braces === 0) { most = Math.max(most, seg); seg = 0; continue; }
    if (c === '{') { braces++; seg++; continue; }
    if (c === '}') { if (braces > 0) braces--; continue; }
    if ('@*+?!'.includes(c) && glob[i + 1] === '(') { seg++; i++; continue; }
    if (c === '*') {
      let j = i;
      while (glob[j + 1] === '*') j++;
      const wholeSegment = j === i + 1 && (i === 0 || glob[i - 1] === '/') && (j + 1 === glob.length || glob[j + 1] === '/');
      if (wholeSegment && braces === 0) globstars++;
      else seg++;
      i = j;
    }
  }
  return Math.max(most, seg) > MAX_SEGMENT_WILDCARDS || globstars > MAX_GLOBSTARS;
}

/**
 * Globs a model gives (grep's `glob`, glob's `pattern`, list_dir's `ignore`): one too costly to
 * match is refused (InvalidArguments), with how to split it. `hint` says how else to narrow.
 */
export function refuseCostlyGlobs(globs: readonly string[], arg = 'glob', hint = 'split it into simpler globs, or narrow with path or type'): void {
  for (const g of globs) {
    if (globTooCostly(g.startsWith('!') ? g.slice(1) : g)) {
      throw new ToolError('InvalidArguments', `The ${arg} ${JSON.stringify(g)} has too many wildcards to match safely: at most ${MAX_SEGMENT_WILDCARDS} ("*", "{…}", "@(…)") in one path segment and ${MAX_GLOBSTARS} "**" segments; ${hint}.`);
    }
  }
}
