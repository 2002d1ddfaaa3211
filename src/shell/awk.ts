import type { CommandWord } from '../core/types.js';
import { longOption } from './sed.js';

/**
 * awk (mawk, gawk, onetrue awk): whether a call may run commands, write files or read files its
 * words do not name. Conservative on purpose: the program text is not parsed (strings and regular
 * expressions cannot be told apart from code without a full awk grammar), so any trace of these in
 * it counts, inside a string or not:
 * - `system`, any `getline` (`getline < FILE` reads a file, `CMD | getline` runs one), any `|` that
 *   is not part of `||` (pipes to and from commands, `|&`);
 * - `>` after a `print`/`printf` (output redirection; a comparison there must be parenthesised);
 * - `@` followed by a name: gawk's @load/@include/@namespace and indirect calls (`@f()` with f="system");
 * - `ARGV`: a program that sets ARGV[n] reads a file no word names.
 * Backslash-newlines are removed first (`system\⏎("…")` is `system("…")` to awk).
 */
export function awkRunsCode(words: CommandWord[]): string | null {
  const programs: CommandWord[] = [];
  let fromFile = false;
  let opts = true;
  let bad = false;
  const ops: CommandWord[] = [];
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!;
    const t = w.text;
    if (!opts || t === '-' || !t.startsWith('-')) { ops.push(w); continue; }
    if (!w.literal) { bad = true; continue; }
    if (t === '--') { opts = false; continue; }
    if (t.startsWith('--')) {
      const eq = t.indexOf('=');
      const o = longOption(LONG, t.slice(2, eq < 0 ? undefined : eq));
      if (!o || o.opt === 'bad') { bad = true; continue; }
      if (o.opt === 'with') { if (eq < 0) i++; continue; }
      if (o.opt === 'source') { const v = eq >= 0 ? { ...w, text: t.slice(eq + 1) } : words[++i]; if (v) programs.push(v); else bad = true; }
      continue;
    }
    for (let k = 1; k < t.length; k++) {
      const c = t[k]!;
      if (SAFE_FLAGS.includes(c)) continue;
      if (c === 'F' || c === 'v' || c === 'e') {
        const v = k + 1 < t.length ? { ...w, text: t.slice(k + 1) } : words[++i];
        if (!v) bad = true;
        else if (c === 'e') programs.push(v);
        break;
      }
      // -f/-i/-l/-E: a program or an extension from a file; -W (mawk: exec, dump…), -o/-p/-d/-D (write
      // files, run the debugger); anything unknown.
      if ('fE'.includes(c)) fromFile = true;
      bad = true;
      break;
    }
  }
  if (bad || fromFile) return 'awk with these options runs a program from a file or writes files';
  if (programs.length === 0 && ops[0]) programs.push(ops[0]);
  if (programs.length === 0) return null; // no program: awk only prints its usage
  if (programs.some((p) => !p.literal)) return 'the awk program is known only when it runs';
  for (const p of programs) {
    const why = awkProgramRuns(p.text);
    if (why) return why;
  }
  return null;
}

/** Short options without a value that change nothing outside (gawk's -b -c -C -g -h -M -n -N -O -P -r -s -S -t -V). */
const SAFE_FLAGS = 'bcCghMnNOPrsStV';

/** gawk's (and mawk's) long options: `with` takes a value, `source` is program text, `bad` is refused; any prefix counts. */
const LONG: Record<string, { opt: string }> = {
  assign: { opt: 'with' }, 'field-separator': { opt: 'with' }, source: { opt: 'source' },
  'characters-as-bytes': { opt: 'ok' }, traditional: { opt: 'ok' }, copyright: { opt: 'ok' }, 'gen-pot': { opt: 'ok' },
  help: { opt: 'ok' }, 'use-lc-numeric': { opt: 'ok' }, 'non-decimal-data': { opt: 'ok' }, optimize: { opt: 'ok' },
  'no-optimize': { opt: 'ok' }, posix: { opt: 'ok' }, 're-interval': { opt: 'ok' }, 'lint-old': { opt: 'ok' },
  version: { opt: 'ok' }, bignum: { opt: 'ok' }, csv: { opt: 'ok' }, sandbox: { opt: 'ok' },
  file: { opt: 'bad' }, exec: { opt: 'bad' }, include: { opt: 'bad' }, load: { opt: 'bad' }, 'dump-variables': { opt: 'bad' },
  debug: { opt: 'bad' }, 'pretty-print': { opt: 'bad' }, profile: { opt: 'bad' }, lint: { opt: 'bad' }, dump: { opt: 'bad' },
};

/** Why an awk program text may run commands, write or read files (see awkRunsCode), or null. */
export function awkProgramRuns(program: string): string | null {
  const src = program.replace(/\\\r?\n/g, '');
  if (/\bsystem\b/.test(src)) return 'the awk program runs commands (system)';
  if (/\bgetline\b/.test(src)) return 'the awk program reads files or runs commands (getline)';
  if (src.replace(/\|\|/g, '').includes('|')) return 'the awk program pipes to or from a command';
  if (/@\s*[A-Za-z_]/.test(src)) return 'the awk program loads code or calls a function by name (@)';
  if (/\bARGV\b/.test(src)) return 'the awk program may read files its words do not name (ARGV)';
  const print = /\bprintf?\b/.exec(src);
  if (print && src.slice(print.index).includes('>')) return 'the awk program writes files (print >)';
  return null;
}
