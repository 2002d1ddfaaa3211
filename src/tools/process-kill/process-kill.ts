import { z } from 'zod';
import { defineTool, descriptionBeside } from '../../core/define-tool.js';
import { findProcess } from '../process-output/process-output.js';
import { statusOf } from '../process-list/process-list.js';

export const processKillTool = defineTool({
  name: 'process_kill',
  version: '1.0.0',
  title: 'Stop a background process',
  description: descriptionBeside(import.meta.url),
  input: z.strictObject({ id: z.string().min(1).describe('The id run_command returned.') }),
  output: z.object({
    id: z.string(),
    status: z.enum(['running', 'exited', 'killed']),
    exit_code: z.number().int().nullable(),
    signal: z.string().nullable(),
  }),
  risk: 'medium',
  permissions: ['proc.exec'],
  side_effects: 'kills a process group this session started',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  plan(args, ctx) {
    findProcess(ctx.session, args.id);
    return { targets: [], summary: `stop background process ${args.id} and its process group` };
  },
  async execute(args, _plan, ctx) {
    const p = findProcess(ctx.session, args.id);
    if (!p.exit) {
      p.killed = true;
      p.running.kill();
      await Promise.race([p.running.done, new Promise((r) => setTimeout(r, 5000).unref())]);
    }
    const status = statusOf(p);
    return {
      data: { id: p.id, status, exit_code: p.exit?.exit_code ?? null, signal: p.exit?.signal ?? null },
      text: p.exit ? `${p.id} is ${status}.` : `${p.id} was sent SIGKILL but has not exited yet.`,
    };
  },
});
