import { realpathSync } from 'node:fs';
import path from 'node:path';
import type { CommandWord, PlanTarget } from '../core/types.js';
import type { Analysis } from './analyze.js';
import { nameOperands } from './name-operands.js';
import { climbingLink, curlUploadGlob, fileUrlGlob, operandWords, pathsFromFile, pathTexts, responseFile } from './operands.js';
import { relInRoots } from './path-verdict.js';
import { globOptions, secretPaths } from './secret-words.js';
import { askPart, denyPart, literalPath, PROC_SECRET, ruleTarget } from './target-parts.js';
import type { TargetOptions } from './targets.js';

/**
 * Builtins (and a few programs) that open no file named by their words: a word known only when it
 * runs is no path to them, and a literal one is judged by the path rules only (`echo .env` is no read).
 */
const NO_FILES = new Set(['echo', 'printf', 'read', 'true', 'false', ':', 'export', 'declare', 'typeset', 'local', 'readonly', 'unset',
  'shift', 'return', 'exit', 'break', 'continue', 'let', 'getopts', 'wait', 'kill', 'mapfile', 'readarray', 'sleep', 'basename', 'dirname', 'seq']);
/** `test` operators that look at a file, and those that compare strings or numbers. */
const FILE_TEST = /^-([abcdefghkprsuwxGLNOS]|nt|ot|ef)$/;
const VALUE_OP = /^(-[nz]|=|==|!=|<|>|!|-(eq|ne|lt|le|gt|ge))$/;

/** `test`/`[` opens nothing when no file operator appears and every word known only when it runs is a compared value. */
function quietTest(words: CommandWord[], bracket: boolean): boolean {
  const args = bracket && words[words.length - 1]?.text === ']' ? words.slice(0, -1) : words;
  if (args.some((w) => w.literal && FILE_TEST.test(w.text))) return false;
  if (args.length <= 1) return true;
  const op = (w: CommandWord | undefined) => !!w && w.literal && VALUE_OP.test(w.text);
  return args.every((w, i) => w.literal || op(args[i - 1]) || op(args[i + 1]));
}

/**
 * Whether the program opens no file its words name (see NO_FILES). Only a bare name: a path
 * (`./echo`, `/tmp/x/sleep`) runs whatever file is there, a copy of `rev` as well.
 */
function opensNothing(prog: CommandWord | undefined, words: CommandWord[]): boolean {
  if (!prog?.literal || prog.text.includes('/')) return false;
  const name = prog.text;
  if (name === 'test' || name === '[') return quietTest(words, name === '[');
  return NO_FILES.has(name);
}

/** A word whose only expansion is a glob (`src/*.ts`): the glob check judges the folder it lists. */
const globOnly = (w: CommandWord) => !/[$`{}~]/.test(w.text) && /[*?[]/.test(w.text);

const UNKNOWN_WHY = 'a word known only when it runs (a variable, `$(…)`, a brace list, input to xargs) may name any path, and no OS sandbox hides what your path rules deny; write the path itself, or run under bubblewrap';
const AFTER_CD_WHY = 'a path after a cd to a folder known only when it runs (cd -, popd, a variable), and no OS sandbox hides what your path rules deny';

/**
 * The words every program is given, judged without a sandbox. Always: a literal operand on the
 * secrets list (paths.deny) is refused, as a known reader's would be (`rev .env` as `cat .env`).
 * With path rules for commands (strict): every literal operand (and what an option glues to itself,
 * see pathTexts) is judged by the rules, on its text and through links when it exists; a word known
 * only when it runs is refused unless the program opens no file (`f=priv/x; rev "$f"`, `xargs rev`);
 * and paths read from a list, globbing file: URLs or `curl -T`, and climbing symlinks are refused.
 */
export function operandTargets(a: Analysis, o: TargetOptions, dirs: readonly (string | null)[], seen: Set<string>): PlanTarget[] {
  const out: PlanTarget[] = [];
  const strict = !!(o.strictReads && o.pathRule);
  const optionsFromEnv = a.parts.some((p) => [...p.words, ...(p.asWritten ?? [])].some((w) => /(^|[^A-Za-z0-9_])(RIPGREP_CONFIG_PATH|GREP_OPTIONS)(\+?=|$)/.test(w.text)));
  const globs = globOptions(a);
  for (const p of a.parts) {
    const { prog, words } = operandWords(p);
    const label0 = prog?.text ?? '';
    const quiet = opensNothing(prog, words);
    if (strict) {
      const fromFile = pathsFromFile(prog, words);
      if (fromFile) out.push(denyPart(`${label0} ${fromFile.text}`, 'the paths it works on are read from a file or its input, known only when it runs, and no OS sandbox hides what your path rules deny'));
      const glob = words.find((w) => fileUrlGlob(w.text)) ?? curlUploadGlob(prog, words);
      if (glob) out.push(denyPart(`${label0} ${glob.text}`, 'curl\'s globbing ({a,b}, [1-2]) of a file: URL or an upload names paths no word shows, and no OS sandbox hides what your path rules deny'));
      const climb = climbingLink(prog, words);
      if (climb) out.push(denyPart(`ln -s ${climb.text}`, 'a symbolic link whose relative target climbs (..): moved later, it points anywhere, and no OS sandbox hides what your path rules deny; give an absolute target'));
      const unknown = prog?.literal && !quiet && !p.deny_reason ? words.find((w) => !w.literal && literalPath(w, o.home) === null && !globOnly(w)) : undefined;
      if (unknown) out.push(denyPart(`${label0} ${unknown.text}`, UNKNOWN_WHY));
    } else if (quiet) continue;
    else {
      // Without path rules a response file (`strings @list`, `gcc @args`) asks: the paths it holds are named by no word.
      const rf = responseFile(prog, words);
      if (rf) out.push(askPart(`${label0} ${rf.text} (reads its arguments from a file, which may name a secret, and no OS sandbox hides the secrets)`));
    }
    // Names and patterns, never opened (`grep .env .gitignore`, `find -name .env`, `git status .env`) —
    // unless the line hands rg or grep options from elsewhere (RIPGREP_CONFIG_PATH may hold `-e`).
    const names = optionsFromEnv ? new Set<CommandWord>() : nameOperands(prog, words);
    for (const w of words) {
      const lp = literalPath(w, o.home);
      if (lp === null) {
        // `"$HOME/.ssh/id_rsa"`, `.e*`: judged by the secrets list as what they name (see secretPaths).
        for (const abs of secretPaths(w, o.home, dirs, o.cwd, globs)) {
          if (seen.has(`operand+:${abs}`)) continue;
          seen.add(`operand+:${abs}`);
          const t = judgeOperand(`${label0} ${w.text}`, abs, o, false, false);
          if (t) out.push(t);
        }
        continue;
      }
      // `--exclude=.env` names what not to read (`--exclude-from=F` reads F): see nameOperands.
      const skip = names.has(w);
      for (const text of w.literal ? pathTexts(w.text) : [lp]) {
        for (const base of path.isAbsolute(text) ? [o.cwd] : dirs) {
          if (base === null) { if (strict) out.push(denyPart(`${label0} ${text}`, AFTER_CD_WHY)); break; }
          const abs = path.resolve(base, text);
          // A pattern (`-name '*.pem'`) is no file name the secrets list should refuse.
          const noSecrets = quiet || skip || /[*?[]/.test(text);
          const key = `operand${noSecrets ? '' : '+'}:${abs}`;
          if (seen.has(key)) continue;
          seen.add(key);
          const t = judgeOperand(`${label0} ${text}`, abs, o, strict, noSecrets);
          if (t) out.push(t);
        }
      }
    }
  }
  return out;
}

/** One operand path: the secrets list (unless `noSecrets`: the program opens nothing), then, when strict, the deny rules, as written and resolved. */
function judgeOperand(label: string, abs: string, o: TargetOptions, strict: boolean, noSecrets: boolean): PlanTarget | null {
  // /proc/self/cwd/priv/x is the command's own folder: outside the workspace as written only.
  if (strict && PROC_SECRET.test(abs)) return denyPart(label, `${abs} reaches a process's folders, environment or memory, and no OS sandbox isolates it`);
  let real: string | null | undefined;
  const resolved = () => {
    if (real === undefined) { try { real = realpathSync.native(abs); } catch { real = null; /* missing: judged as written */ } }
    return real !== null && real !== abs ? real : null;
  };
  if (!noSecrets) {
    for (const at of [abs, resolved()]) {
      if (at !== null && o.workspace.rules.isDenied(relInRoots(o.workspace.roots, at), at, true)) return denyPart(label, `${at} is on the secrets deny list (paths.deny), and no OS sandbox hides it`);
    }
  }
  if (!strict) return null;
  // As written, and as it resolves when it exists (`sub/lnk/x` with sub/lnk a link into priv).
  let t = ruleTarget(label, relInRoots(o.workspace.roots, abs), false, o);
  if (!t) { const r = resolved(); if (r !== null) t = ruleTarget(label, relInRoots(o.workspace.roots, r), false, o); }
  // Deny only: an ask rule on a reader's file is asked through resolve() (fileTarget), one
  // message for every state of the path; an operand's ask would name the default instead.
  return t && t.kind === 'command' && t.deny_reason ? t : null;
}
