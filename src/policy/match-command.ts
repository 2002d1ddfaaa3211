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

export function matchesAnyCommand(patterns: string[][], words: CommandWord[]): boolean {
  return patterns.some((p) => matchesCommandPrefix(p, words));
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
  const hit = (p: ExamplePart) => !p.refused && matchesAnyCommand(patterns, p.words);
  return decision === 'allow' ? parts.every(hit) : parts.some(hit);
}
