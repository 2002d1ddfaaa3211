import { ToolError } from '../../core/errors.js';

const MAX_LIMIT = 100_000;

function lineNumber(name: string, v: unknown): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) {
    throw new ToolError('InvalidArguments', `read_file: ${name} must be a whole line number, 1 or more (got ${JSON.stringify(v)}).`, { details: { issues: [{ path: name, message: 'expected an integer >= 1' }] } });
  }
  return v;
}

/**
 * The seeds' read_file(start_line, end_line) — both 1-based and inclusive — as offset/limit:
 * offset = start_line (1 when only end_line is given), limit = end_line − offset + 1
 * (the default limit when only start_line is given). Mixing both styles is refused.
 */
export function lineRangeArgs(args: Record<string, unknown>, warnings: string[]): Record<string, unknown> {
  if (!('start_line' in args) && !('end_line' in args)) return args;
  const { start_line, end_line, ...rest } = args;
  if ('offset' in rest || 'limit' in rest) {
    throw new ToolError('InvalidArguments', 'read_file: pass either offset/limit or start_line/end_line, not both.', { details: { issues: [{ path: 'start_line', message: 'given with offset/limit' }] } });
  }
  const start = lineNumber('start_line', start_line);
  const end = lineNumber('end_line', end_line);
  if (start === undefined && end === undefined) return rest;
  const offset = start ?? 1;
  if (end !== undefined && end < offset) {
    throw new ToolError('InvalidArguments', `read_file: end_line (${end}) is before start_line (${offset}); both are 1-based and inclusive.`, { details: { issues: [{ path: 'end_line', message: 'before start_line' }] } });
  }
  const out: Record<string, unknown> = { ...rest, offset };
  if (end !== undefined) {
    const limit = end - offset + 1;
    if (limit > MAX_LIMIT) throw new ToolError('InvalidArguments', `read_file: lines ${offset}–${end} are more than ${MAX_LIMIT} lines; read them in parts.`, { details: { issues: [{ path: 'end_line', message: `more than ${MAX_LIMIT} lines` }] } });
    out.limit = limit;
  }
  warnings.push(`start_line/end_line were taken as offset ${offset}${out.limit !== undefined ? `, limit ${out.limit}` : ''} (lines ${offset}–${end ?? 'on'})`);
  return out;
}
