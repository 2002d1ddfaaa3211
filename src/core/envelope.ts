import { z } from 'zod';
import { ERROR_CODES, type ErrorInfo } from './errors.js';
import type { ExtraContent, Status } from './types.js';
import { DEFAULT_TEXT_LIMITS, lessUsed, renderBody, renderDetails, type TextLimits } from './render.js';

export const errorSchema = z.object({
  code: z.enum(ERROR_CODES),
  message: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
});

export const artifactsSchema = z.object({
  files_changed: z.array(z.string()),
  commands_run: z.array(z.string()),
  storage_ref: z.string().optional(),
  sha256: z.string().optional(),
});

/** The result envelope of SPEC §3, with `data` typed by the tool. */
export function envelopeSchema(data: z.ZodType) {
  return z.object({
    tool_call_id: z.string(),
    trace_id: z.string(),
    tool: z.string(),
    version: z.string(),
    ok: z.boolean(),
    status: z.enum(['ok', 'partial', 'error']),
    data: data.nullable(),
    error: errorSchema.nullable(),
    text: z.string(),
    stats: z.record(z.string(), z.number()),
    artifacts: artifactsSchema,
    context: z.object({ cwd: z.string(), args: z.unknown() }),
    warnings: z.array(z.string()).optional(),
  });
}

export interface Envelope {
  tool_call_id: string;
  trace_id: string;
  tool: string;
  version: string;
  ok: boolean;
  status: Status;
  data: unknown;
  error: ErrorInfo | null;
  text: string;
  stats: Record<string, number>;
  artifacts: { files_changed: string[]; commands_run: string[]; storage_ref?: string; sha256?: string };
  context: { cwd: string; args: unknown };
  warnings?: string[];
}

/** MCP CallToolResult for an envelope: structuredContent, a readable text block, isError exactly when !ok. */
export function toCallToolResult(env: Envelope, extra: ExtraContent[] = [], limits?: TextLimits) {
  const lines = [env.error ? `[${env.error.code}] ${env.error.message}` : env.text];
  if (env.warnings?.length) lines.push(...env.warnings.map((w) => `warning: ${w}`));
  const details = renderDetails(env.error?.details);
  if (details) lines.push('', details);
  const saved = env.artifacts.storage_ref ? `(full output: ${env.artifacts.storage_ref}, sha256 ${env.artifacts.sha256})` : null;
  // The body gets what the rest of the text block leaves of the limits (SPEC §3 bounds the whole block).
  const rest = [...lines, '', ...(saved ? ['', saved] : [])].join('\n');
  const body = renderBody(env.data, lessUsed(limits ?? DEFAULT_TEXT_LIMITS, Buffer.byteLength(rest) + 1, rest.split('\n').length), !!saved);
  if (body) lines.push('', body);
  if (saved) lines.push('', saved);
  return {
    content: [{ type: 'text' as const, text: lines.join('\n') }, ...extra],
    structuredContent: env as unknown as Record<string, unknown>,
    isError: !env.ok,
  };
}
