import type { CommandWord } from '../core/types.js';

/** A rule's command pattern ("npm run test", "git *") as tokens; "*" stands for any one literal word. */
export function splitCommandPattern(pattern: string): string[] {
  return pattern.trim().split(/\s+/).filter(Boolean);
}

/**
 * True when the words start with the pattern's tokens. A word that still holds `$`, a
 * backtick, a glob or `~` (not literal) never satisfies a token, not even "*".
 */
export function matchesCommandPrefix(tokens: string[], words: CommandWord[]): boolean {
  if (tokens.length === 0 || words.length < tokens.length) return false;
  for (let i = 0; i < tokens.length; i++) {
    const w = words[i]!;
    if (!w.literal) return false;
    if (tokens[i] !== '*' && tokens[i] !== w.text) return false;
  }
  return true;
}

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;
/** git's options before the subcommand that take the next word as their value (when written without `=`). */
const GIT_GLOBAL_WITH_VALUE = new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--config-env', '--exec-path', '--super-prefix', '--attr-source']);

/**
 * The words as a deny or ask rule sees them: without leading assignments (`X=1 rm f`), the
 * program by its base name (`/bin/rm`), and git without its options before the subcommand
 * (`git -C . --no-pager reset --hard`). Not for allow rules: `LD_PRELOAD=x git status` or
 * `git -c core.pager=… log` must not pass as `git status` / `git log`.
 */
export function catchWords(words: CommandWord[]): CommandWord[] {
  let i = 0;
  while (i < words.length - 1 && words[i]!.literal && ASSIGNMENT.test(words[i]!.text)) i++;
  const rest = words.slice(i);
  const first = rest[0];
  if (!first || !first.literal) return rest;
  const prog = first.text.slice(first.text.lastIndexOf('/') + 1);
  const out = [{ ...first, text: prog }];
  let k = 1;
  if (prog === 'git') {
    while (k < rest.length && rest[k]!.text.startsWith('-') && rest[k]!.text !== '--') {
      const t = rest[k]!.text;
      k += GIT_GLOBAL_WITH_VALUE.has(t) ? 2 : 1;
    }
    if (rest[k]?.text === '--') k++;
  }
  return [...out, ...rest.slice(k)];
}

/**
 * A deny or ask rule catches the words as written and as catchWords shows them; a word known
 * only when it runs counts for "*" there (it may be anything).
 */
export function catchesCommand(tokens: string[], words: CommandWord[]): boolean {
  if (matchesCommandPrefix(tokens, words)) return true;
  const w = catchWords(words);
  if (tokens.length === 0 || w.length < tokens.length) return false;
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i] === '*') continue;
    if (!w[i]!.literal || tokens[i] !== w[i]!.text) return false;
  }
  return true;
}

export function matchesAnyCommand(patterns: string[][], words: CommandWord[], catching = false): boolean {
  return patterns.some((p) => (catching ? catchesCommand(p, words) : matchesCommandPrefix(p, words)));
}

/** Plain whitespace split of an example command line, for rules' match/not_match lists. */
export function exampleWords(example: string): CommandWord[] {
  return splitCommandPattern(example).map((text) => ({ text, literal: !/[$`*?[~]/.test(text) }));
}

/** One simple command of a rule's example, as the shell parser sees it. */
export interface ExamplePart {
  words: CommandWord[];
  /** The parser refuses this part whatever the rules say (eval, parse error…). */
  refused: boolean;
}

/**
 * Whether a rule applies to an example command line, judged the way calls are: an allow rule
 * covers it only when it allows every part; a deny or ask rule when it catches any part.
 */
export function ruleCoversExample(patterns: string[][], decision: 'allow' | 'ask' | 'deny', parts: ExamplePart[]): boolean {
  if (parts.length === 0) return false;
  const hit = (p: ExamplePart) => !p.refused && matchesAnyCommand(patterns, p.words, decision !== 'allow');
  return decision === 'allow' ? parts.every(hit) : parts.some(hit);
}
