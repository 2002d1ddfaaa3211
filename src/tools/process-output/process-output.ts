import { closeSync, openSync, readSync } from 'node:fs';
import { z } from 'zod';
import { defineTool, descriptionBeside, READ_ONLY_ANNOTATIONS } from '../../core/define-tool.js';
import { ToolError } from '../../core/errors.js';
import { ProcessTable, type ProcRecord } from '../../exec/processes.js';
import { statusOf } from '../process-list/process-list.js';

export function findProcess(session: Parameters<typeof ProcessTable.of>[0], id: string): ProcRecord {
  const p = ProcessTable.of(session).get(id);
  if (!p || !p.background) throw new ToolError('NotFound', `No background process "${id}" in this session; process_list shows the ids.`);
  return p;
}

function readFrom(file: string, offset: number, max: number): Buffer {
  let fd: number;
  try { fd = openSync(file, 'r'); } catch { return Buffer.alloc(0); }
  try {
    const buf = Buffer.alloc(max);
    const n = readSync(fd, buf, 0, max, offset);
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

export const processOutputTool = defineTool({
  name: 'process_output',
  version: '1.0.0',
  title: 'Read background process output',
  description: descriptionBeside(import.meta.url),
  input: z.strictObject({
    id: z.string().min(1).describe('The id run_command returned.'),
    offset: z.number().int().min(0).default(0).describe('Byte offset to read from: the next_offset of the previous call.'),
    wait_ms: z.number().int().min(0).max(60_000).default(0).describe('Wait up to this long for new output or the exit.'),
  }),
  output: z.object({
    id: z.string(),
    status: z.enum(['running', 'exited', 'killed']),
    exit_code: z.number().int().nullable(),
    signal: z.string().nullable(),
    output: z.string(),
    offset: z.number().int(),
    next_offset: z.number().int(),
    total_bytes: z.number().int(),
    more: z.boolean().describe('True when more output than returned is already available.'),
  }),
  risk: 'medium',
  permissions: ['proc.exec'],
  side_effects: 'none',
  annotations: READ_ONLY_ANNOTATIONS,
  plan(args, ctx) {
    findProcess(ctx.session, args.id);
    return { targets: [], summary: `read the output of ${args.id} from byte ${args.offset}` };
  },
  async execute(args, _plan, ctx) {
    const p = findProcess(ctx.session, args.id);
    if (args.wait_ms > 0 && !p.exit && p.capture.bytes <= args.offset) {
      await new Promise<void>((resolve) => {
        const done = () => { clearTimeout(t); p.waiters.delete(done); ctx.signal.removeEventListener('abort', done); resolve(); };
        const t = setTimeout(done, args.wait_ms);
        p.waiters.add(done);
        ctx.signal.addEventListener('abort', done, { once: true });
      });
    }
    const total = p.capture.bytes;
    const buf = args.offset < total ? readFrom(p.file!, args.offset, Math.min(ctx.limits.output_bytes, total - args.offset)) : Buffer.alloc(0);
    // Never split a UTF-8 character: stop before an incomplete one at the end.
    let end = buf.length;
    if (end > 0 && args.offset + end < total) {
      let k = end - 1;
      while (k > 0 && (buf[k]! & 0xc0) === 0x80) k--;
      const lead = buf[k]!;
      const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
      if (end - k < need) end = k;
    }
    const output = buf.subarray(0, end).toString('utf8');
    const next = args.offset + end;
    const status = statusOf(p);
    return {
      data: { id: p.id, status, exit_code: p.exit?.exit_code ?? null, signal: p.exit?.signal ?? null, output, offset: args.offset, next_offset: next, total_bytes: total, more: next < total },
      text: `${p.id} is ${status}${p.exit ? ` (exit ${p.exit.exit_code ?? p.exit.signal})` : ''}; ${end} new bytes${next < total ? `, more from offset ${next}` : ''}.`,
      status: next < total ? 'partial' : 'ok',
    };
  },
});
