import { z } from 'zod';
import { defineTool, descriptionBeside } from '../../core/define-tool.js';
import { commandFailure } from '../../core/circuit.js';
import { ToolError } from '../../core/errors.js';
import { limitText } from '../../core/output.js';
import type { ToolContext } from '../../core/types.js';
import { awaitForeground, finishedOutput, launch } from '../../exec/launch.js';
import { pathDropNote } from '../../exec/env.js';
import { evaluate } from '../../policy/evaluate.js';
import { loadShellParser } from '../../shell/parser.js';
import { analyzeCommand, type Analysis } from '../../shell/analyze.js';
import { planCommand, programsOf, resolveCwd } from './plan.js';
import { runOutput, type RunOutput } from './schema.js';

const input = z.strictObject({
  command: z.string().min(1).max(100_000).describe('A bash command line, e.g. "npm test -- --watch=false". Every part of it is checked by the policy.'),
  cwd: z.string().optional().describe('Working directory relative to the workspace root (default: the root).'),
  timeout_ms: z.number().int().positive().optional().describe('Stop the command after this long (capped by the policy limit).'),
  background: z.boolean().default(false).describe('Start it and return an id at once; read it with process_output.'),
  stdin: z.string().max(10 * 1024 * 1024).optional().describe('Text given on standard input; without it stdin is closed.'),
});

/** The analysis each plan was made from (plan → execute of one call). */
const analyses = new WeakMap<object, Analysis>();

export const runCommandTool = defineTool({
  name: 'run_command',
  version: '1.0.0',
  title: 'Run a command',
  description: descriptionBeside(import.meta.url),
  input,
  output: runOutput,
  risk: 'medium',
  permissions: ['proc.exec'],
  side_effects: 'runs a process in the workspace (inside the OS sandbox when available)',
  // run_terminal_cmd(command, is_background) / run_shell(command, cwd).
  aliases: { is_background: 'background' },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  // The command enforces its own limit (so a timeout still returns the output); this is only a backstop.
  timeout_ms: 24 * 3600_000 + 60_000,
  async plan(args, ctx) {
    const { plan, analysis } = await planCommand(args.command, args.cwd, ctx, { stdin: args.stdin !== undefined || args.background });
    const out = args.background ? { ...plan, summary: `${plan.summary}, in the background` } : plan;
    analyses.set(out, analysis);
    return out;
  },
  async execute(args, plan, ctx) {
    const cwd = await resolveCwd(args.cwd, ctx);
    // The line is the plan's (a plan is made for one call's args): parsed once.
    const programs = programsOf(analyses.get(plan) ?? analyzeCommand(await loadShellParser(), args.command));
    const limit = Math.min(args.timeout_ms ?? ctx.limits.timeout_ms, ctx.limits.timeout_ms);
    // Approved under an ask path rule (a person saw this command and the asked path): the paths ask
    // rules cover are visible to it. An approval for another reason (the default ask) opens nothing.
    const askedPaths = evaluate({ name: 'run_command', risk: 'medium', permissions: ['proc.exec'] }, plan.targets, ctx.policy).parts
      .some((p) => p.decision === 'ask' && p.kind === 'path' && p.source === 'policy');
    const approved = askedPaths || (ctx.workspace.gate?.asked.length ?? 0) > 0;
    const rec = await launch({ command: args.command, cwd: cwd.abs, stdin: args.stdin, background: args.background, plan, programs, approved }, ctx);
    const base = { cwd: cwd.display, sandbox: rec.sandbox };
    if (args.background) {
      // Through the starter the pid comes one message later: a start that failed (the starter
      // died, the folder went away) is told now, not answered "Started".
      await rec.running.spawned;
      if (rec.running.pid < 0) {
        const exit = await rec.running.done;
        throw new ToolError('IOError', `The command could not be started in the background: ${rec.running.startError ?? `exit code ${exit.exit_code}`}. Try again; process_list shows it as ended.`, { details: { id: rec.id, exit_code: exit.exit_code } });
      }
      if (args.timeout_ms) {
        const t = setTimeout(() => { rec.timed_out = true; rec.running.kill(); }, limit);
        t.unref();
        rec.running.done.finally(() => clearTimeout(t)).catch(() => {});
      }
      return {
        data: { ...base, id: rec.id, exit_code: null, signal: null, timed_out: false, duration_ms: 0, output: '', truncated: false, total_bytes: 0 },
        text: `Started ${rec.id} in the background (${rec.sandbox === 'bwrap' ? 'sandboxed' : 'no sandbox'}). Read its output with process_output {"id":"${rec.id}"}; stop it with process_kill.`,
        commands_run: [args.command],
        audit: { pid: rec.running.pid },
      };
    }
    const exit = await awaitForeground(rec, limit, ctx);
    const data = await collect(rec, exit, base, ctx);
    const summary = `exit ${exit.exit_code ?? exit.signal} in ${exit.duration_ms} ms${data.truncated ? `, ${data.total_bytes} bytes of output (head and tail shown)` : ''}`;
    if (rec.timed_out) {
      throw commandFailure(new ToolError('Timeout', `The command ran longer than ${limit} ms and was stopped with its whole process group. Output tail:\n${tailOf(data.output)}\nRun it in the background or raise timeout_ms.`, { data: { ...data, timed_out: true } }));
    }
    if (ctx.signal.aborted) throw new ToolError('Cancelled', 'The call was cancelled; the command and its process group were stopped.', { data });
    if (exit.exit_code !== 0) {
      // 127: not found. When the PATH check dropped folders, say which: the program may be there.
      const note = exit.exit_code === 127 && rec.path ? pathDropNote(rec.path.given, rec.path.kept) : null;
      throw commandFailure(new ToolError('ExitNonZero', `The command failed (${exit.signal ? `signal ${exit.signal}` : `exit code ${exit.exit_code}`}). Output tail:\n${tailOf(data.output)}${note ? `\n${note}` : ''}`, { data, details: { exit_code: exit.exit_code, signal: exit.signal } }));
    }
    return {
      data, text: `Command succeeded: ${summary}${rec.sandbox === 'none' ? ' (no OS sandbox)' : ''}.`, status: data.truncated ? 'partial' : 'ok',
      stats: { exit_code: exit.exit_code ?? -1, output_bytes: data.total_bytes },
      commands_run: [args.command],
      ...(data.storage_ref ? { storage_ref: data.storage_ref, sha256: data.sha256 } : {}),
    };
  },
});

function tailOf(output: string): string {
  const lines = output.trimEnd().split('\n');
  const tail = lines.slice(-20).join('\n');
  return tail.length > 2000 ? tail.slice(-2000) : tail;
}

/** Output for the model: head + tail within the limits; the whole of it on disk when cut. */
async function collect(rec: Awaited<ReturnType<typeof launch>>, exit: { exit_code: number | null; signal: string | null; duration_ms: number }, base: { cwd: string; sandbox: 'bwrap' | 'none' }, ctx: Pick<ToolContext, 'spill' | 'limits'>): Promise<RunOutput> {
  const out = await finishedOutput(rec, ctx);
  return {
    ...base, exit_code: exit.exit_code, signal: exit.signal, timed_out: rec.timed_out, duration_ms: exit.duration_ms,
    output: out.text, truncated: out.truncated, total_bytes: out.total_bytes,
    ...(out.storage_ref ? { storage_ref: out.storage_ref, sha256: out.sha256 } : {}),
  };
}
