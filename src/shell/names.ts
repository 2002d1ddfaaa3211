import type { CommandWord } from '../core/types.js';
import type { SyntaxNode } from './parser.js';

/**
 * Names bash evaluates: a builtin given `b[SUB]` (test -v, printf -v, read, unset, declare…) or
 * an assignment `b[SUB]=…` evaluates SUB as arithmetic, and arithmetic evaluates the value of
 * every variable it names, recursively: `echo 'a[$(cmd)]'; test -v 'b[_]'` ran cmd through `$_`.
 * So a name that a builtin takes must be plain, with at most a literal integer subscript.
 */
/** Variables whose value bash runs as code later, or that change what a command name, a `cd`, a `~` (HOME: also git's ~/.gitconfig) or make's reading of makefiles means. */
export const CODE_VAR_NAMES = 'PS[0-4]|PROMPT_COMMAND|BASH_ENV|ENV|BASH_CMDS|BASH_ALIASES|BASH_FUNC_\\S*|BASH_LOADABLES_PATH|SHELLOPTS|BASHOPTS|PATH|CDPATH|MAKEFLAGS|MFLAGS|GNUMAKEFLAGS|MAKEFILES|HOME';

/**
 * Variables other programs read as a command or as code: git's pager, editor, external diff, ssh and
 * askpass programs, exec path, templates (hooks) and config from the environment (GIT_CONFIG_COUNT /
 * KEY_n / VALUE_n outrank every config file and replace toolgate's own git hardening), pagers and
 * editors, rsync's remote shell, the dynamic loader's preloads. Set however (`X=…`, read, export of a
 * name set earlier), they make an allowed `git diff` run what they hold.
 */
const ENV_CODE_NAMES = 'GIT_EXTERNAL_DIFF|GIT_PAGER|GIT_EDITOR|GIT_SEQUENCE_EDITOR|GIT_SSH|GIT_SSH_COMMAND|GIT_ASKPASS|SSH_ASKPASS|WGET_ASKPASS|WGETRC|GIT_EXEC_PATH|GIT_PROXY_COMMAND|GIT_TEMPLATE_DIR|GIT_ALLOW_PROTOCOL|GIT_CONFIG|GIT_CONFIG_(COUNT|KEY_[0-9]+|VALUE_[0-9]+|PARAMETERS|GLOBAL|SYSTEM)|PAGER|MANPAGER|EDITOR|VISUAL|XDG_CONFIG_HOME|HOME|LESSOPEN|LESSCLOSE|RSYNC_RSH|LD_PRELOAD|LD_AUDIT|RIPGREP_CONFIG_PATH|TAR_OPTIONS|PERL5OPT|PERL5LIB|PERLLIB|NODE_OPTIONS|NODE_PATH|RUBYOPT|RUBYLIB|PYTHONPATH|PYTHONSTARTUP|PYTHONHOME|GCONV_PATH|LD_LIBRARY_PATH|GREP_OPTIONS|ZIPOPT|UNZIP';
const ENV_CODE = new RegExp(`^(${ENV_CODE_NAMES})(\\[[^\\]]*\\])?(\\+?=|$)`);
/** A pager or editor that runs nothing else: `GIT_PAGER=cat git log`, `GIT_EDITOR=true git commit`. */
const SAFE_PAGER = /^(GIT_PAGER|PAGER|MANPAGER|GIT_EDITOR|GIT_SEQUENCE_EDITOR|EDITOR|VISUAL)=((cat|less|more|true|:)( -[A-Za-z]+)*)?$/;
/** The names that carry toolgate's git hardening: unsetting them drops it. */
export const HARDENING_VAR = /^GIT_CONFIG_(COUNT|KEY_|VALUE_|PARAMETERS)/;

/** Why setting (or exporting) one of `named` hands code to a program run later, or null. */
export function envCodeRisk(named: CommandWord[]): string | null {
  const w = named.find((x) => ENV_CODE.test(x.text) && !(x.literal && SAFE_PAGER.test(x.text)));
  if (!w) return null;
  const name = w.text.split(/[[+=]/)[0]!;
  return `${name} is run as a command, or read as settings, by programs run later (git, pagers, editors${/^GIT_CONFIG/.test(name) ? '; it also replaces the git hardening toolgate sets' : ''}): a prefix rule cannot allow it`;
}

const SAFE_NAME = /^[A-Za-z_][A-Za-z0-9_]*(\[(-?[0-9]+|@|\*)\])?$/;

export const safeName = (w: CommandWord | undefined): boolean => !w || (w.literal && SAFE_NAME.test(w.text));

/** The name part of `NAME=…` / `NAME[SUB]+=…` (up to the `=` after a balanced subscript), or null. */
export function assignedName(text: string): string | null {
  const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text);
  if (!m) return null;
  let i = m[0].length;
  if (text[i] === '[') {
    let depth = 0;
    for (; i < text.length; i++) {
      if (text[i] === '[') depth++;
      else if (text[i] === ']' && --depth === 0) break;
    }
    if (i >= text.length) return null;
    i++;
  }
  if (text.startsWith('+=', i) || text[i] === '=') return text.slice(0, i);
  return null;
}

/**
 * bash's own integer variables: any value assigned to them is evaluated as arithmetic
 * (`read RANDOM <<< 'a[$(cmd)]'` ran cmd). Only a literal integer may be stored in them.
 */
const INT_VAR_NAMES = 'RANDOM|SRANDOM|OPTIND|HISTCMD|BASHPID|LINENO|SECONDS|EPOCHSECONDS|EPOCHREALTIME';
export const INT_VAR = new RegExp(`^(${INT_VAR_NAMES})(\\[|$)`);

/**
 * Subscripts in a compound array value `(…[SUB]=v…)`: each must be a literal integer. A quoted
 * compound value given to declare (`declare -a 'a=($[_])'`) is expanded again when it runs: no
 * `$` or backtick in it.
 */
const compoundSafe = (value: string): boolean => {
  if (!value.startsWith('(')) return true;
  if (/[$`]/.test(value)) return false;
  for (const m of value.matchAll(/\[([^\]]*)\]\+?=/g)) if (!/^-?[0-9]+$/.test(m[1]!)) return false;
  return true;
};

/** An assignment word whose name (and compound value's subscripts) bash evaluates nothing in. */
export function safeAssignment(w: CommandWord): boolean {
  const name = assignedName(w.text);
  if (name === null) return false;
  const value = w.text.slice(name.length).replace(/^\+?=/, '');
  if (INT_VAR.test(name) && !(w.literal && /^[-+]?[0-9]+$/.test(value))) return false;
  return SAFE_NAME.test(name) && compoundSafe(value);
}

/** A name a builtin stores into: safe, and not one of bash's integer variables. */
const safeTarget = (w: CommandWord | undefined): boolean => safeName(w) && !(w && INT_VAR.test(w.text));

const OPTION = /^[-+][A-Za-z]/;

/**
 * The words of a cluster-option builtin that are variable names: those after an option letter in
 * `named` (read -a NAME, wait -p NAME, mapfile -O … no), and every operand when `operands`.
 */
function namesOf(words: CommandWord[], withValue: string, named: string, operands: 'all' | 'first' | 'none'): CommandWord[] {
  const out: CommandWord[] = [];
  let i = 1;
  for (; i < words.length; i++) {
    const w = words[i]!;
    if (w.text === '--') { i++; break; }
    if (!w.literal && w.text.startsWith('-')) { out.push(w); continue; }
    if (!OPTION.test(w.text)) break;
    for (let k = 1; k < w.text.length; k++) {
      const ch = w.text[k]!;
      if (!withValue.includes(ch)) continue;
      const attached = w.text.slice(k + 1);
      const value = attached ? { text: attached, literal: w.literal } : words[++i];
      if (named.includes(ch) && value) out.push(value);
      break;
    }
  }
  const rest = words.slice(i);
  return [...out, ...(operands === 'all' ? rest : operands === 'first' ? rest.slice(0, 1) : [])];
}

const DECLARERS = new Set(['export', 'declare', 'typeset', 'local', 'readonly']);

/**
 * Why a builtin's name arguments (or the line's assignments) could make bash evaluate code, or
 * null. `assigns` are the prefix assignments; `assignOnly` says the words are assignments too.
 */
export function nameRisk(prog: string, words: CommandWord[], assigns: CommandWord[], assignOnly: boolean): string | null {
  const badAssign = [...assigns, ...(assignOnly ? words : [])].find((w) => !safeAssignment(w));
  if (badAssign) return `the assignment ${badAssign.text.slice(0, 60)} has a subscript bash evaluates as arithmetic (it can run code held in a variable): use a literal integer subscript`;
  if (assignOnly) return null;
  let names: CommandWord[] = [];
  if (DECLARERS.has(prog)) {
    const opts = words.slice(1).filter((w) => w.literal && OPTION.test(w.text));
    if (opts.some((w) => /^[-+][A-Za-z]*i/.test(w.text))) return `${prog} -i makes later assignments arithmetic, which evaluates variable values (it can run code): not allowed`;
    for (const w of words.slice(1)) {
      if (w.literal && OPTION.test(w.text)) continue;
      if (assignedName(w.text) !== null ? !safeAssignment(w) : !safeName(w)) return `${prog} ${w.text.slice(0, 60)}: a name bash evaluates (a subscript, or a name known only when it runs) can run code; use plain names`;
    }
    return null;
  }
  switch (prog) {
    case 'unset': names = namesOf(words, '', '', 'all'); break;
    case 'read': names = namesOf(words, 'adinNptu', 'a', 'all'); break;
    case 'mapfile': case 'readarray': names = namesOf(words, 'dnOsuCc', '', 'first'); break;
    case 'wait':
      names = namesOf(words, 'p', 'p', 'none');
      // `wait -n $o 'b[_]'` with o=-p: a word known only when it runs, then another word.
      if (words.slice(1, -1).some((w) => !w.literal) || words.some((w) => !w.literal && (w.split || /[{[]/.test(w.text)))) return 'wait with an option known only when it runs (it may be -p NAME): write options literally, and quote a pid as "$pid"';
      break;
    case 'getopts':
      // A brace or glob word may put another name in the name's place (`getopts {a,OPTIND}`).
      if (words.slice(1).some((w) => w.split)) return 'getopts with a word bash may split into several words: write the option string and the name literally';
      // `getopts -- OPTSTRING NAME`: bash skips a first `--`, which a word known only when it runs may be too.
      names = words[1]?.text === '--' ? words.slice(3, 4) : words[1] && !words[1].literal ? words.slice(2, 4) : words.slice(2, 3);
      break;
    case 'printf': {
      const i = words.findIndex((w) => w.text.startsWith('-v'));
      if (i > 0) names = [words[i]!.text === '-v' ? words[i + 1]! : { ...words[i]!, text: words[i]!.text.slice(2) }];
      // The first word may expand to -v (`printf "$o" 'b[_]' x`, `printf {-v,b[_]} …`).
      const first = words[1];
      if (first && !first.literal && first.text !== '--') return 'printf with a first word known only when it runs (it may be -v NAME): write the format as literal text';
      break;
    }
    case 'test': case '[': {
      for (let i = 1; i < words.length; i++) if (words[i]!.text === '-v' || words[i]!.text === '-R') names.push(words[i + 1] ?? { text: '', literal: true });
      // A word known only when it runs may be -v (`test $o 'b[_]'`) or expand to several words
      // (`test {-v,'b[_]'}`): refused when a name could follow it.
      for (let i = 1; i < words.length; i++) {
        const w = words[i]!;
        if (w.literal) continue;
        // One word that bash may split (`$o`, `"$@"`) may hold both -v and the name.
        if (w.split) return `${prog} with ${w.text.slice(0, 40)}, which bash may split into several words (it may be -v NAME, whose subscript bash evaluates): quote it as "$x"`;
        const next = words[i + 1];
        if (/[{[]/.test(w.text) || (next && (!next.literal || next.text.includes('[')))) return `${prog} with ${w.text.slice(0, 40)} known only when it runs, before ${next ? next.text.slice(0, 40) : 'a brace list'}: it may be -v NAME, whose subscript bash evaluates (it can run code)`;
      }
      break;
    }
    case 'let':
      // Every argument is arithmetic: refused unless it names no variable but the one it sets.
      if (words.slice(1).every((w) => w.literal && /^([A-Za-z_][A-Za-z0-9_]*=)?[-+]?[0-9]+$/.test(w.text))) return null;
      return 'let evaluates arithmetic on variables, which can run code held in their values; use literal integers';
    default: return null;
  }
  const bad = names.find((w) => !safeTarget(w));
  return bad ? `${prog} ${bad.text.slice(0, 60)}: bash evaluates this name's subscript as arithmetic (or the name is known only when it runs), which can run code; use a plain name` : null;
}

/** Loop variables refused: code variables, the ones that change a cd, and bash's integer variables. */
export const LOOP_CODE_VAR = new RegExp(`^(${CODE_VAR_NAMES}|${ENV_CODE_NAMES}|OLDPWD|IFS|${INT_VAR_NAMES})$`);

/** `{NAME}>f` / `{a[_]}<f`: the word just before the redirection, glued to it, is a brace-enclosed name. */
export function namedDescriptor(redirect: SyntaxNode): boolean {
  let prev = redirect.previousSibling;
  if (!prev && redirect.parent?.type === 'redirected_statement') prev = redirect.parent.childForFieldName('body')?.lastChild ?? null;
  while (prev && prev.type === 'command' && prev.lastChild) prev = prev.lastChild;
  return !!prev && prev.endIndex === redirect.startIndex && /\{[^{}\s]*\}$/.test(prev.text);
}

