/**
 * A plain command line: one program with plain arguments, words no shell treats specially. Two
 * fast paths read it without bash or its grammar: the direct exec (src/exec/direct.ts, which says
 * what qualifies and why) and the command analysis (analyze.ts: the same words tree-sitter finds).
 */
import type { RawCommand } from './walk.js';

const PLAIN = /^[A-Za-z0-9_./:@%+,-]+$/;
const NAME = /^[A-Za-z0-9_.+-]+$/;

// `compgen -b; compgen -k` of bash 5.2 (a newer bash adds none that a plain word could name otherwise).
const BASH_OWN = new Set(('. : [ alias bg bind break builtin caller cd command compgen complete compopt continue declare dirs disown enable eval exec exit export false fc fg getopts hash help history jobs kill let local logout mapfile popd printf pushd pwd read readarray readonly return set shift shopt source suspend test times trap true type typeset ulimit umask unalias unset wait '
  + 'if then else elif fi case esac for select while until do done in function time { } ! [[ ]] coproc').split(' '));

/** The words of a plain command line (see above), or null. */
export function plainWords(command: string): string[] | null {
  const words = command.split(/[ \t]+/).filter((w) => w !== '');
  if (words.length === 0 || !words.every((w) => PLAIN.test(w))) return null;
  // Only spaces and tabs between them: a newline, `;` or anything else fails PLAIN or this.
  if (!/^[ \t]*[^ \t]+(?:[ \t]+[^ \t]+)*[ \t]*$/.test(command)) return null;
  const name = words[0]!;
  // `bash -c -x` reads a LINE that starts with - or + as options (an error): it runs no program.
  // After blanks bash runs it as a program, but the grammar misreads some such lines (` - a@b`:
  // an error and a second command): left to both (review 27).
  if (!NAME.test(name) || name.startsWith('-') || name.startsWith('+')) return null;
  if (name === 'echo') return words.slice(1).some((w) => w === '--help' || w === '--version') ? null : words;
  return BASH_OWN.has(name) ? null : words;
}

/**
 * A plain line (plainWords: one program, words of characters no shell treats specially, spaces
 * and tabs between them) read without the grammar: the one simple command tree-sitter finds in
 * it, the same object collectCommands makes (a test compares them over a generated corpus).
 * Most lines an agent runs (`git status`, `npm test`) are plain; the grammar's parse and walk
 * cost ~20 µs of a warm call and several times that in a server between calls.
 */
export function plainCommand(text: string): RawCommand[] | null {
  const words = plainWords(text);
  if (!words) return null;
  return [{ assigns: [], words: words.map((w) => ({ text: w, literal: true })), redirects: [], text: text.replace(/^[ \t]+|[ \t]+$/g, '') }];
}
