import { accessSync, constants, statSync } from 'node:fs';

/**
 * A command line that is one program with plain arguments, run without bash (sandbox `none`).
 *
 * `bash -c 'git status'` parses the line, finds `git` in PATH and execs it in its own place (no
 * fork: the program is the process bash was, leader of the same group). For a line that bash
 * would split into these same words with nothing to expand, toolgate does that exec itself and
 * saves bash's start (~0.3 ms of ~1.8 on this machine). The line qualifies only when:
 * - every word is made of characters no shell treats specially (PLAIN: no quote, backslash, `$`,
 *   backtick, glob, brace, tilde, `#`, `=`, operator or newline), so its words are exactly its
 *   space-separated pieces;
 * - the program is named without a slash and is not a bash keyword or builtin (those run inside
 *   bash), except `echo` (below), and PATH holds an executable regular file of that name;
 * - the environment holds nothing that changes how bash starts (BASH_ENV, exported functions,
 *   SHELLOPTS, …; SHELL_START).
 * bash exports PWD (the real cwd), SHLVL=0 and `_` (the program's path) to a program it execs in
 * its own place, when none of them came in its environment: so does this; with any of them (or
 * OLDPWD) in the environment, bash runs the line.
 *
 * `echo` with arguments that are not `--help` or `--version`, and without POSIXLY_CORRECT, prints
 * the same from the builtin and from coreutils' program (neither reads backslashes without -e,
 * both take -n, -e and -E): `echo …` runs coreutils' program when PATH finds it first at
 * /usr/bin/echo or /bin/echo (another `echo` earlier in PATH is not what bash would run).
 */
const PLAIN = /^[A-Za-z0-9_./:@%+,-]+$/;
const NAME = /^[A-Za-z0-9_.+-]+$/;

// `compgen -b; compgen -k` of bash 5.2 (a newer bash adds none that a plain word could name otherwise).
const BASH_OWN = new Set(('. : [ alias bg bind break builtin caller cd command compgen complete compopt continue declare dirs disown enable eval exec exit export false fc fg getopts hash help history jobs kill let local logout mapfile popd printf pushd pwd read readarray readonly return set shift shopt source suspend test times trap true type typeset ulimit umask unalias unset wait '
  + 'if then else elif fi case esac for select while until do done in function time { } ! [[ ]] coproc').split(' '));

/** Names in the environment that change what bash does before or instead of the exec. */
const SHELL_START = /^(BASH_ENV|ENV|SHELLOPTS|BASHOPTS|POSIXLY_CORRECT|GLOBIGNORE|CDPATH|EXECIGNORE)$|^BASH_FUNC_/;
/** Variables bash rewrites when it inherits them (PWD checked against the cwd, SHLVL counted, OLDPWD dropped): bash sets them. */
const BASH_SETS = new Set(['PWD', 'OLDPWD', 'SHLVL', '_']);

/** The words of a plain command line (see above), or null. */
export function plainWords(command: string): string[] | null {
  const words = command.split(/[ \t]+/).filter((w) => w !== '');
  if (words.length === 0 || !words.every((w) => PLAIN.test(w))) return null;
  // Only spaces and tabs between them: a newline, `;` or anything else fails PLAIN or this.
  if (!/^[ \t]*[^ \t]+(?:[ \t]+[^ \t]+)*[ \t]*$/.test(command)) return null;
  const name = words[0]!;
  if (!NAME.test(name)) return null;
  if (name === 'echo') return words.slice(1).some((w) => w === '--help' || w === '--version') ? null : words;
  return BASH_OWN.has(name) ? null : words;
}

/** The first executable regular file named `name` in `pathValue`'s absolute entries, as bash's PATH search finds it. */
export function findInPath(name: string, pathValue: string): string | null {
  for (const dir of pathValue.split(':')) {
    if (!dir.startsWith('/')) continue;
    const file = dir.endsWith('/') ? `${dir}${name}` : `${dir}/${name}`;
    try {
      // throwIfNoEntry: a miss (most entries) costs no exception.
      if (statSync(file, { throwIfNoEntry: false })?.isFile()) { accessSync(file, constants.X_OK); return file; }
    } catch { /* unreadable, or not executable: bash goes on too */ }
  }
  return null;
}

/**
 * The argv and environment to exec `command` directly, or null to run it with bash. `env` is the
 * command's environment (buildEnv: PATH already cleaned of workspace folders); `cwd` the real
 * path of its working folder (bash's PWD is its getcwd()).
 */
export function directExec(command: string, env: Record<string, string>, cwd: string): { argv: string[]; argv0: string; env: Record<string, string> } | null {
  const words = plainWords(command);
  if (!words) return null;
  if (Object.keys(env).some((k) => SHELL_START.test(k) || BASH_SETS.has(k))) return null;
  const bin = findInPath(words[0]!, env.PATH ?? '');
  if (!bin) return null; // bash says "command not found" (127) in its own words
  if (words[0] === 'echo' && bin !== '/usr/bin/echo' && bin !== '/bin/echo') return null;
  // argv[0] is the name as typed, as bash passes it (busybox, venv pythons and scripts read it).
  return { argv: [bin, ...words.slice(1)], argv0: words[0]!, env: { ...env, PWD: cwd, SHLVL: '0', _: bin } };
}
