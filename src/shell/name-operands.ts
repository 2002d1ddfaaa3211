import type { CommandWord } from '../core/types.js';
import { gitCall } from './git.js';

/**
 * Words a program takes as a name or a pattern, never as a file to open: the secrets list does not
 * refuse them (`grep -n .env .gitignore`, `find . -name .env`, `git status --short .env`,
 * `rsync --exclude .env`, `zip -r a.zip . -x .env`). Read conservatively: an option toolgate does not
 * know to take a value leaves the next word an operand (a file), never the other way round.
 */
export function nameOperands(prog: CommandWord | undefined, words: CommandWord[]): Set<CommandWord> {
  const out = new Set<CommandWord>();
  if (!prog?.literal) return out;
  const name = prog.text.slice(prog.text.lastIndexOf('/') + 1);
  const args = words[0] === prog ? words.slice(1) : words;
  // The value of an exclude or include option given as the next word (`--exclude .env`).
  // (`--include` only where it is a pattern: gawk's loads a file.)
  const opt = INCLUDES.has(name) ? /^--(exclude|exclude-dir|ignore|ignore-dir|include|include-dir)$/ : /^--(exclude|exclude-dir|ignore|ignore-dir)$/;
  args.forEach((w, i) => { if (opt.test(w.text) && args[i + 1]) out.add(args[i + 1]!); });
  const pattern = PATTERN_OPTS[name];
  if (pattern) { const p = patternOperand(args, pattern); if (p) out.add(p); }
  if (name === 'find') args.forEach((w, i) => { if (FIND_NAMES.test(w.text) && args[i + 1]) out.add(args[i + 1]!); });
  // zip -x / -i (--exclude / --include): every word after it up to the next option is a pattern.
  if (name === 'zip') {
    let list = false;
    for (const w of args) {
      if (w.text.startsWith('-')) { list = /^(-x|-i|--exclude|--include)$/.test(w.text); continue; }
      if (list) out.add(w);
    }
  }
  if (name === 'git') {
    const call = gitCall(words[0] === prog ? words : [prog, ...words]);
    const rest = (words[0] === prog ? words : [prog, ...words]).slice(call.at + 1);
    const texts = rest.map((w) => w.text);
    // Sub-commands that print names (never content) of the pathspecs they are given.
    // (`status -v` prints the staged diff: not names only.)
    const namesOnly = (call.sub === 'status' && !texts.some((t) => /^(-[A-Za-z]*v|--v)/.test(t)))
      || call.sub === 'check-ignore' || call.sub === 'check-attr' || call.sub === 'ls-files';
    if (namesOnly && words[call.at]?.literal !== false) for (const w of rest) if (!w.text.startsWith('-')) out.add(w);
    // (After `--` git grep takes pathspecs only.)
    if (call.sub === 'grep') { const p = patternOperand(rest, PATTERN_OPTS['git grep']!); const dd = texts.indexOf('--'); if (p && (dd < 0 || p !== rest[dd + 1])) out.add(p); }
  }
  return out;
}

const INCLUDES = new Set(['grep', 'egrep', 'fgrep', 'rg', 'ag', 'rsync', 'tar', 'bsdtar', 'gtar', 'zip']);

/** find's tests whose value is a name or pattern (not -newer, -samefile: files). */
const FIND_NAMES = /^-(i?name|i?path|i?wholename|i?regex|i?lname)$/;

/** For a pattern-first program: short options that take a value (required), long ones that take the next word, and the short ones giving the pattern. */
interface PatternOpts { short: string; long: string[]; given: string }
const GREP: PatternOpts = { short: 'ABCDdmef', long: ['--after-context', '--before-context', '--context', '--devices', '--directories', '--max-count', '--label', '--binary-files', '--group-separator', '--regexp', '--file', '--exclude', '--include', '--exclude-dir'], given: 'ef' };
const PATTERN_OPTS: Record<string, PatternOpts> = {
  grep: GREP, egrep: GREP, fgrep: GREP,
  rg: { short: 'ABCEMTdefgjmrt', long: ['--after-context', '--before-context', '--context', '--encoding', '--max-columns', '--type-not', '--max-depth', '--regexp', '--file', '--glob', '--iglob', '--threads', '--max-count', '--replace', '--type', '--type-add', '--sort', '--sortr', '--max-filesize', '--path-separator', '--colors', '--color', '--engine', '--ignore-file', '--pre', '--pre-glob', '--context-separator', '--field-context-separator', '--field-match-separator', '--dfa-size-limit', '--regex-size-limit'], given: 'ef' },
  // ag's -A/-B/-C take an optional value (glued only): not listed, so a word after them stays a file.
  ag: { short: 'Ggmp', long: ['--file-search-regex', '--max-count', '--path-to-ignore', '--ignore', '--ignore-dir', '--depth', '--pager', '--workers'], given: '' },
  // git grep -O takes an optional value (glued only).
  'git grep': { short: 'ABCefm', long: ['--after-context', '--before-context', '--context', '--max-count', '--threads', '--max-depth'], given: 'ef' },
};

/** The pattern operand: the first word no option takes, when no -e/-f gives the pattern. */
function patternOperand(args: CommandWord[], o: PatternOpts): CommandWord | null {
  for (let i = 0; i < args.length; i++) {
    const t = args[i]!.text;
    if (!args[i]!.literal) return null;
    if (t === '--') return args[i + 1] ?? null;
    if (t.startsWith('--')) {
      const n = t.split('=')[0]!;
      // -e / -f in any form: the first operand is a file (an unknown prefix counts as giving one).
      if (n.length > 3 && ['--regexp', '--file'].some((g) => g.startsWith(n))) return null;
      if (!t.includes('=') && o.long.includes(n)) i++;
      continue;
    }
    if (t.startsWith('-') && t !== '-') {
      for (let k = 1; k < t.length; k++) {
        const c = t[k]!;
        if (o.given.includes(c) || 'ef'.includes(c)) return null;
        if (o.short.includes(c)) { if (k === t.length - 1) i++; break; }
      }
      continue;
    }
    return args[i]!;
  }
  return null;
}
