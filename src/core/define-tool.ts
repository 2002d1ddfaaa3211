import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { compactSchema } from './compact-schema.js';
import { envelopeSchema } from './envelope.js';
import type { ToolError } from './errors.js';
import type { ToolSpec } from './types.js';
import { prebuiltSchemas, schemaKey, type ToolJsonSchemas } from './tool-schemas.js';

export interface Tool<I extends z.ZodObject = z.ZodObject, D = unknown> extends ToolSpec<I, D> {
  /** JSON Schema of the arguments (additionalProperties: false). */
  inputJsonSchema: Record<string, unknown>;
  /** JSON Schema of structuredContent: the whole envelope with this tool's data. */
  outputJsonSchema: Record<string, unknown>;
  envelope: ReturnType<typeof envelopeSchema>;
  /** When it returns an error, the tool is not listed and every call is refused with it, before the gate. */
  refusal?: () => ToolError | undefined;
}

export type AnyTool = Tool<z.ZodObject, any>;

/** Annotations of a tool that only looks: spread into the spec of list_dir, glob, grep, read_file, … */
export const READ_ONLY_ANNOTATIONS = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

/** Risk, permission and annotations of a tool that only reads files (list_dir, glob, grep, read_file). */
export const FILE_READER: Pick<ToolSpec<z.ZodObject, unknown>, 'risk' | 'permissions' | 'annotations'> = { risk: 'low', permissions: ['fs.read'], annotations: READ_ONLY_ANNOTATIONS };

/** zod's draft-07 JSON Schema of `schema`, without `$schema`, in fewer nodes of the same meaning (compactSchema). */
export function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const s = z.toJSONSchema(schema, { target: 'draft-7', io, unrepresentable: 'any' }) as Record<string, unknown>;
  delete s.$schema;
  return compactSchema(s) as Record<string, unknown>;
}

/** A tool's JSON Schemas, derived from its zod schemas (the build stores these for the built-ins). */
export function computeJsonSchemas(input: z.ZodObject, envelope: z.ZodType): ToolJsonSchemas {
  const inputJson = jsonSchema(input, 'input');
  inputJson.additionalProperties = false;
  return { input: inputJson, output: jsonSchema(envelope, 'output') };
}

/**
 * The one place a tool is assembled: its schemas are derived here once, so the
 * schema a client sees and the one the pipeline validates with cannot drift.
 */
export function defineTool<I extends z.ZodObject, D>(spec: ToolSpec<I, D>): Tool<I, D> {
  if (!/^[a-z][a-z0-9_]{0,63}$/.test(spec.name)) throw new Error(`bad tool name ${spec.name}`);
  if (!/^\d+\.\d+\.\d+$/.test(spec.version)) throw new Error(`bad version for ${spec.name}`);
  const envelope = envelopeSchema(spec.output);
  const json = prebuiltSchemas(schemaKey(spec.name, spec.version)) ?? computeJsonSchemas(spec.input, envelope);
  return { ...spec, envelope, inputJsonSchema: json.input, outputJsonSchema: json.output };
}

/** Reads the model-facing description that sits beside a tool's module (description.md). */
export function descriptionBeside(moduleUrl: string, file = 'description.md'): string {
  return readFileSync(fileURLToPath(new URL(file, moduleUrl)), 'utf8').trim();
}
