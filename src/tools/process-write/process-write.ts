import { z } from 'zod';
import { defineTool, descriptionBeside } from '../../core/define-tool.js';
import { ToolError } from '../../core/errors.js';
import type { PlanTarget } from '../../core/types.js';
import { evaluate } from '../../policy/evaluate.js';
import { analyzeCommand } from '../../shell/analyze.js';
import { loadShellParser } from '../../shell/parser.js';
import { planTargets } from '../../shell/targets.js';
import { guardParts } from '../../shell/guardrails.js';
import { commandPathRules, commandRulesBelow } from '../../shell/path-verdict.js';
import { holdsProtected } from '../../exec/holds-protected.js';
import { INTERPRETERS, SHELLS } from '../../shell/wrappers.js';
import { findProcess } from '../process-output/process-output.js';

export const processWriteTool = defineTool({
  name: 'process_write',
  version: '1.0.0',
  title: 'Write to a background process',
  description: descriptionBeside(import.meta.url),
  input: z.strictObject({
    id: z.string().min(1).describe('The id run_command returned.'),
    input: z.string().max(1024 * 1024).describe('Text written to its stdin; add "\\n" to end a line.'),
  }),
  output: z.object({ id: z.string(), bytes: z.number().int() }),
  risk: 'medium',
  permissions: ['proc.exec'],
  side_effects: 'writes to the stdin of a process this session started',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  async plan(args, ctx) {
    const p = findProcess(ctx.session, args.id);
    const summary = `write ${Buffer.byteLength(args.input)} bytes to ${p.id} (${p.command})`;
    if (p.programs.some((x) => SHELLS.has(x))) {
      // Input to a shell is a command line: judged part by part like run_command, under run_command's rules too.
      const a = analyzeCommand(await loadShellParser(), args.input);
      const guards = guardParts(a, { guards: ctx.policy.data.commands, gitWrite: ctx.policy.permissions.has('git.write'), profile: ctx.policy.profile, stdin: true, command: args.input });
      a.parts.forEach((part, i) => { if (guards[i]) part.deny_reason = guards[i]!; });
      const pathRule = commandPathRules(ctx.policy);
      const targets = await planTargets(a, {
        workspace: ctx.workspace, cwd: (await ctx.workspace.resolve(p.cwd, 'list')).abs, home: process.env.HOME ?? '/', privateTmp: p.sandbox === 'bwrap', network: false,
        pathRule, rulesBelow: commandRulesBelow(ctx.policy), protectedInside: (abs) => holdsProtected(ctx.workspace, abs), strictReads: p.sandbox !== 'bwrap' && !!pathRule,
      });
      const asCommand = evaluate({ name: 'run_command', risk: 'medium', permissions: ['proc.exec'] }, targets, ctx.policy);
      const out: PlanTarget[] = targets.map((t, i) => {
        const v = asCommand.parts[i];
        return v?.decision === 'deny' && t.kind === 'command' ? { ...t, deny_reason: `run_command policy: ${v.rule}` } : t;
      });
      return { targets: out, summary: `${summary}: shell input` };
    }
    const interp = p.programs.find((x) => INTERPRETERS.test(x));
    if (interp) {
      const text = `${interp} code: ${args.input.slice(0, 200)}`;
      return { targets: [{ kind: 'command', words: [{ text, literal: false }], text }], summary: `${summary}: code for ${interp}` };
    }
    return { targets: [], summary };
  },
  async execute(args, _plan, ctx) {
    const p = findProcess(ctx.session, args.id);
    if (p.exit) throw new ToolError('NotFound', `${p.id} has already exited (${p.exit.exit_code ?? p.exit.signal}); start it again with run_command.`);
    try {
      await p.running.write(args.input);
    } catch (e) {
      throw new ToolError('IOError', `Could not write to ${p.id}: ${(e as Error).message}. Its stdin may be closed (it was started with stdin).`, { cause: e });
    }
    return { data: { id: p.id, bytes: Buffer.byteLength(args.input) }, text: `Wrote ${Buffer.byteLength(args.input)} bytes to ${p.id}; read the reply with process_output.` };
  },
});
