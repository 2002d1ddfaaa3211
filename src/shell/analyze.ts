import type { CommandWord } from '../core/types.js';
import { fileEffects, findStarts, runsCodeFromText, type FileRef } from './effects.js';
import { skipOptions } from './options.js';
import type { ShellParser } from './parser.js';
import { collectCommands, type RawCommand } from './walk.js';
import { plainCommand } from './plain.js';
import { CODE_VAR_NAMES, envCodeRisk, HARDENING_VAR, nameRisk } from './names.js';
import { LAUNCHERS, SAFE_SHELL_FLAGS, SHELLS, WRAPPERS, XARGS } from './wrappers.js';

/** One simple command to judge, after wrappers are unwrapped. */
export interface CommandPart {
  words: CommandWord[];
  text: string;
  /** Set when the analyser itself refuses the part (eval, parse error, unknown construct…). */
  deny_reason?: string;
  /** The words as written, when `words` hides them from allow rules (deny and ask rules still see them). */
  asWritten?: CommandWord[];
}

export interface Analysis {
  parts: CommandPart[];
  files: FileRef[];
  /** Literal `cd`/`pushd` targets: relative paths may be relative to any of them. */
  dirs: CommandWord[];
}

const NAME_EVAL = new Set(['test', '[', 'printf', 'read', 'let', 'declare', 'typeset', 'local', 'export', 'readonly', 'unset', 'mapfile', 'readarray', 'wait', 'getopts', 'shopt']);

/** Builtins that keep text to run as code later, or change what a command name runs. */
const LATER_CODE: Record<string, string> = {
  trap: 'trap keeps text to run as code later, which cannot be judged before it runs',
  fc: 'fc runs lines from the history as code, which cannot be judged before they run',
  history: 'history is not allowed (history -s puts text in the history, which fc runs)',
  alias: 'aliases are not allowed (an alias can make an allowed name run something else)',
  hash: 'hash is not allowed (hash -p makes a command name run another program)',
  enable: 'enable is not allowed (it turns builtins off or loads new ones from a library)',
  bind: 'bind is not allowed (bind -x runs text as code on a key)',
  complete: 'complete is not allowed (complete -C runs text as code)',
  compgen: 'compgen is not allowed (-C and -F run code, -W expands its text as the shell runs it)',
};
/** Variables whose value bash runs as code later: prompts, the trace prefix, files sourced at start. */
const CODE_VARS = new RegExp(`^(${CODE_VAR_NAMES})(\\[[^\\]]*\\])?(\\+?=|$)`);
const SHOPT_REFUSED = /^(autocd|cdable_vars|cdspell|dirspell|extdebug|allexport|keyword)$/;
/** `set -a`, `set -euao pipefail`, `set -o allexport` (options end at `--`, `-` or the first operand). */
function setsAllexport(words: CommandWord[]): boolean {
  if (words.some((w) => w.text === 'allexport')) return true;
  for (const w of words.slice(1)) {
    if (w.text === '--' || w.text === '-' || !/^[-+]/.test(w.text)) return false;
    if (/^-[A-Za-z]*a/.test(w.text)) return true;
  }
  return false;
}
/** Builtins that store a value into a variable named by an argument. */
const NAME_SETTERS = new Set(['read', 'mapfile', 'readarray', 'getopts']);
/** The variable `printf -v NAME` (or -vNAME) stores into, as a word. */
const printfTarget = (words: CommandWord[]): CommandWord[] => {
  const i = words.findIndex((w) => w.text.startsWith('-v'));
  if (i < 0) return [];
  const w = words[i]!.text === '-v' ? words[i + 1] : { ...words[i]!, text: words[i]!.text.slice(2) };
  return w ? [w] : [];
};
export const isAssignment = (w: CommandWord) => /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/.test(w.text);
/** Builtins whose arguments may assign variables. */
const DECLARERS = new Set(['export', 'declare', 'typeset', 'local', 'readonly']);

/** Nested `bash -c '…'` deeper than this is refused rather than followed. */
const MAX_DEPTH = 8;

export const basename = (p: string) => p.slice(p.lastIndexOf('/') + 1);
const wordsText = (ws: CommandWord[]) => ws.map((w) => w.text).join(' ');
const unknown = (text: string): CommandWord => ({ text, literal: false });

/**
 * Parses a command line with the bash grammar and returns every simple command in it,
 * unwrapped, plus the files that redirections and well-known commands touch.
 */
export function analyzeCommand(parser: ShellParser, text: string, depth = 0): Analysis {
  const out: Analysis = { parts: [], files: [], dirs: [] };
  if (depth > MAX_DEPTH) {
    out.parts.push({ words: [unknown(text)], text, deny_reason: `shell code nested more than ${MAX_DEPTH} levels deep` });
    return out;
  }
  if (text.includes('\0')) {
    out.parts.push({ words: [unknown(text)], text, deny_reason: 'the command holds a NUL byte' });
    return out;
  }
  try {
    // What the tree says is copied out (plain words) before it is freed; nested scripts parse their own.
    const raws = plainCommand(text) ?? parser.parse(text, collectCommands);
    for (const raw of raws) judgeRaw(parser, raw, depth, out);
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    // A stack overflow on a pathological line: refuse it rather than fail the call.
    return { parts: [{ words: [unknown(text.slice(0, 200))], text: text.slice(0, 200), deny_reason: 'the command is too deeply nested to analyse' }], files: [], dirs: [] };
  }
  return out;
}

function judgeRaw(parser: ShellParser, raw: RawCommand, depth: number, out: Analysis): void {
  for (const r of raw.redirects) {
    const access = r.op === '<' ? 'read' : r.op === '<<' || r.op === '<<<' || r.op === '<<-' ? null : 'write';
    if (access) out.files.push({ word: r.target, access, via: r.op });
  }
  for (const w of raw.looked ?? []) out.files.push({ word: w, access: 'list', via: 'test' });
  if (raw.deny_reason || raw.marker) {
    out.parts.push({ words: [...raw.assigns, ...raw.words], text: raw.text, ...(raw.deny_reason ? { deny_reason: raw.deny_reason } : {}) });
    return;
  }
  judgeWords(parser, raw.assigns, raw.words, depth, out);
}

function judgeWords(parser: ShellParser, assigns: CommandWord[], words: CommandWord[], depth: number, out: Analysis): void {
  const push = (ws: CommandWord[], deny_reason?: string) => {
    const all = [...assigns, ...ws];
    if (all.length === 0) return;
    out.parts.push({ words: all, text: wordsText(all), ...(deny_reason ? { deny_reason } : {}) });
  };
  // Code no prefix rule can allow: not a deny (a person may approve it); deny rules still see the words as written.
  const pushCode = (why: string) => {
    push([unknown(wordsText(words))]);
    out.parts[out.parts.length - 1]!.asWritten = [...assigns, ...words];
    out.parts[out.parts.length - 1]!.text = `${wordsText([...assigns, ...words])}  (${why})`;
  };
  // A variable that holds code bash runs later (a prompt, a trace prefix, a file sourced at start)
  // or changes what a name runs (bash's command and alias tables, PATH, exported functions) —
  // however it is set: `NAME=`, `NAME[k]=`, export/declare, or a builtin that stores into a name
  // (printf -v, read, mapfile, getopts). (A line of assignments alone, `x=$(date)`, comes as words.)
  const assignOnly = words.length > 0 && words.every(isAssignment);
  const first = words[0]?.literal ? basename(words[0].text) : '';
  const named = [...assigns, ...(assignOnly || DECLARERS.has(first) || NAME_SETTERS.has(first) ? words : []), ...(first === 'printf' ? printfTarget(words) : [])];
  // HOME before a program (`HOME=/tmp/h npm ci`) moves only that program's config files: asked below, not refused.
  const codeVar = named.find((w) => CODE_VARS.test(w.text) && !(assigns.includes(w) && /^HOME=/.test(w.text))) ?? [...assigns, ...words].find((w) => w.text.startsWith('BASH_FUNC_'));
  const varName = codeVar?.text.split(/[[+=]/)[0];
  if (codeVar) { push(words, `${varName} ${varName === 'HOME' ? 'changes what ~ names (and where programs read their settings)' : 'holds code bash runs later, or changes what a command name runs'}: it cannot be judged before it runs`); return; }
  if (DECLARERS.has(first) && words.some((w) => /^-[A-Za-z]*n/.test(w.text))) { push(words, 'a name reference (-n) makes another variable be set under its name: not allowed'); return; }
  // git's pager, external diff, config…: set, read into or exported, they run later in an allowed
  // `git diff` (the rest of the part is still judged: its files, and what it runs).
  const envCode = envCodeRisk([...named, ...(first === 'let' ? words : []), ...(first === 'unset' ? words.filter((w) => HARDENING_VAR.test(w.text)) : [])]);
  if (envCode) pushCode(envCode);
  const risk = nameRisk(first, words, assigns, assignOnly);
  if (risk) { push(words, risk); return; }
  const name = words[0];
  if (!name) { push([]); return; }
  // `$c $f` (c=cat, or read from input): the program is known only when it runs. Judged as text it
  // passed deny rules on programs and paths (c=cat; f=priv/x; $c $f read a denied file).
  if (!name.literal && !assignOnly) { push(words, `the program is known only when it runs (${name.text.slice(0, 60)}): write its name, so that the policy can judge it`); return; }
  const prog = basename(name.text);

  if (prog === 'eval' || prog === 'source' || prog === '.') {
    push(words, `${prog} runs text as code, which cannot be judged before it runs`);
    return;
  }
  const later = LATER_CODE[prog];
  if (later) { push(words, later); return; }
  if ((prog === 'mapfile' || prog === 'readarray') && words.some((w) => !w.literal || /^-[A-Za-z]*C/.test(w.text))) {
    push(words, `${prog} -C runs its callback as code, which cannot be judged before it runs`);
    return;
  }
  if (prog === 'jobs' && words.some((w) => !w.literal || /^-[A-Za-z]*x/.test(w.text))) { push(words, 'jobs -x runs a command: run it directly'); return; }
  if (prog === 'shopt' && words.some((w) => !w.literal || SHOPT_REFUSED.test(w.text))) { push(words, 'shopt autocd, cdable_vars, cdspell, dirspell, extdebug, -o allexport and -o keyword change what a command name, a cd, a trap or an assignment means: not allowed'); return; }
  // set -k: `NAME=value` anywhere in a later command is an assignment (`ls PATH=/x`).
  if (prog === 'set' && words.some((w) => !w.literal || /^-[A-Za-z]*k/.test(w.text) || w.text === 'keyword')) { push(words, 'set -k (keyword) makes NAME=value words anywhere in a command assignments: not allowed'); return; }
  // set -a: every variable set later is exported (`read GIT_EXTERNAL_DIFF` then reaches git).
  if (prog === 'set' && setsAllexport(words)) { push(words, 'set -a (allexport) exports every variable set later, handing values read from input to the programs run: not allowed'); return; }
  if (LAUNCHERS.has(prog)) {
    push(words, `${prog} runs the program named in its arguments, which toolgate does not unwrap: run that program directly (or without ${prog})`);
    return;
  }
  if (prog === 'builtin') {
    push(words, 'builtin is not allowed: it is only needed to reach a builtin past a function, and functions are refused');
    return;
  }
  if (prog === 'cd' || prog === 'pushd' || prog === 'popd') {
    let k = 1;
    while (k < words.length - 1 && words[k]!.literal && /^-[LP@e]+$/.test(words[k]!.text)) k++;
    if (words[k]?.text === '--') k++;
    const dir = words[k];
    // popd, pushd (swaps), pushd +N, `cd -` (OLDPWD): a folder bash remembered, not one written here.
    if (prog === 'popd' || (prog === 'pushd' && !dir) || (dir && (dir.text === '-' || /^[-+]/.test(dir.text)))) out.dirs.push(unknown(wordsText(words)));
    else {
      out.dirs.push(dir ?? { text: '~', literal: false });
      // Entering a folder is listing it: the path rules judge it (`cd priv && cat x`).
      if (dir) out.files.push({ word: dir, access: 'list', via: prog });
    }
  }
  if (SHELLS.has(prog)) { judgeShell(parser, assigns, words, depth, out); return; }
  if (prog === 'busybox' && words.length > 1) { judgeWords(parser, assigns, words.slice(1), depth, out); return; }
  // Words a wrapper takes for itself that name a folder or a file: `env -C dir`, `xargs -a file`.
  if (prog === 'env') for (const d of optionValues(words, 'uCS', 'C', '--chdir', ENV_LONG)) { out.dirs.push(d); out.files.push({ word: d, access: 'list', via: 'env -C' }); }
  if (prog === 'xargs') for (const f of optionValues(words, 'adEILnPs', 'a', '--arg-file', XARGS_LONG)) out.files.push({ word: f, access: 'read', via: 'xargs -a' });
  const wrapper = WRAPPERS[prog];
  if (wrapper) {
    const r = skipOptions(prog, words, wrapper);
    if (!r.ok) { push(words, r.reason); return; }
    // env -u GIT_CONFIG_COUNT: the git hardening toolgate sets in the environment is dropped.
    if (prog === 'env' && optionValues(words, 'uCS', 'u', '--unset', ENV_LONG).some((w) => HARDENING_VAR.test(w.text))) pushCode('env -u GIT_CONFIG_… drops the git hardening toolgate sets in the environment');
    if (r.rest.length === 0 || r.seen.some((o) => wrapper.lookupOnly?.includes(o))) { push(words); return; }
    judgeWords(parser, [...assigns, ...r.assigns], r.rest, depth, out);
    return;
  }
  if (prog === 'xargs') {
    const r = skipOptions(prog, words, XARGS);
    if (!r.ok) { push(words, r.reason); return; }
    const replace = r.seen.includes('-I') || r.seen.includes('-i') || r.seen.includes('--replace');
    const inner = r.rest.length ? r.rest : [{ text: 'echo', literal: true }];
    // Input words are appended (or substituted) at run time: they are unknown here.
    const marked = replace ? inner.map((w, i) => (i > 0 && /\{\}|\{|\}/.test(w.text) ? unknown(w.text) : w)) : inner;
    judgeWords(parser, assigns, [...marked, unknown('{xargs input}')], depth, out);
    return;
  }
  if (prog === 'find') {
    const own: CommandWord[] = [];
    for (let i = 0; i < words.length; i++) {
      const t = words[i]!.text;
      if (/^-(exec|execdir|ok|okdir)$/.test(t)) {
        let j = i + 1;
        while (j < words.length && words[j]!.text !== ';' && words[j]!.text !== '+') j++;
        const seg = words.slice(i + 1, j).map((w) => (w.text.includes('{}') ? unknown(w.text) : w));
        if (seg.length === 0) { push(words, 'find -exec without a command'); return; }
        own.push(words[i]!);
        judgeWords(parser, assigns, seg, depth, out);
        i = j;
        continue;
      }
      own.push(words[i]!);
    }
    push(own);
    out.files.push(...fileEffects(prog, words));
    void findStarts;
    return;
  }
  // These builtins evaluate a name's array subscript, where `$(…)` runs even from quoted text.
  const nameTest = (prog === 'test' || prog === '[') && words.some((w) => w.text === '-v' || w.text === '-R') && words.some((w) => !w.literal);
  if (NAME_EVAL.has(prog) && (nameTest || words.slice(1).some((w) => /\$\(|`/.test(w.text)))) {
    push([unknown(wordsText(words))]);
    out.parts[out.parts.length - 1]!.asWritten = [...assigns, ...words];
    out.parts[out.parts.length - 1]!.text = `${wordsText([...assigns, ...words])}  (${prog} may evaluate quoted code in a subscript)`;
    return;
  }
  // (MAKEFLAGS and MAKEFILES are refused as code variables above.)
  const code = runsCodeFromText(prog, words, out.dirs) ?? ((prog === 'make' || prog === 'gmake') && assigns.some((w) => /^(SHELL|MAKESHELL)=/.test(w.text)) ? 'make reads SHELL from the environment' : null);
  if (code) {
    pushCode(code);
    // A person may approve it: the files it names are still judged by the path rules.
    out.files.push(...fileEffects(prog, words));
    return;
  }
  push(words);
  out.files.push(...fileEffects(prog, words));
}

/**
 * The values of one option of a getopt-style program (`-Cdir`, `-C dir`, `-iC dir`, `--chdir=dir`,
 * `--chdir dir`), up to its first operand. `withValue`: the short options that take a value.
 */
const ENV_LONG = ['--unset', '--chdir', '--split-string'];
const XARGS_LONG = ['--arg-file', '--delimiter', '--max-args', '--max-procs', '--max-chars', '--process-slot-var', '--max-lines'];

function optionValues(words: CommandWord[], withValue: string, short: string, long: string, takesValue: string[]): CommandWord[] {
  const out: CommandWord[] = [];
  for (let i = 1; i < words.length; i++) {
    const t = words[i]!.text;
    if (t === '--' || !t.startsWith('-') || t === '-') break;
    if (t.startsWith('--')) {
      const [name, value] = t.includes('=') ? [t.slice(0, t.indexOf('=')), t.slice(t.indexOf('=') + 1)] : [t, null];
      // getopt_long takes any unambiguous prefix; the value of an option that takes one may be the next word.
      const full = takesValue.find((o) => name.length > 2 && o.startsWith(name));
      const v = full && value === null ? words[++i] : value !== null ? { ...words[i]!, text: value } : undefined;
      if (full === long && v) out.push(v);
      continue;
    }
    for (let k = 1; k < t.length; k++) {
      if (!withValue.includes(t[k]!)) continue;
      const rest = t.slice(k + 1);
      const v = rest ? { ...words[i]!, text: rest } : words[++i];
      if (t[k] === short && v) out.push(v);
      break;
    }
  }
  return out;
}

/** `bash -c '…'`: the string is parsed and judged like the outer command; scripts and stdin are judged as written. */
function judgeShell(parser: ShellParser, assigns: CommandWord[], words: CommandWord[], depth: number, out: Analysis): void {
  // `HOME=/ bash -c 'cat ~/…'`: its code's `~` would be judged as the HOME toolgate knows.
  if (assigns.some((w) => /^HOME=/.test(w.text))) { out.parts.push({ words: [...assigns, ...words], text: wordsText([...assigns, ...words]), deny_reason: 'HOME set for a shell changes what ~ names in its code: not allowed' }); return; }
  let i = 1;
  let hasC = false;
  let unsafe = false;
  while (i < words.length) {
    const w = words[i]!;
    if (!w.literal && w.text.startsWith('-')) { unsafe = true; i++; continue; }
    const t = w.text;
    if (t === '--' || t === '-') { i++; break; }
    if (/^[-+]o$/.test(t)) { if (t === '+o') unsafe = true; i += 2; continue; }
    if (t.startsWith('--')) { if (!SAFE_SHELL_FLAGS.has(t)) unsafe = true; i++; continue; }
    if (/^[-+][A-Za-z]+$/.test(t)) {
      if (t.startsWith('+')) unsafe = true;
      for (const ch of t.slice(1)) {
        if (ch === 'c') hasC = true;
        else if (!SAFE_SHELL_FLAGS.has(`-${ch}`)) unsafe = true;
      }
      i++;
      continue;
    }
    break;
  }
  const push = (ws: CommandWord[], deny_reason?: string) => {
    const all = [...assigns, ...ws];
    out.parts.push({ words: all, text: wordsText(all), ...(deny_reason ? { deny_reason } : {}) });
  };
  if (!hasC) {
    // A script file or stdin: what it runs is not in the text; judged as written.
    push(words);
    return;
  }
  const script = words[i];
  if (!script) { push(words, `${words[0]!.text} -c without a command`); return; }
  if (!script.literal) { push(words, `${words[0]!.text} -c with code that is only known when it runs`); return; }
  // The code is judged with bash's grammar: only for shells that read it as bash does.
  const foreign = foreignCode(basename(words[0]!.text), script.text);
  if (foreign) { push(words, foreign); return; }
  if (unsafe) push(words);
  const inner = analyzeCommand(parser, script.text, depth + 1);
  for (const p of inner.parts) {
    const all = [...assigns, ...p.words];
    out.parts.push({ words: all, text: assigns.length ? `${wordsText(assigns)} ${p.text}` : p.text, ...(p.deny_reason ? { deny_reason: p.deny_reason } : {}), ...(p.asWritten ? { asWritten: [...assigns, ...p.asWritten] } : {}) });
  }
  out.files.push(...inner.files);
  out.dirs.push(...inner.dirs);
}

/** Shells whose syntax is not bash's at all: their code cannot be judged with bash's grammar. */
export const OTHER_SYNTAX = new Set(['zsh', 'fish', 'tcsh', 'csh', 'ksh', 'mksh']);

/**
 * Why `code` for shell `prog` cannot be judged with bash's grammar, or null. zsh, fish, csh and
 * the Korn shells have expansions of their own (zsh's =(…) and glob qualifiers run commands);
 * POSIX shells (dash, ash, sh) read $'…' as "$" and a quoted string, so `echo $'\\' ; touch X ; # \\''`
 * is one echo to bash and `touch X` to dash.
 */
export function foreignCode(prog: string, code: string): string | null {
  if (OTHER_SYNTAX.has(prog)) return `${prog} code is not bash: toolgate judges bash syntax only; run it with bash`;
  if (prog !== 'bash' && prog !== 'rbash' && code.includes("$'")) return `$'…' means something else to ${prog} than to bash: use '…' or "…" quotes, or run it with bash`;
  return null;
}
