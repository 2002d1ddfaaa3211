import type { CommandWord } from '../core/types.js';
import { gitCall } from './git.js';
import { PATTERN_OPTS, patternOperand } from './grep-args.js';

/**
 * Words a program takes as a name or a pattern, never as a file to open: the secrets list does not
 * refuse them (`grep -n .env .gitignore`, `find . -name .env`, `git status --short .env`,
 * `rsync --exclude .env`, `zip -r a.zip . -x .env`). Read conservatively: an option toolgate does not
 * know to take a value leaves the next word an operand (a file), never the other way round.
 */
export function nameOperands(prog: CommandWord | undefined, words: CommandWord[]): Set<CommandWord> {
  const out = new Set<CommandWord>();
  // A bare name only: a path (`./grep`) runs whatever file is there (`ln -s /usr/bin/cat grep`).
  if (!prog?.literal || prog.text.includes('/')) return out;
  const name = prog.text;
  const args = words[0] === prog ? words.slice(1) : words;
  // The value of an exclude or include option (`--exclude .env`, `--exclude=.env`), for the programs
  // known to take one, read up to their first operand (see excludeValues).
  const ex = EXCLUDES[name];
  if (ex) for (const w of excludeValues(args, ex, name === 'tar' || name === 'gtar' || name === 'bsdtar')) out.add(w);
  const pattern = PATTERN_OPTS[name];
  if (pattern) { const p = patternOperand(args, pattern); if (p) out.add(p); }
  if (name === 'find') args.forEach((w, i) => { if (FIND_NAMES.test(w.text) && args[i + 1]) out.add(args[i + 1]!); });
  // zip -x / -i (--exclude / --include): every word after it up to the next option (or `--`) is a pattern.
  if (name === 'zip') {
    let list = false;
    for (const w of args) {
      if (w.text === '--' || !w.literal) break;
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
    if (call.sub === 'clean' && words[call.at]?.literal !== false) for (const w of excludeValues(rest, GIT_CLEAN, false)) out.add(w);
    // (After `--` git grep takes pathspecs only.)
    if (call.sub === 'grep') { const p = patternOperand(rest, PATTERN_OPTS['git grep']!); const dd = texts.indexOf('--'); if (p && (dd < 0 || p !== rest[dd + 1])) out.add(p); }
  }
  return out;
}

/**
 * Per program: the exclude/include options whose value is a pattern (exact names), the short
 * options that take a value, and the long ones that take one (a prefix of one takes the next word too).
 */
interface ExcludeOpts { opts: string[]; short: string; long: string[] }
const GREP_EX: ExcludeOpts = { opts: ['--exclude', '--exclude-dir', '--include'], short: 'ABCDdmefX', long: ['--after-context', '--before-context', '--binary-files', '--context', '--devices', '--directories', '--exclude', '--exclude-dir', '--exclude-from', '--file', '--group-separator', '--include', '--label', '--max-count', '--regexp'] };
const TAR_EX: ExcludeOpts = {
  opts: ['--exclude'], short: 'bCfFgHIKLNTVX',
  long: ['--add-file', '--after-date', '--blocking-factor', '--checkpoint-action', '--directory', '--exclude', '--exclude-from', '--exclude-ignore', '--exclude-ignore-recursive', '--exclude-tag', '--exclude-tag-all', '--exclude-tag-under', '--file', '--files-from', '--format', '--group', '--group-map', '--hole-detection', '--index-file', '--info-script', '--label', '--level', '--listed-incremental', '--mode', '--mtime', '--new-volume-script', '--newer', '--newer-mtime', '--no-quote-chars', '--owner', '--owner-map', '--quote-chars', '--quoting-style', '--record-size', '--rmt-command', '--rsh-command', '--sort', '--sparse-version', '--starting-file', '--strip-components', '--suffix', '--tape-length', '--to-command', '--transform', '--use-compress-program', '--volno-file', '--warning', '--xattrs-exclude', '--xattrs-include', '--xform', '--include', '--options', '--uid', '--gid', '--uname', '--gname', '--strip-components'],
};
const EXCLUDES: Record<string, ExcludeOpts> = {
  grep: GREP_EX, egrep: GREP_EX, fgrep: GREP_EX,
  rg: { opts: ['--glob', '--iglob', '-g'], short: PATTERN_OPTS.rg!.short, long: PATTERN_OPTS.rg!.long },
  ag: { opts: ['--ignore', '--ignore-dir'], short: 'ABCGgmp', long: PATTERN_OPTS.ag!.long },
  rsync: {
    opts: ['--exclude', '--include'], short: 'BfTeM@',
    long: ['--rsh', '--rsync-path', '--exclude', '--exclude-from', '--include', '--include-from', '--files-from', '--filter', '--backup-dir', '--suffix', '--chmod', '--chown', '--usermap', '--groupmap', '--max-delete', '--max-size', '--min-size', '--max-alloc', '--block-size', '--compare-dest', '--copy-dest', '--link-dest', '--temp-dir', '--partial-dir', '--log-file', '--log-file-format', '--out-format', '--password-file', '--port', '--sockopts', '--timeout', '--contimeout', '--bwlimit', '--write-batch', '--only-write-batch', '--read-batch', '--protocol', '--iconv', '--checksum-choice', '--compress-choice', '--compress-level', '--skip-compress', '--modify-window', '--info', '--debug', '--outbuf', '--remote-option', '--address', '--stop-after', '--stop-at', '--copy-as', '--checksum-seed'],
  },
  tar: TAR_EX, gtar: TAR_EX, bsdtar: { ...TAR_EX, opts: ['--exclude', '--include'] },
  du: { opts: ['--exclude'], short: 'BdtX', long: ['--block-size', '--exclude', '--exclude-from', '--files0-from', '--max-depth', '--threshold', '--time', '--time-style'] },
  ls: { opts: ['--ignore', '--hide'], short: 'ITw', long: ['--block-size', '--format', '--hide', '--ignore', '--indicator-style', '--quoting-style', '--sort', '--tabsize', '--time', '--time-style', '--width'] },
  diff: { opts: ['--exclude'], short: 'CDFILSUWxX', long: ['--exclude', '--exclude-from', '--from-file', '--horizon-lines', '--ifdef', '--ignore-matching-lines', '--line-format', '--palette', '--show-function-line', '--starting-file', '--tabsize', '--to-file', '--width', '--label', '--context', '--unified'] },
};
const GIT_CLEAN: ExcludeOpts = { opts: ['--exclude', '-e'], short: 'e', long: ['--exclude'] };

/**
 * The values of the exclude options, read up to the first operand, `--` or a word known only when
 * it runs (glued ones, `--exclude=.env`, up to `--`): after an operand GNU tools take options only while POSIXLY_CORRECT is unset (set, they
 * are operands: `du . --exclude .env` reads .env), and an option that takes a value swallows the
 * next word (`tar -f --exclude .env`). tar's old-style first word (`czf`) takes a value per letter.
 */
function excludeValues(args: CommandWord[], o: ExcludeOpts, tar: boolean): CommandWord[] {
  const out: CommandWord[] = [];
  let operand = false;
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const t = w.text;
    if (t === '--' || (!w.literal && !operand)) break;
    // `--exclude=.env` glued: an option, or (POSIXLY_CORRECT, after an operand) a file of that name, never .env.
    if (w.literal && o.opts.some((x) => x.startsWith('--') && t.startsWith(`${x}=`))) { out.push(w); continue; }
    if (operand) continue;
    if (o.opts.includes(t)) { if (args[i + 1]) out.push(args[i + 1]!); i++; continue; }
    if (tar && i === 0 && /^[A-Za-z]+$/.test(t)) { i += [...t].filter((c) => o.short.includes(c)).length; continue; }
    if (!t.startsWith('-') || t === '-') { operand = true; continue; }
    if (t.startsWith('--')) { if (!t.includes('=') && t.length >= 3 && o.long.some((l) => l.startsWith(t))) i++; continue; }
    for (let k = 1; k < t.length; k++) if (o.short.includes(t[k]!)) { if (k === t.length - 1) i++; break; }
  }
  return out;
}

/** find's tests whose value is a name or pattern (not -newer, -samefile: files). */
const FIND_NAMES = /^-(i?name|i?path|i?wholename|i?regex|i?lname)$/;
