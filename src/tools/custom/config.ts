import { z } from 'zod';

/** The small JSON-Schema subset a custom tool's argument may use. */
const argSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('string'),
    description: z.string().optional(),
    pattern: z.string().optional(),
    enum: z.array(z.string()).min(1).optional(),
    maxLength: z.number().int().nonnegative().optional(),
    default: z.string().optional(),
  }),
  z.strictObject({
    type: z.literal('integer'),
    description: z.string().optional(),
    minimum: z.number().int().optional(),
    maximum: z.number().int().optional(),
    default: z.number().int().optional(),
  }),
  z.strictObject({
    type: z.literal('boolean'),
    description: z.string().optional(),
    default: z.boolean().optional(),
  }),
]);

export type CustomArg = z.output<typeof argSchema>;

/** A custom tool (SPEC §12): a fixed argv run without a shell, `{name}` placeholders filled by validated args. */
export const customToolSchema = z.strictObject({
  title: z.string().min(1).optional(),
  description: z.string().min(1),
  argv: z.array(z.string()).min(1),
  args: z.record(z.string().regex(/^[a-z][a-z0-9_]{0,39}$/, 'an argument name is lower-case letters, digits and "_"'), argSchema).default({}),
  risk: z.enum(['low', 'medium', 'high']).default('medium'),
  timeout_ms: z.number().int().positive().max(24 * 3600_000).optional(),
  /** Working directory relative to the first workspace root (default: the root). */
  cwd: z.string().min(1).optional(),
});

export const customToolsSchema = z.record(
  z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'a custom tool name is snake_case: lower-case letters, digits and "_", starting with a letter'),
  customToolSchema,
).default({});

export type CustomToolConfig = z.output<typeof customToolSchema>;
