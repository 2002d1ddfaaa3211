import { z } from 'zod';
import { defineTool, descriptionBeside } from '../../core/define-tool.js';
import { ToolError } from '../../core/errors.js';
import type { PlanTarget } from '../../core/types.js';
import { evaluate } from '../../policy/evaluate.js';
import { analyzeCommand } from '../../shell/analyze.js';
import { loadShellParser } from '../../shell/parser.js';
import { folderCandidates, planTargets } from '../../shell/targets.js';
import { guardParts } from '../../shell/guardrails.js';
import { commandPathRules, commandRulesBelow } from '../../shell/path-verdict.js';
import { holdsProtected } from '../../exec/holds-protected.js';
import { INTERPRETERS, SHELLS } from '../../shell/wrappers.js';
import { basename, isAssignment, OTHER_SYNTAX } from '../../shell/analyze.js';
import type { ShellParser } from '../../shell/parser.js';
import type { CommandWord } from '../../core/types.js';
import { findProcess } from '../process-output/process-output.js';
import { Running } from '../../exec/run.js';

/**
 * How long a call waits for the process to take its input before it answers with what is still
 * queued: this, or half the call's time limit when that is shorter (the answer must come before
 * the limit stops the call, or a client would see a failure for input that is delivered).
 */
export const WRITE_WAIT_MS = 1000;
/** Input that may wait for one process to read it, at most (process_write takes 1 MB a call). */
export const MAX_QUEUED_BYTES = 8 * 1024 * 1024;
/** Input that may wait for all of this server's processes together, at most. */
export const MAX_QUEUED_ALL_BYTES = 64 * 1024 * 1024;

/**
 * Why `input` leaves its last line open for the next input to continue, or null: it does not end
 * with a newline, or the newline is escaped (a backslash before it continues the line). Quotes,
 * here-documents and compound commands left open fail the parse of this call's input (walk.ts:
 * an incomplete command is refused).
 */
export function unfinishedLine(input: string): string | null {
  if (!input.endsWith('\n')) return 'it does not end with "\\n"';
  const body = input.endsWith('\r\n') ? input.slice(0, -2) : input.slice(0, -1);
  let slashes = 0;
  for (let i = body.length - 1; i >= 0 && body[i] === '\\'; i--) slashes++;
  return slashes % 2 === 1 ? 'its last line ends with a backslash, which continues it into the next input' : null;
}

type Reader = { kind: 'shell' } | { kind: 'foreign' | 'code'; name: string } | { kind: 'data' };

/**
 * What reads a background process's input, from its command line: a shell (input judged as bash
 * lines), a shell of another syntax (refused), an interpreter (input is code: it asks), or data.
 * Not only the program run_command judged: a shell or interpreter named anywhere in the line (a
 * launcher toolgate does not unwrap: `taskset -c 0 bash`, `flock f bash`, `setpriv bash`, a link
 * to bash next to `/bin/bash`), or a program known only when it runs (`$BASH`), counts as one.
 */
function readerOf(p: { programs: string[]; command: string }, parser: ShellParser): Reader {
  const parts = analyzeCommand(parser, p.command).parts;
  const names = [...p.programs, ...parts.flatMap((part) => part.words).filter((w) => w.literal).map((w) => basename(w.text))];
  const foreign = names.find((n) => OTHER_SYNTAX.has(n));
  if (foreign) return { kind: 'foreign', name: foreign };
  const unknownProgram = parts.some((part) => {
    const w = part.words.find((x) => !isAssignment(x));
    return !!w && !w.literal;
  });
  if (unknownProgram || names.some((n) => SHELLS.has(n))) return { kind: 'shell' };
  const code = names.find((n) => INTERPRETERS.test(n) || COMMAND_READERS.test(n));
  return code ? { kind: 'code', name: code } : { kind: 'data' };
}

/**
 * `exec` with no command and a redirection of its input (`exec 0<f`, `exec <f`, `exec 0<&3`,
 * `exec <>f`): the text of it, or null. Bash then reads the next commands from there.
 */
function execRedirectsStdin(parser: ShellParser, input: string): string | null {
  return parser.parse(input, (root) => {
    for (const cmd of root.descendantsOfType('command')) {
      if (!cmd || cmd.childForFieldName('name')?.text !== 'exec') continue;
      // The grammar reads `exec 0<f` as the argument "0" and `<f`: any redirection with "<" of an
      // exec that runs no program counts (it only changes the shell's own descriptors).
      if (cmd.childrenForFieldName('argument').some((x) => !!x && !/^[0-9]+$/.test(x.text))) continue;
      const whole = cmd.parent?.type === 'redirected_statement' ? cmd.parent : cmd;
      if (whole.text.includes('<')) return whole.text;
    }
    return null;
  });
}

/** Programs that read commands from their input, some of which run shell commands (ed's `!cmd`). */
const COMMAND_READERS = /^(ed|red|ex|vi|vim|nvim|view|expect|bc|dc|gdb|ftp|sftp|mail|mailx|awk|gawk|mawk|nawk|m4)$/;
/** Of those, the ones that read commands from their input whatever else they are given. */
const ALWAYS_READ_COMMANDS = /^(ed|red|ex|vi|vim|nvim|view|expect|bc|dc|gdb|ftp|sftp|mail|mailx)$/;
const STDIN_FILE = /^\/(dev\/stdin|dev\/fd\/0|proc\/self\/fd\/0)$/;

/** The program of a command part that reads its code from stdin (a shell or an interpreter given no script or -c), or null. bash reading bash is judged as such. */
function readsStdinAsCode(words: readonly CommandWord[]): string | null {
  const i = words.findIndex((w) => !isAssignment(w));
  const w = words[i];
  if (!w?.literal) return null;
  const prog = basename(w.text);
  if (ALWAYS_READ_COMMANDS.test(prog)) return prog;
  if (!SHELLS.has(prog) && !INTERPRETERS.test(prog) && !COMMAND_READERS.test(prog)) return null;
  const rest = words.slice(i + 1);
  if (rest.some((x) => STDIN_FILE.test(x.text))) return prog;
  if (prog === 'bash' || prog === 'rbash') return null;
  return rest.every((x) => x.literal && x.text.startsWith('-') && !/^-[A-Za-z]*c/.test(x.text)) ? prog : null;
}

/**
 * Text a shell may read otherwise than bash's grammar does, or null: $'…' (a POSIX shell started
 * inside reads it as "$" and a quoted string), and "!" before a word (history expansion in an
 * interactive shell: `echo cat priv/x`, then `!:1-2`, ran `cat priv/x`).
 */
function oddForAShell(input: string): string | null {
  if (input.includes("$'")) return "$'…' is read otherwise by shells other than bash: use '…' or \"…\" quotes";
  if (/!(?![\s=(]|$)/.test(input)) return '"!" before text is history expansion in an interactive shell: put a space after it, or quote the text with \'…\' in a script file';
  return null;
}

export const processWriteTool = defineTool({
  name: 'process_write',
  version: '1.0.0',
  title: 'Write to a background process',
  description: descriptionBeside(import.meta.url),
  input: z.strictObject({
    id: z.string().min(1).describe('The id run_command returned.'),
    input: z.string().max(1024 * 1024).describe('Text written to its stdin; add "\\n" to end a line.'),
  }),
  output: z.object({
    id: z.string(),
    bytes: z.number().int(),
    queued_bytes: z.number().int().describe('Bytes the process has not taken into its stdin yet (this call\'s and earlier ones\'): written, in order, as it reads.'),
  }),
  risk: 'medium',
  permissions: ['proc.exec'],
  side_effects: 'writes to the stdin of a process this session started',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  async plan(args, ctx) {
    const p = findProcess(ctx.session, args.id);
    const summary = `write ${Buffer.byteLength(args.input)} bytes to ${p.id} (${p.command})`;
    const parser = await loadShellParser();
    const reader = readerOf(p, parser);
    if (reader.kind === 'foreign') {
      throw new ToolError('ToolNotAllowed', `${p.id} runs ${reader.name}, whose input is not bash: toolgate judges bash syntax only, so nothing is written to it. Run ${reader.name} code with bash, or as a script file.`);
    }
    if (reader.kind === 'shell') {
      // A shell joins what comes next onto an unfinished line: `cat pr` then `iv/x\n` runs
      // `cat priv/x`, a line no call showed. So each call must end its last line itself.
      const unfinished = unfinishedLine(args.input);
      if (unfinished) throw new ToolError('InvalidArguments', `Input to a shell (${p.id} runs ${p.command}) must be whole lines: ${unfinished}. The shell would join the next input onto it, and the joined line is not the one judged. Send the whole line in one call.`);
      const odd = oddForAShell(args.input);
      if (odd) throw new ToolError('InvalidArguments', `Input to a shell (${p.id} runs ${p.command}): ${odd}.`);
      // Input to a shell is a command line: judged part by part like run_command, under run_command's rules too.
      const a = analyzeCommand(parser, args.input);
      // A shell or an interpreter started by this input would read the next inputs as its own code.
      for (const part of a.parts) {
        const prog = readsStdinAsCode(part.words);
        if (prog && !part.deny_reason) part.deny_reason = `${prog} would read the next input to ${p.id} as its own code, which toolgate would judge as bash: start it with run_command (background) and write to it there`;
      }
      const guards = guardParts(a, { guards: ctx.policy.data.commands, gitWrite: ctx.policy.permissions.has('git.write'), profile: ctx.policy.profile, stdin: true, command: args.input });
      a.parts.forEach((part, i) => { if (guards[i]) part.deny_reason = guards[i]!; });
      // `exec 0<file` makes the shell read its next commands from the file, unjudged (like source).
      const stdinSwap = execRedirectsStdin(parser, args.input);
      if (stdinSwap) a.parts.push({ words: [{ text: stdinSwap, literal: false }], text: stdinSwap, deny_reason: `${stdinSwap}: the shell would read its next commands from there, which no call showed` });
      const pathRule = commandPathRules(ctx.policy);
      const cwd = (await ctx.workspace.resolve(p.cwd, 'list')).abs;
      const home = process.env.HOME ?? '/';
      // The shell stays in the folder earlier input (or its own command line) took it to: paths are
      // judged against every folder it may be in, and this input's cd's are added for the next.
      const cwds = p.shellDirs ?? folderCandidates(analyzeCommand(parser, p.command).dirs, { cwd, home });
      p.shellDirs = folderCandidates(a.dirs, { cwd, home, cwds });
      const targets = await planTargets(a, {
        workspace: ctx.workspace, cwd, cwds, home, privateTmp: p.sandbox === 'bwrap', network: false,
        pathRule, rulesBelow: commandRulesBelow(ctx.policy), protectedInside: (abs) => holdsProtected(ctx.workspace, abs), strictReads: p.sandbox !== 'bwrap' && !!pathRule,
      });
      const asCommand = evaluate({ name: 'run_command', risk: 'medium', permissions: ['proc.exec'] }, targets, ctx.policy);
      const out: PlanTarget[] = targets.map((t, i) => {
        const v = asCommand.parts[i];
        return v?.decision === 'deny' && t.kind === 'command' ? { ...t, deny_reason: `run_command policy: ${v.rule}` } : t;
      });
      return { targets: out, summary: `${summary}: shell input` };
    }
    // Without a sandbox, path rules hold for what a command does only when every path is judged
    // before it runs: input to a program that is not a shell (an interpreter, ed's `!cat priv/x`,
    // or data whose reader is unknown) cannot be, so it is refused while such rules exist.
    if (p.sandbox !== 'bwrap' && commandPathRules(ctx.policy)) {
      const text = `input to ${p.id} (${reader.kind === 'code' ? reader.name : p.command})`;
      return { targets: [{ kind: 'command', words: [{ text, literal: false }], text, deny_reason: `${text}: it is not a shell line, so the paths it reaches cannot be judged before it runs, and no OS sandbox holds the path rules for it; run the program under bubblewrap (sandbox: bwrap)` }], summary };
    }
    const interp = reader.kind === 'code' ? reader.name : null;
    if (interp) {
      const text = `${interp} code: ${args.input.slice(0, 200)}`;
      return { targets: [{ kind: 'command', words: [{ text, literal: false }], text }], summary: `${summary}: code for ${interp}` };
    }
    return { targets: [], summary };
  },
  async execute(args, _plan, ctx) {
    const p = findProcess(ctx.session, args.id);
    if (p.exit) throw new ToolError('NotFound', `${p.id} has already exited (${p.exit.exit_code ?? p.exit.signal}); start it again with run_command.`);
    const bytes = Buffer.byteLength(args.input);
    if (p.running.queuedBytes + bytes > MAX_QUEUED_BYTES) {
      throw new ToolError('IOError', `${p.id} has ${p.running.queuedBytes} bytes of earlier input not read yet; with these ${bytes} that is over ${MAX_QUEUED_BYTES}. Nothing of this call was written: see what it does with process_output, or stop it with process_kill.`,
        { details: { queued_bytes: p.running.queuedBytes } });
    }
    if (Running.queuedAll + bytes > MAX_QUEUED_ALL_BYTES) {
      throw new ToolError('IOError', `The server's processes have ${Running.queuedAll} bytes of input not read yet; with these ${bytes} that is over ${MAX_QUEUED_ALL_BYTES}. Nothing of this call was written: retry once they read, or stop the ones that do not (process_list, process_kill).`,
        { details: { queued_bytes: p.running.queuedBytes, queued_all_bytes: Running.queuedAll } });
    }
    const write = p.running.write(args.input);
    // A process that does not read (yet) gets the rest as it reads: the call does not wait for that.
    // A failure after this call answered (the process ended first) is not this call's.
    write.catch(() => {});
    let timer: NodeJS.Timeout | undefined;
    const waited = await Promise.race([
      write.then(() => true, (e: Error) => e),
      new Promise<false>((r) => { timer = setTimeout(() => r(false), Math.min(WRITE_WAIT_MS, Math.floor(ctx.limits.timeout_ms / 2))); }),
    ]).finally(() => clearTimeout(timer));
    if (waited instanceof Error) {
      throw new ToolError('IOError', `Could not write to ${p.id}: ${waited.message}. Its stdin may be closed (it was started with stdin).`, { cause: waited });
    }
    const queued = p.running.queuedBytes;
    const text = queued === 0
      ? `Wrote ${bytes} bytes to ${p.id}; read the reply with process_output.`
      : `Gave ${bytes} bytes to ${p.id}; ${queued} bytes are not read by it yet and follow, in order, as it reads. See what it does with process_output.`;
    return { data: { id: p.id, bytes, queued_bytes: queued }, text };
  },
});
