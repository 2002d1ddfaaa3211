import type { ExamplePart } from '../policy/match-command.js';
import { analyzeCommand } from './analyze.js';
import type { ShellParser } from './parser.js';

/** A rule's match/not_match example as the parts a call with that command would be judged on. */
export function examplePartsWith(parser: ShellParser): (text: string) => ExamplePart[] {
  return (text) => analyzeCommand(parser, text).parts.map((p) => ({ words: p.words, refused: !!p.deny_reason }));
}
