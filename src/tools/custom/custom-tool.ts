import path from 'node:path';
import { defineTool, type AnyTool } from '../../core/define-tool.js';
import { ToolError } from '../../core/errors.js';
import type { Annotations, Risk, ToolContext } from '../../core/types.js';
import { awaitForeground, finishedOutput, launch } from '../../exec/launch.js';
import { resolveCwd } from '../run-command/plan.js';
import { runOutput, type RunOutput } from '../run-command/schema.js';
import { checkArgv, customInput, fillArgv } from './args.js';
import type { CustomToolConfig } from './config.js';

const ANNOTATIONS: Record<Risk, Annotations> = {
  low: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  medium: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  high: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
};

/** Shell-like display of an argv, for summaries and the audit (it is never run through a shell). */
export function displayArgv(argv: string[]): string {
  return argv.map((w) => (/^[A-Za-z0-9_./:=@%+,-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/**
 * A custom tool from the policy's `tools:` (SPEC §12): a fixed argv, no shell, run exactly like
 * run_command (OS sandbox, env allow-list, process group, head+tail output, spill), judged by
 * rules on its own name. Throws CustomToolError for a definition that cannot be used.
 */
export function makeCustomTool(name: string, cfg: CustomToolConfig): AnyTool {
  const key = `tools.${name}`;
  checkArgv(cfg, key);
  const input = customInput(cfg, key);
  const shown = displayArgv(cfg.argv);
  return defineTool({
    name, version: '1.0.0', title: cfg.title ?? name,
    description: `${cfg.description}\n\nRuns (no shell; each {placeholder} is one whole word): ${shown}`,
    input, output: runOutput, risk: cfg.risk, permissions: ['proc.exec'],
    side_effects: `runs ${shown} in the workspace (inside the OS sandbox when available)`,
    annotations: ANNOTATIONS[cfg.risk],
    // The tool stops the process itself (returning its output); this is only a backstop.
    timeout_ms: (cfg.timeout_ms ?? 24 * 3600_000) + 60_000,
    async plan(args, ctx) {
      const argv = fillArgv(cfg.argv, args, cfg.args);
      await resolveCwd(cfg.cwd, ctx);
      const text = displayArgv(argv);
      return { targets: [{ kind: 'command', words: argv.map((w) => ({ text: w, literal: true })), text }], summary: `run ${text} (custom tool ${name})` };
    },
    async execute(args, plan, ctx) {
      const argv = fillArgv(cfg.argv, args, cfg.args);
      const cwd = await resolveCwd(cfg.cwd, ctx);
      const text = displayArgv(argv);
      const limit = Math.min(cfg.timeout_ms ?? ctx.limits.timeout_ms, 24 * 3600_000);
      const rec = await launch({ command: text, argv, cwd: cwd.abs, background: false, plan, programs: [path.basename(argv[0]!)] }, ctx);
      return await waitFor(rec, text, limit, cwd.display, ctx);
    },
  });
}

async function waitFor(rec: Awaited<ReturnType<typeof launch>>, text: string, limit: number, cwd: string, ctx: ToolContext) {
  const exit = await awaitForeground(rec, limit, ctx);
  const data = await collect(rec, exit, { cwd, sandbox: rec.sandbox }, ctx);
  const tail = data.output.trimEnd().split('\n').slice(-20).join('\n').slice(-2000);
  if (rec.timed_out) throw new ToolError('Timeout', `${text} ran longer than ${limit} ms and was stopped with its whole process group. Output tail:\n${tail}`, { data: { ...data, timed_out: true } });
  if (ctx.signal.aborted) throw new ToolError('Cancelled', 'The call was cancelled; the process group was stopped.', { data });
  if (exit.exit_code !== 0) {
    throw new ToolError('ExitNonZero', `${text} failed (${exit.signal ? `signal ${exit.signal}` : `exit code ${exit.exit_code}`}). Output tail:\n${tail}`, { data, details: { exit_code: exit.exit_code, signal: exit.signal } });
  }
  return {
    data, text: `${text}: exit 0 in ${exit.duration_ms} ms${data.truncated ? ` (${data.total_bytes} bytes of output, head and tail shown)` : ''}${rec.sandbox === 'none' ? ' (no OS sandbox)' : ''}.`,
    status: data.truncated ? 'partial' as const : 'ok' as const,
    stats: { exit_code: 0, output_bytes: data.total_bytes },
    commands_run: [text],
    ...(data.storage_ref ? { storage_ref: data.storage_ref, sha256: data.sha256 } : {}),
  };
}

async function collect(rec: Awaited<ReturnType<typeof launch>>, exit: { exit_code: number | null; signal: string | null; duration_ms: number }, base: { cwd: string; sandbox: 'bwrap' | 'none' }, ctx: Pick<ToolContext, 'spill' | 'limits'>): Promise<RunOutput> {
  const out = await finishedOutput(rec, ctx);
  return {
    ...base, exit_code: exit.exit_code, signal: exit.signal, timed_out: rec.timed_out, duration_ms: exit.duration_ms,
    output: out.text, truncated: out.truncated, total_bytes: out.total_bytes,
    ...(out.storage_ref ? { storage_ref: out.storage_ref, sha256: out.sha256 } : {}),
  };
}
