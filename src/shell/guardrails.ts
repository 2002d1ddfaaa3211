import type { CommandWord } from '../core/types.js';
import type { Analysis, CommandPart } from './analyze.js';
import { basename } from './analyze.js';
import { gitCall } from './git.js';

/** The `commands:` section of the policy (defaults in policy/schema.ts). */
export interface CommandGuardrails {
  prefer_tools: boolean;
  deny_programs: string[];
  interactive: string[];
  repl: string[];
}

export interface GuardContext {
  guards: CommandGuardrails;
  /** The profile lacks git.write: git calls that change the repository are refused. */
  gitWrite: boolean;
  profile: string;
  /** The call gives text on stdin (then a REPL reads a script from it). */
  stdin: boolean;
  /** The whole command line, for "is anything piped or redirected into it". */
  command: string;
}

/** Listing/reading/searching programs and the dedicated tool to use instead. */
const PREFER: Record<string, string> = {
  ls: 'list_dir', tree: 'list_dir', cat: 'read_file', head: 'read_file', tail: 'read_file',
  grep: 'grep', egrep: 'grep', fgrep: 'grep', rg: 'grep', find: 'glob (or grep for content)',
};

/** Options that give a REPL its program (a script file is any operand). */
const CODE_OPTS = /^(-c|-e|-m|-p|--eval|--print|--command|-f|--file|-r|--require|-i|--input-file|--execute)$|^--(eval|command|file|execute)=/;

function programOf(p: CommandPart): { prog: string; at: number } | null {
  const i = p.words.findIndex((w) => !/^[A-Za-z_][A-Za-z0-9_]*\+?=/.test(w.text));
  const w = p.words[i];
  if (!w || !w.literal) return null;
  return { prog: basename(w.text), at: i };
}

function globMatch(pattern: string, name: string): boolean {
  if (!pattern.includes('*')) return pattern === name;
  const re = new RegExp(`^${pattern.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
  return re.test(name);
}

/** Options that print something and exit. */
const INFO_OPTS = /^(-v|-V|--version|-h|--help|-\?)$/;

/** ssh options that take a value (the next word). */
const SSH_VALUE = /^-[BbcDEeFIiJLlmOoPpQRSWw]$/;

/** Non-option words of an ssh call: the host, then the remote command. */
function sshOperands(words: CommandWord[]): number {
  let n = 0;
  for (let i = 1; i < words.length; i++) {
    const t = words[i]!.text;
    if (n === 0 && t.startsWith('-')) { if (SSH_VALUE.test(t)) i++; continue; }
    n++;
  }
  return n;
}

/** Why a REPL-like program would wait for a terminal, or null when it is given a program. */
function replWithoutScript(words: CommandWord[], prog: string): boolean {
  const rest = words.slice(1);
  if (rest.some((w) => CODE_OPTS.test(w.text) || INFO_OPTS.test(w.text))) return false;
  // psql/mysql/sqlite3: a database name alone still opens a prompt; other REPLs take a script operand.
  if (/^(psql|mysql|mariadb|sqlite3|redis-cli|mongo|mongosh)$/.test(prog)) return true;
  return !rest.some((w) => !w.text.startsWith('-'));
}

/**
 * Seed 004's guardrails, as policy (the `commands:` section): programs denied by default,
 * interactive programs refused with the reason, a bare listing/reading/searching command
 * refused in favour of the dedicated tool, and git writes refused without `git.write`.
 * Returns one reason per part (null = no objection).
 */
export function guardParts(a: Analysis, g: GuardContext): (string | null)[] {
  const single = a.parts.length === 1 && a.files.every((f) => f.access !== 'write' && f.access !== 'delete');
  const fed = g.stdin || /[<|]/.test(g.command);
  return a.parts.map((p) => {
    if (p.deny_reason) return null;
    // A part that runs code hides its words (see analyze's pushCode): judged as written (`vim -c …` is still interactive).
    const found = programOf(p.asWritten ? { ...p, words: p.asWritten } : p);
    if (!found) return null;
    const { prog, at } = found;
    const words = (p.asWritten ?? p.words).slice(at);
    if (g.guards.deny_programs.some((d) => globMatch(d, prog))) {
      return `${prog} is denied by commands.deny_programs (it changes the system or needs privileges no agent should have)`;
    }
    if (prog === 'dd' && words.some((w) => /^of=\/dev\//.test(w.text) && !/^of=\/dev\/(null|stdout|stderr)$/.test(w.text))) {
      return 'dd writing to a device (of=/dev/…) is denied';
    }
    const noTerminal = 'there is no terminal: it would wait for input until the timeout (and an editor leaves swap files behind)';
    if (g.guards.interactive.includes(prog)) return `${prog} is an interactive program (commands.interactive): ${noTerminal}; use read_file/edit_file or a non-interactive form`;
    if (prog === 'ssh' && sshOperands(words) < 2 && !words.some((w) => /^-[a-zA-Z]*[VGQ]/.test(w.text))) {
      return `ssh without a remote command is an interactive login: ${noTerminal}; give the command to run (ssh host 'cmd')`;
    }
    if (g.guards.repl.includes(prog) && !fed && replWithoutScript(words, prog)) {
      return `${prog} without a script or -c/-e code opens an interactive prompt: ${noTerminal}; pass the code (-c/-e), a script file, or stdin`;
    }
    if (prog === 'git' && !g.gitWrite) {
      const call = gitCall(words);
      if (call.writes) return `git ${call.sub ?? ''} changes the repository and profile "${g.profile}" does not include git.write`;
    }
    if (g.guards.prefer_tools && single && !fed && PREFER[prog]) {
      return `${prog} on its own is what the ${PREFER[prog]} tool does (commands.prefer_tools): call ${PREFER[prog]} instead; it is faster, bounded and keeps the path rules. Use ${prog} in a pipeline only as a filter`;
    }
    return null;
  });
}
