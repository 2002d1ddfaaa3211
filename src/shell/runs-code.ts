import type { CommandWord } from '../core/types.js';
import { awkRunsCode } from './awk.js';
import { gitRunsCode } from './git.js';
import { VI_LIKE } from './extract.js';
import { sedCall } from './sed.js';

/**
 * A long option among `names` however written: whole, or any prefix getopt_long takes for it
 * (`--filt=…`, `--diff-prog …`), at least `min` characters long, unless the prefix is an option of
 * its own (`install --strip` is not `--strip-program`). An ambiguous prefix fails to run: counted too.
 */
function longOption(t: string[], names: string[], min = 3, exact: string[] = []): boolean {
  return t.some((x) => {
    if (!x.startsWith('--') || x === '--') return false;
    const name = x.split('=')[0]!;
    return name.length >= min && !exact.includes(name) && names.some((n) => n.startsWith(name));
  });
}

/**
 * A short option letter in `runs` in a cluster (`-xzI prog`, `-avze cmd`), read up to the first
 * letter that takes a value (`withValue`): `-cfI` is `-f I`, an archive named I. With `firstBare`,
 * the first word without a dash is a cluster too (`tar cIf …`, old style: each letter's value is a
 * later word).
 */
function shortOption(t: string[], runs: string, withValue: string, firstBare = false): boolean {
  return t.some((x, i) => {
    if (firstBare && i === 0 && /^[A-Za-z]+$/.test(x)) return [...x].some((c) => runs.includes(c));
    if (!/^-[^-]/.test(x)) return false;
    for (const c of x.slice(1)) {
      if (runs.includes(c)) return true;
      if (withValue.includes(c)) return false;
    }
    return false;
  });
}

const TAR_RUNS = ['--to-command', '--checkpoint-action', '--use-compress-program', '--info-script', '--new-volume-script', '--rsh-command', '--rmt-command'];

/**
 * Options of well-known tools that run a command or a script given as text. Returns why,
 * when the words use one: the part is then judged as something that cannot be allowed by prefix.
 * `dirs`: the folders earlier `cd`s of the line named (make resolves its makefile there).
 */
export function runsCodeFromText(prog: string, words: CommandWord[], dirs: CommandWord[] = []): string | null {
  const t = words.slice(1).map((w) => w.text);
  const opt = (re: RegExp) => t.some((x) => re.test(x));
  switch (prog) {
    case 'rg': return opt(/^--pre(=|$)/) ? 'rg --pre runs a command on each file' : null;
    case 'sort': return longOption(t, ['--compress-program'], 4) ? 'sort --compress-program runs a command' : null;
    case 'tar': case 'bsdtar': case 'gtar':
      return longOption(t, TAR_RUNS, 3, ['--checkpoint']) || shortOption(t, 'IF', 'bCfgHKLNTVX', true) ? 'this tar option runs a command' : null;
    case 'git': return gitRunsCode(words);
    case 'make': case 'gmake': return makeRunsGiven(words, dirs);
    case 'man': return opt(/^(-P|--pager|-H|--html)/) ? 'man with a pager option runs a command' : null;
    case 'awk': case 'gawk': case 'mawk': case 'nawk': return awkRunsCode(words);
    case 'script': return 'script runs a command and writes a typescript file';
    case 'sed': return sedCall(words).code;
    case 'less': case 'more': return opt(/^(\+|-\+)|^--?(lesskey|init)/) ? 'this pager option can run a command' : null;
    case 'ssh': case 'scp': case 'sftp': return opt(/ProxyCommand|LocalCommand|PermitLocalCommand|-oProxy|^-S$/i) ? 'this ssh option runs a command' : null;
    case 'zip': return opt(/^-TT/) || longOption(t, ['--unzip-command'], 3) ? 'zip -TT / --unzip-command runs a command' : null;
    // ed's commands (read from its input) run shell commands: `!cmd`, `r !cmd`, `w !cmd` (red refuses them).
    case 'ed': return t.some((x) => /^(-V|--version|-h|--help)$/.test(x)) ? null : 'ed runs the shell commands its input holds (!cmd, r !cmd, w !cmd)';
    // wget's askpass program, named by an option (any prefix) or a wgetrc command (-e use_askpass=…, --config FILE).
    case 'wget': return longOption(t, ['--use-askpass', '--config'], 5) || wgetrcCommand(t) ? 'wget --use-askpass (or a wgetrc command or file) runs a program' : null;
    // coreutils / diffutils / rsync options whose value is a program they run.
    case 'split': return longOption(t, ['--filter']) ? 'split --filter runs a command on each piece' : null;
    case 'sdiff': case 'diff3': return longOption(t, ['--diff-program']) ? `${prog} --diff-program runs a program` : null;
    case 'install': case 'ginstall': return longOption(t, ['--strip-program'], 8) ? 'install --strip-program runs a program' : null;
    case 'rsync': return longOption(t, ['--rsh', '--rsync-path', '--remote-option'], 4) || shortOption(t, 'eM', 'BfT@') ? 'this rsync option runs a command (-e, --rsh, --rsync-path)' : null;
    default:
      // ex / vi by any name: `+cmd`, `-c cmd`, `-S file` and their input run `:!cmd` (see VI_LIKE).
      if (VI_LIKE.test(prog)) return t.some((x) => /^(--version|-h|--help)$/.test(x)) ? null : `${prog} runs the commands its arguments and input hold (+cmd, -c, :!cmd) and writes any path`;
      if (/^(gcc|g\+\+|clang|clang\+\+|cc|c\+\+|cpp)(-[0-9.]+)?$/.test(prog) || /-(gcc|g\+\+)(-[0-9.]+)?$/.test(prog)) return gccRunsProgram(t) ? `${prog} -wrapper / -B / -fplugin= / -specs= runs a program it names` : null;
      return null;
  }
}

/**
 * The gcc/clang driver's options that run a program it names: `-wrapper prog,args`, `-B dir` (the
 * compiler passes, cc1 / as / ld, are looked up there), `-fplugin=` (a shared object loaded into cc1),
 * `-specs=` (a spec file: `%(…)` / `|` run commands), clang's `-fpass-plugin=`, `-load`, `--gcc-toolchain=`,
 * `-ccc-install-dir` … and `-no-integrated-as` with `-B`; also in `-Wl,`/`-Xlinker` only `-plugin`.
 */
function gccRunsProgram(t: string[]): boolean {
  return t.some((x, i) => /^(-wrapper|--wrapper|-B.*|--prefix.*|-fplugin.*|-specs.*|--specs.*|-fpass-plugin.*|-load|-Xclang|-ccc-.*|--gcc-toolchain.*|--gcc-install-dir.*|-fuse-ld=.*\/.*|--ld-path.*|-plugin.*)$/.test(x)
    || (/^(-Wl,|-Xlinker$)/.test(x) && /plugin/.test(x === '-Xlinker' ? t[i + 1] ?? '' : x)));
}

/** wget's `-e CMD` / `--execute=CMD` (any prefix, glued or not) naming use_askpass. */
function wgetrcCommand(t: string[]): boolean {
  return t.some((x, i) => {
    const long = /^--(e[a-z]*)(=(.*))?$/.exec(x);
    const v = long && '--execute'.startsWith(`--${long[1]}`) ? (long[2] !== undefined ? long[3]! : t[i + 1] ?? '')
      : /^-[A-Za-z]*e/.test(x) && !x.startsWith('--') ? (x.slice(x.indexOf('e') + 1) || (t[i + 1] ?? '')) : null;
    return v !== null && /useaskpass/i.test(v.replace(/[-_\s]/g, ''));  // wgetrc names ignore case, - and _
  });
}

/** make's options that take no value, or a value that is no makefile (numbers, a folder). */
const MAKE_FLAGS = /^(-[sknBiqrRwSteLpdv]+|--(silent|quiet|keep-going|just-print|dry-run|recon|always-make|ignore-errors|question|no-builtin-rules|no-builtin-variables|print-directory|no-print-directory|no-keep-going|stop|touch|environment-overrides|check-symlink-times|print-data-base|debug|version|trace|warn-undefined-variables)|-j[0-9]*|--jobs(=[0-9]+)?|-l[0-9.]*|--load-average(=[0-9.]+)?|-O[a-z]*|--output-sync(=[a-z]+)?|-C.+|--directory=.+)$/;

/**
 * A path part that may lead to make's input rather than a file: /dev and /proc however reached
 * (`-C /dev -f stdin`, `cd /proc/self/fd && make -f 0`, `-C / -f dev/stdin`), and the names inside
 * them a makefile path starts with in such a folder (stdin, fd, self, a number), whatever folder
 * the command is in (a background shell may have been left in /dev by earlier input).
 */
const SPECIAL_PART = /^(dev|proc|stdin|fd|self|thread-self|[0-9]+)$/;
const special = (p: string) => p === '-' || p.split('/').some((part) => SPECIAL_PART.test(part));

/**
 * make runs the recipes of the makefiles in the folder (a script, judged as the program `make`);
 * anything that gives it recipes or values in the command is code: `--eval` (any prefix), `-E`,
 * a makefile from its input or a substitution, and every `NAME=value` (`CC='…;'` reaches a built-in
 * rule's recipe, `X!=cmd` runs cmd, SHELL / .SHELLFLAGS / MAKEFLAGS). Only plain targets,
 * `-f FILE`, `-C DIR` and the options above pass; a makefile is read from the -C folders and
 * the line's cd targets, so none of those may lead into /dev or /proc either.
 */
function makeRunsGiven(words: CommandWord[], dirs: CommandWord[]): string | null {
  const code = 'make runs recipes given in the command (--eval, a makefile from its input, NAME=value…)';
  const files: string[] = [];
  const folders: string[] = [];
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!;
    const t = w.text;
    if (!w.literal || t.includes('`') || (!t.startsWith('-') && t.includes('='))) return code;
    if (t === '-f' || t === '--file' || t === '--makefile' || t === '-C' || t === '--directory' || t === '-o' || t === '-W' || t === '-I') {
      const v = words[++i];
      if (!v || !v.literal) return code;
      if (t === '-f' || t === '--file' || t === '--makefile') files.push(v.text);
      if (t === '-C' || t === '--directory') folders.push(v.text);
      continue;
    }
    const file = /^(-f|--file=|--makefile=)(.+)$/.exec(t);
    if (file) { files.push(file[2]!); continue; }
    const dir = /^(-C|--directory=)(.+)$/.exec(t);
    if (dir) folders.push(dir[2]!);
    if (MAKE_FLAGS.test(t)) continue;
    if (t.startsWith('-')) return code;
  }
  if (files.length === 0) return null;
  // A folder known only when it runs (`cd "$d"`, `cd -`) may be /dev as well.
  const home = (d: CommandWord) => /^~(\/[^$`*?[\]{}~]*)?$/.test(d.text);
  if (dirs.some((d) => !d.literal && !home(d))) return code;
  const all = [...files, ...folders, ...dirs.map((d) => d.text)].map((p) => p.replace(/\/+/g, '/'));
  return all.some(special) ? code : null;
}
