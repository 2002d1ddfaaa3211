import os from 'node:os';
import { ToolError } from '../../core/errors.js';
import type { Plan, PlanContext, PlanTarget, ResolvedPath } from '../../core/types.js';
import { networkAllowed } from '../../exec/launch.js';
import { buildEnv } from '../../exec/env.js';
import { chooseBackend } from '../../exec/sandbox.js';
import { analyzeCommand, basename, type Analysis } from '../../shell/analyze.js';
import { loadShellParser } from '../../shell/parser.js';
import { planTargets } from '../../shell/targets.js';

export async function resolveCwd(cwd: string | undefined, ctx: Pick<PlanContext, 'workspace'>): Promise<ResolvedPath> {
  const rp = await ctx.workspace.resolve(cwd ?? '.', 'list');
  if (rp.kind !== 'dir') throw new ToolError('NotFound', `cwd ${cwd} is not a directory in the workspace; give a folder relative to the root.`);
  return rp;
}

export function programsOf(a: Analysis): string[] {
  return a.parts.map((p) => p.words.find((w) => !/^[A-Za-z_][A-Za-z0-9_]*\+?=/.test(w.text)))
    .filter((w): w is NonNullable<typeof w> => !!w && w.literal).map((w) => basename(w.text));
}

/** Parses the command and lists every part and every file it writes, for the gate (SPEC §5). */
export async function planCommand(command: string, cwdArg: string | undefined, ctx: PlanContext): Promise<{ plan: Plan; analysis: Analysis; cwd: ResolvedPath }> {
  const cwd = await resolveCwd(cwdArg, ctx);
  const parser = await loadShellParser();
  const analysis = analyzeCommand(parser, command);
  const backend = await chooseBackend(ctx.policy.data.sandbox.backend);
  const home = buildEnv(process.env, ctx.policy.data.env).HOME ?? os.homedir();
  const parts: PlanTarget[] = analysis.parts.map((p) => ({ kind: 'command', words: p.words, text: p.text }));
  const network = networkAllowed(ctx, { targets: parts, summary: '' });
  const targets = await planTargets(analysis, { workspace: ctx.workspace, cwd: cwd.abs, home, privateTmp: backend.backend === 'bwrap', sandboxed: backend.backend === 'bwrap', network });
  const n = analysis.parts.length;
  return { plan: { targets, summary: `run \`${command}\` in ${cwd.display} (${n} command${n === 1 ? '' : 's'})` }, analysis, cwd };
}
