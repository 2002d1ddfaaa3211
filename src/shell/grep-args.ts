import type { CommandWord } from '../core/types.js';

/**
 * For a pattern-first program: short options that take a value (required), long ones that take
 * the next word (exact names), long ones that give the pattern (-e/-f and their long forms, any
 * prefix), and the short letters that give it.
 */
export interface PatternOpts { short: string; long: string[]; given: string; givenLong: string[] }

const GREP: PatternOpts = {
  short: 'ABCDdmefX',
  long: ['--after-context', '--before-context', '--context', '--devices', '--directories', '--max-count', '--label', '--binary-files', '--group-separator', '--regexp', '--file', '--exclude', '--include', '--exclude-dir', '--exclude-from'],
  given: 'ef', givenLong: ['--regexp', '--file'],
};
export const PATTERN_OPTS: Record<string, PatternOpts> = {
  grep: GREP, egrep: GREP, fgrep: GREP,
  // rg --files lists names and takes no pattern: every operand is a path.
  rg: {
    short: 'ABCEMTdefgjmrt', given: 'ef', givenLong: ['--regexp', '--file', '--files'],
    long: ['--after-context', '--before-context', '--context', '--encoding', '--max-columns', '--type-not', '--max-depth', '--regexp', '--file', '--glob', '--iglob', '--threads', '--max-count', '--replace', '--type', '--type-add', '--sort', '--sortr', '--max-filesize', '--path-separator', '--colors', '--color', '--engine', '--ignore-file', '--pre', '--pre-glob', '--context-separator', '--field-context-separator', '--field-match-separator', '--dfa-size-limit', '--regex-size-limit', '--type-clear'],
  },
  // ag's -A/-B/-C take an optional value (glued only): not listed, so a word after them stays a file.
  // -g PATTERN lists the names matching PATTERN: every operand is a path.
  ag: { short: 'Ggmp', long: ['--file-search-regex', '--max-count', '--path-to-ignore', '--ignore', '--ignore-dir', '--depth', '--pager', '--workers'], given: 'g', givenLong: ['--filename-pattern'] },
  // git grep -O takes an optional value (glued only).
  'git grep': { short: 'ABCefm', long: ['--after-context', '--before-context', '--context', '--max-count', '--threads', '--max-depth'], given: 'ef', givenLong: ['--regexp', '--file'] },
};

/** How a pattern-first program's words read. */
export interface PatternArgs {
  /** -e/-f (or a long form, any prefix) anywhere before `--`: no operand is the pattern. */
  given: boolean;
  /** A word known only when it runs (it may be `-e…`), or a long option read only as a prefix: which operand is the pattern is not known. */
  unsure: boolean;
  /** The first operand (before or after `--`). */
  first: CommandWord | null;
  /** Words taken as the value of an option other than -f/--file (`-m 1`, `-d recurse`): no file. */
  values: Set<CommandWord>;
}

/**
 * Reads the words as GNU grep and rg do: options may follow operands (getopt permutes them), short
 * options cluster (`-ve X`, `-vf F`, `-eX`), a long option may be any prefix (`--rege`, `--fil=F`),
 * and `--` ends them. An option toolgate does not know to take a value leaves the next word an
 * operand; a prefix of one that does makes the reading unsure (never a file taken for the pattern).
 */
export function patternArgs(args: CommandWord[], o: PatternOpts): PatternArgs {
  let given = false;
  let unsure = false;
  let first: CommandWord | null = null;
  const values = new Set<CommandWord>();
  let opts = true;
  const take = (i: number, file: boolean) => { if (!file && args[i]) values.add(args[i]!); return i; };
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const t = w.text;
    if (opts && !w.literal) { unsure = true; continue; }
    if (opts && t === '--') { opts = false; continue; }
    if (!opts || !t.startsWith('-') || t === '-') { first ??= w; continue; }
    if (t.startsWith('--')) {
      const n = t.split('=')[0]!;
      // -e / -f in any form (an unknown prefix counts as giving one).
      if (n.length >= 4 && o.givenLong.some((g) => g.startsWith(n))) { given = true; if (!t.includes('=') && o.long.includes(n)) i = take(i + 1, n === '--file'); continue; }
      if (t.includes('=')) continue;
      if (o.long.includes(n)) i = take(i + 1, false);
      else if (o.long.some((l) => l.startsWith(n))) unsure = true;
      continue;
    }
    for (let k = 1; k < t.length; k++) {
      const c = t[k]!;
      if (o.given.includes(c)) given = true;
      if (o.short.includes(c) || o.given.includes(c)) { if (k === t.length - 1 && o.short.includes(c)) i = take(i + 1, c === 'f'); break; }
    }
  }
  return { given, unsure, first, values };
}

/** The pattern operand when it is surely one (no -e/-f anywhere, nothing known only when it runs), else null. */
export function patternOperand(args: CommandWord[], o: PatternOpts): CommandWord | null {
  const r = patternArgs(args, o);
  return r.given || r.unsure ? null : r.first;
}
