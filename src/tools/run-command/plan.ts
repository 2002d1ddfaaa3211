import { ToolError } from '../../core/errors.js';
import type { Plan, PlanContext, PlanTarget, ResolvedPath } from '../../core/types.js';
import { networkAllowed } from '../../exec/launch.js';
import { commandHome } from '../../exec/env.js';
import { chooseBackend } from '../../exec/sandbox.js';
import { analyzeCommand, basename, type Analysis } from '../../shell/analyze.js';
import { loadShellParser } from '../../shell/parser.js';
import { planTargets } from '../../shell/targets.js';
import { guardParts } from '../../shell/guardrails.js';
import { commandPathRules, commandRulesBelow } from '../../shell/path-verdict.js';
import { holdsProtected } from '../../exec/holds-protected.js';

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
export async function planCommand(command: string, cwdArg: string | undefined, ctx: PlanContext, opts: { stdin?: boolean } = {}): Promise<{ plan: Plan; analysis: Analysis; cwd: ResolvedPath }> {
  const pathRule = commandPathRules(ctx.policy);
  // cwd is judged like any path: Workspace.resolve refuses a denied one (the path gate) before looking at it.
  const cwd = await resolveCwd(cwdArg, ctx);
  const parser = await loadShellParser();
  const analysis = analyzeCommand(parser, command);
  const guards = guardParts(analysis, {
    guards: ctx.policy.data.commands, gitWrite: ctx.policy.permissions.has('git.write'), profile: ctx.policy.profile,
    stdin: opts.stdin === true, command,
  });
  analysis.parts.forEach((p, i) => { if (guards[i]) p.deny_reason = guards[i]!; });
  const backend = await chooseBackend(ctx.policy.data.sandbox.backend);
  // The command's HOME as buildEnv gives it (env.set wins, HOME is always allowed), without building the whole environment.
  const home = commandHome(ctx.policy.data.env);
  const parts: PlanTarget[] = analysis.parts.map((p) => ({ kind: 'command', words: p.words, text: p.text }));
  const network = networkAllowed(ctx, { targets: parts, summary: '' });
  const targets = await planTargets(analysis, {
    workspace: ctx.workspace, cwd: cwd.abs, home, privateTmp: backend.backend === 'bwrap', sandboxed: backend.backend === 'bwrap', network,
    pathRule, rulesBelow: commandRulesBelow(ctx.policy), protectedInside: (abs) => holdsProtected(ctx.workspace, abs),
    strictReads: backend.backend === 'none' && !!pathRule,
  });
  const n = analysis.parts.length;
  return { plan: { targets, summary: `run \`${command}\` in ${cwd.display} (${n} command${n === 1 ? '' : 's'})` }, analysis, cwd };
}
