import { z } from 'zod';
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { jsonSchema, type AnyTool } from '../core/define-tool.js';
import { envelopeSchema } from '../core/envelope.js';
import type { ToolError } from '../core/errors.js';
import type { Annotations, Plan, Risk, ToolContext, ToolResult } from '../core/types.js';

/** MCP tool-name rule (spec 2025-11-25): 1-128 of [A-Za-z0-9_.-]. */
export const MCP_TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

export function listedName(upstream: string, tool: string): string {
  return `${upstream}__${tool}`;
}

/**
 * Risk from the upstream's annotations (SPEC §12). Annotations of an untrusted server are only
 * hints: they can make a tool look safer than it is, so a rule or `defaults` in the policy is
 * the real control — the risk only picks the default decision when no rule covers the tool.
 */
export function riskFromAnnotations(a: McpTool['annotations']): Risk {
  if (a?.destructiveHint === true || a?.openWorldHint === true) return 'high';
  if (a?.readOnlyHint === true) return 'low';
  return 'medium';
}

/** The four hints with MCP's own defaults where the upstream said nothing. */
function annotationsOf(a: McpTool['annotations']): Annotations {
  const readOnly = a?.readOnlyHint ?? false;
  return {
    readOnlyHint: readOnly,
    destructiveHint: a?.destructiveHint ?? !readOnly,
    idempotentHint: a?.idempotentHint ?? false,
    openWorldHint: a?.openWorldHint ?? true,
  };
}

const upstreamData = z.unknown();
const ENVELOPE = envelopeSchema(upstreamData);
let outputJson: Record<string, unknown> | undefined;
function envelopeJson(): Record<string, unknown> {
  return (outputJson ??= jsonSchema(ENVELOPE, 'output'));
}

/** The upstream's input schema, made strict: unknown keys are refused unless it explicitly allows them. */
export function strictInputSchema(schema: McpTool['inputSchema']): Record<string, unknown> {
  const s = { ...(schema as Record<string, unknown>) };
  if (s.additionalProperties === undefined) s.additionalProperties = false;
  return s;
}

/** Nodes of an input schema with its `$ref`s expanded (each recursion cut once): past this, not mounted. */
export const MAX_SCHEMA_NODES = 20_000;

/**
 * Throws when the schema, its local `$ref`s expanded, is larger than MAX_SCHEMA_NODES: a few
 * `$defs` that each refer twice to the previous one are a small text but an exponential
 * validator — one call would hold toolgate's event loop (and every other tool) for minutes.
 */
export function checkSchemaSize(schema: unknown, max = MAX_SCHEMA_NODES): void {
  let n = 0;
  const resolve = (ref: string): unknown => {
    if (!ref.startsWith('#')) return undefined;
    let cur: unknown = schema;
    for (const part of ref.slice(1).split('/').filter(Boolean)) {
      const key = decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~');
      cur = cur && typeof cur === 'object' && Object.hasOwn(cur, key) ? (cur as Record<string, unknown>)[key] : undefined;
    }
    return cur;
  };
  const walk = (v: unknown, refs: ReadonlySet<string>): void => {
    if (++n > max) throw new Error(`the schema is too complex (more than ${max} parts with its $refs expanded)`);
    if (!v || typeof v !== 'object') return;
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if (k === '$ref' && typeof x === 'string') {
        if (!refs.has(x)) walk(resolve(x), new Set([...refs, x]));
      } else walk(x, refs);
    }
  };
  walk(schema, new Set());
}

export interface UpstreamCaller {
  /** Throws IOError when the upstream is not ready (starting, restarting, failed). */
  ensureReady(): void;
  call(tool: string, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult<unknown>>;
}

/**
 * An upstream tool as a toolgate tool: the same pipeline (validation, gate, approval, deadline,
 * envelope, audit) runs it. Its plan is tool-level: the gate judges the listed name.
 * Throws when the upstream's input schema cannot be turned into a validator (then it is not mounted).
 */
export function makeUpstreamTool(upstream: string, t: McpTool, caller: UpstreamCaller, opts: { timeout_ms?: number; refusal?: () => ToolError | undefined }): AnyTool {
  const inputJson = strictInputSchema(t.inputSchema);
  checkSchemaSize(inputJson);
  const input = z.fromJSONSchema(inputJson as never) as unknown as z.ZodObject;
  const name = listedName(upstream, t.name);
  const risk = riskFromAnnotations(t.annotations);
  const description = `[upstream MCP server "${upstream}"] ${t.description ?? t.title ?? t.name}`;
  return {
    name, version: '1.0.0', title: t.title ?? t.annotations?.title ?? `${upstream}: ${t.name}`, description,
    input, output: upstreamData, envelope: ENVELOPE,
    inputJsonSchema: inputJson, get outputJsonSchema() { return envelopeJson(); },
    risk, permissions: ['upstream'], side_effects: `whatever tool "${t.name}" of the upstream MCP server "${upstream}" does`,
    annotations: annotationsOf(t.annotations),
    timeout_ms: opts.timeout_ms,
    refusal: opts.refusal,
    // Tool-level plan: no state looked at before the gate (whether the upstream is up is
    // checked when the call runs, after the gate and any approval).
    plan(): Plan {
      return { targets: [], summary: `call tool "${t.name}" of upstream MCP server "${upstream}"` };
    },
    execute(args: Record<string, unknown>, _plan: Plan, ctx: ToolContext) {
      return caller.call(t.name, args, ctx);
    },
  };
}
