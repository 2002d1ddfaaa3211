import { lookupTool } from '../core/tool-lookup.js';
import { validateArgs } from '../core/pipeline.js';
import { isToolError } from '../core/errors.js';
import { Session } from '../core/session.js';
import { evaluate } from '../policy/evaluate.js';
import { loadPolicyFile, PolicyError } from '../policy/load.js';
import { SessionRoots } from '../server/session-roots.js';
import { parseJsonArgs } from './json-args.js';
import { setup, UsageError, type CommonFlags } from './setup.js';
import { lintPolicy } from '../policy/lint.js';
import { allTools } from '../tools/index.js';
import { loadCustomTools } from '../tools/custom/index.js';

export async function policyCheck(toolName: string | undefined, flags: CommonFlags & { args?: string }): Promise<number> {
  if (!toolName) throw new UsageError('usage: toolgate policy check TOOL --args JSON');
  const { rt, ceiling } = await setup(flags, { forTool: toolName });
  const found = lookupTool(rt.tools, toolName);
  if (!found.tool) throw new UsageError(`no tool "${toolName}"${found.suggestions.length ? ` (did you mean ${found.suggestions.join(', ')}?)` : ''}`);
  const tool = found.tool;
  try {
    const args = validateArgs(tool, parseJsonArgs(flags.args));
    const ws = await new SessionRoots(rt, ceiling, new Session()).workspace();
    const plan = await tool.plan(args, { workspace: ws, policy: rt.policy, session: new Session(), signal: new AbortController().signal, limits: rt.policy.data.limits });
    const v = evaluate(tool, plan.targets, rt.policy);
    process.stdout.write(JSON.stringify({ tool: tool.name, risk: tool.risk, decision: v.decision, rule: v.rule, mode: rt.policy.mode, summary: plan.summary, parts: v.parts }, null, 2) + '\n');
  } catch (e) {
    if (!isToolError(e)) throw e;
    // Refused before the rules are even consulted (path outside, secrets, parse error…).
    process.stdout.write(JSON.stringify({ tool: tool.name, decision: 'deny', rule: `${e.code}: ${e.message}`, parts: [] }, null, 2) + '\n');
  }
  rt.close();
  return 0;
}

export async function policyValidate(file: string | undefined): Promise<number> {
  if (!file) throw new UsageError('usage: toolgate policy validate FILE');
  try {
    const p = await loadPolicyFile(file);
    const custom = loadCustomTools(p, allTools().map((t) => t.name));
    process.stdout.write(`${file}: valid (profile ${p.profile}, mode ${p.mode}, ${p.rules.length} rules)\n`);
    for (const w of lintPolicy(p, [...allTools(), ...custom].map((t) => t.name))) process.stderr.write(`warning: ${w}\n`);
    return 0;
  } catch (e) {
    if (e instanceof PolicyError) {
      process.stderr.write(`${e.message}\n`);
      return 2;
    }
    throw e;
  }
}
