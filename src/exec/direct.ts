import { accessSync, closeSync, constants, openSync, readSync, statSync } from 'node:fs';
import os from 'node:os';
import { plainWords } from '../shell/plain.js';

export { plainWords };

/**
 * A command line that is one program with plain arguments, run without bash (sandbox `none`).
 *
 * `bash -c 'git status'` parses the line, finds `git` in PATH and execs it in its own place (no
 * fork: the program is the process bash was, leader of the same group). For a line that bash
 * would split into these same words with nothing to expand, toolgate does that exec itself and
 * saves bash's start (~0.3 ms of ~1.8 on this machine). The line qualifies only when:
 * - every word is made of characters no shell treats specially (plainWords, src/shell/plain.ts:
 *   no quote, backslash, `$`, backtick, glob, brace, tilde, `#`, `=`, operator or newline), so
 *   its words are exactly its space-separated pieces;
 * - the program's name does not start with `-` or `+` (at the line's start bash reads it as its own
 *   options and runs nothing; after blanks the grammar misreads some such lines);
 * - the program is named without a slash and is not a bash keyword or builtin (those run inside
 *   bash), except `echo` (below), and the first executable non-folder of that name in PATH is a
 *   regular file the kernel execs as it is (kernelExecs: an ELF of this machine, or a `#!` script
 *   whose interpreter is one). bash runs a text file the kernel refuses as a bash script, and
 *   refuses a binary one (126); Node's spawn would hand either to /bin/sh;
 * - the environment holds nothing that changes how bash starts (BASH_ENV, exported functions,
 *   SHELLOPTS, …; SHELL_START) or that bash resets, drops or warns about before it execs
 *   (IFS, PPID, OPTIND, BASH*, PS4, …; BASH_RESETS; LC_ALL naming a locale that may not exist).
 * bash exports PWD (the real cwd), SHLVL=0 and `_` (the program's path) to a program it execs in
 * its own place, when none of them came in its environment: so does this; with any of them (or
 * OLDPWD) in the environment, bash runs the line.
 *
 * `echo` with arguments that are not `--help` or `--version`, and without POSIXLY_CORRECT, prints
 * the same from the builtin and from coreutils' program (neither reads backslashes without -e,
 * both take -n, -e and -E): `echo …` runs coreutils' program when PATH finds it first at
 * /usr/bin/echo or /bin/echo (another `echo` earlier in PATH is not what bash would run).
 */

/** Names in the environment that change what bash does before or instead of the exec. */
const SHELL_START = /^(BASH_ENV|ENV|SHELLOPTS|BASHOPTS|POSIXLY_CORRECT|GLOBIGNORE|CDPATH|EXECIGNORE)$|^BASH_FUNC_/;
/**
 * Names bash sets at start whatever came in (exported with its own value), drops from what it
 * exports, or warns about (BASH_XTRACEFD, BASH_COMPAT): every BASH* name and bash 5.2's others
 * (each checked: `env NAME=zz bash -c env`).
 */
const BASH_RESETS = /^BASH|^(IFS|PPID|OPTIND|OPTERR|PS1|PS2|PS4|RANDOM|SRANDOM|LINENO|HISTCMD|EPOCHSECONDS|EPOCHREALTIME|COMP_WORDBREAKS)$/;
/** Variables bash rewrites when it inherits them (PWD checked against the cwd, SHLVL counted, OLDPWD dropped): bash sets them. */
const BASH_SETS = new Set(['PWD', 'OLDPWD', 'SHLVL', '_']);

/**
 * The first executable regular file named `name` in `pathValue`'s absolute entries, as bash's PATH
 * search finds it; null when there is none, or when bash's search stops at an executable that is
 * not a regular file (a FIFO, a device: bash tries it and fails, it does not go on).
 */
export function findInPath(name: string, pathValue: string): string | null {
  for (const dir of pathValue.split(':')) {
    if (!dir.startsWith('/')) continue;
    const file = dir.endsWith('/') ? `${dir}${name}` : `${dir}/${name}`;
    try {
      // throwIfNoEntry: a miss (most entries) costs no exception.
      const st = statSync(file, { throwIfNoEntry: false });
      if (!st || st.isDirectory()) continue;
      accessSync(file, constants.X_OK);
      return st.isFile() ? file : null;
    } catch { /* unreadable, or not executable: bash goes on too */ }
  }
  return null;
}

/** ELF machine numbers (e_machine) of the architectures Node runs on, for `process.arch`. */
const ELF_MACHINE: Record<string, number> = { x64: 62, ia32: 3, arm64: 183, arm: 40, riscv64: 243, ppc64: 21, s390x: 22, loong64: 258 };

function head(file: string, n: number): Buffer | null {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const buf = Buffer.alloc(n);
    return buf.subarray(0, readSync(fd, buf, 0, n, 0));
  } catch {
    return null;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** An ELF for this machine (its class and machine match), from its first bytes: the kernel execs it without falling back to a shell. */
function nativeElf(b: Buffer | null): boolean {
  if (!b || b.length < 20 || b.readUInt32BE(0) !== 0x7f454c46) return false;
  const cls = process.arch === 'ia32' || process.arch === 'arm' ? 1 : 2;
  const little = b[5] === 1;
  const machine = little ? b.readUInt16LE(18) : b.readUInt16BE(18);
  return b[4] === cls && (b[5] === 1 || b[5] === 2) && (little === (os.endianness() === 'LE')) && machine === ELF_MACHINE[process.arch];
}

/**
 * Whether execve runs `file` as it is: a native ELF, or a `#!` script (line within the kernel's
 * 256 bytes) whose interpreter is an absolute path to an executable native ELF. Anything else
 * the kernel refuses (ENOEXEC, a bad interpreter) is for bash to explain or run itself.
 */
export function kernelExecs(file: string): boolean {
  const b = head(file, 256);
  if (!b) return false;
  if (b.length >= 4 && b.readUInt32BE(0) === 0x7f454c46) return nativeElf(b);
  if (b[0] !== 0x23 || b[1] !== 0x21) return false; // #!
  const nl = b.indexOf(0x0a);
  if (nl < 0) return false;
  const interp = /^[ \t]*([^ \t\n]+)/.exec(b.subarray(2, nl).toString('latin1'))?.[1];
  if (!interp || !interp.startsWith('/')) return false;
  try {
    if (!statSync(interp).isFile()) return false;
    accessSync(interp, constants.X_OK);
  } catch {
    return false;
  }
  return nativeElf(head(interp, 20));
}

/**
 * The argv and environment to exec `command` directly, or null to run it with bash. `env` is the
 * command's environment (buildEnv: PATH already cleaned of workspace folders); `cwd` the real
 * path of its working folder (bash's PWD is its getcwd()).
 */
export function directExec(command: string, env: Record<string, string>, cwd: string): { argv: string[]; argv0: string; env: Record<string, string> } | null {
  const words = plainWords(command);
  if (!words) return null;
  if (Object.keys(env).some((k) => SHELL_START.test(k) || BASH_SETS.has(k) || BASH_RESETS.test(k))) return null;
  // bash warns on stderr when LC_ALL names a locale this system lacks; C and POSIX always exist.
  if (env.LC_ALL !== undefined && !['', 'C', 'POSIX'].includes(env.LC_ALL)) return null;
  const bin = findInPath(words[0]!, env.PATH ?? '');
  if (!bin) return null; // bash says "command not found" (127) in its own words
  if (!kernelExecs(bin)) return null;
  if (words[0] === 'echo' && bin !== '/usr/bin/echo' && bin !== '/bin/echo') return null;
  // argv[0] is the name as typed, as bash passes it (busybox, venv pythons and scripts read it).
  return { argv: [bin, ...words.slice(1)], argv0: words[0]!, env: { ...env, PWD: cwd, SHLVL: '0', _: bin } };
}
