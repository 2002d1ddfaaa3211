import { z } from 'zod';
import { defineTool, descriptionBeside, READ_ONLY_ANNOTATIONS } from '../../core/define-tool.js';
import { ProcessTable, type ProcRecord } from '../../exec/processes.js';

const procInfo = z.object({
  id: z.string(),
  command: z.string(),
  cwd: z.string(),
  status: z.enum(['running', 'exited', 'killed']),
  exit_code: z.number().int().nullable(),
  signal: z.string().nullable(),
  started_at: z.string(),
  duration_ms: z.number().int(),
  output_bytes: z.number().int(),
  sandbox: z.enum(['bwrap', 'none']),
});

export function statusOf(p: ProcRecord): 'running' | 'exited' | 'killed' {
  return !p.exit ? 'running' : p.killed || p.timed_out ? 'killed' : 'exited';
}

export function infoOf(p: ProcRecord): z.output<typeof procInfo> {
  return {
    id: p.id, command: p.command, cwd: p.cwd, status: statusOf(p), exit_code: p.exit?.exit_code ?? null, signal: p.exit?.signal ?? null,
    started_at: p.started_at, duration_ms: p.exit?.duration_ms ?? Date.now() - p.running.started, output_bytes: p.capture.bytes, sandbox: p.sandbox,
  };
}

export const processListTool = defineTool({
  name: 'process_list',
  version: '1.0.0',
  title: 'List background processes',
  description: descriptionBeside(import.meta.url),
  input: z.strictObject({}),
  output: z.object({ processes: z.array(procInfo) }),
  risk: 'medium',
  permissions: ['proc.exec'],
  side_effects: 'none',
  annotations: READ_ONLY_ANNOTATIONS,
  plan: () => ({ targets: [], summary: 'list the background processes of this session' }),
  async execute(_args, _plan, ctx) {
    const processes = ProcessTable.of(ctx.session).list().filter((p) => p.background).map(infoOf);
    const running = processes.filter((p) => p.status === 'running').length;
    return { data: { processes }, text: `${processes.length} background process(es), ${running} running.` };
  },
});
