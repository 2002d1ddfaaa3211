import { z } from 'zod';
import { defineTool, descriptionBeside, READ_ONLY_ANNOTATIONS } from '../../core/define-tool.js';

const input = z.strictObject({
  content: z.string().min(1).max(10_000).describe('What to show the user.'),
  level: z.enum(['info', 'success', 'warning', 'error', 'progress']).default('info').describe('How to show it.'),
  title: z.string().max(200).optional().describe('A short heading.'),
});

const output = z.object({
  delivered: z.boolean().describe('True when the client was sent the notification.'),
  level: z.string(),
});

const MCP_LEVEL = { info: 'info', success: 'notice', progress: 'info', warning: 'warning', error: 'error' } as const;

export const displayTool = defineTool({
  name: 'display',
  version: '1.0.0',
  title: 'Display a message',
  description: descriptionBeside(import.meta.url),
  input,
  output,
  risk: 'low',
  permissions: [],
  side_effects: 'none (sends a logging notification to the client)',
  annotations: READ_ONLY_ANNOTATIONS,
  plan: (args) => ({ targets: [], summary: `show a ${args.level} message` }),
  async execute(args, _plan, ctx) {
    await ctx.notify(MCP_LEVEL[args.level], { level: args.level, title: args.title, content: args.content });
    if (args.level === 'progress') ctx.progress(args.content);
    return { data: { delivered: true, level: args.level }, text: `Shown to the user (${args.level}).` };
  },
});
