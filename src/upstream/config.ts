import { z } from 'zod';

/** An upstream's name becomes the prefix of its tools (`<name>__<tool>`): short, and no `__` inside. */
export const UPSTREAM_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,38}[A-Za-z0-9.-])?$/;

const stringMap = z.record(z.string().min(1), z.string());

/** One other MCP server mounted behind the gate (SPEC §12). Exactly one of `command` or `url`. */
export const upstreamSchema = z.strictObject({
  /** stdio: the argv of the server (no shell); or a program name, with `args` (the mcpServers shape). */
  command: z.union([z.array(z.string().min(1)).min(1), z.string().min(1).transform((c) => [c])]).optional(),
  /** stdio: more argv words after `command`, as client configs (mcpServers) write them. */
  args: z.array(z.string()).optional(),
  /** stdio: environment; values may hold `${env:NAME}`. Only these (and PATH, HOME, LANG…) pass. */
  env: stringMap.default({}),
  /** stdio: working directory. */
  cwd: z.string().min(1).optional(),
  /** remote: Streamable HTTP endpoint (falls back to SSE). */
  url: z.string().url().optional(),
  /** remote: request headers; values may hold `${env:NAME}`. */
  headers: stringMap.default({}),
  /** Globs over the upstream's own tool names: only these are mounted (default: all). */
  tools: z.array(z.string().min(1)).min(1).optional(),
  /** Let this upstream ask the client's model for completions (sampling/createMessage). Off: declined. */
  sampling: z.boolean().default(false),
  /** Time limit of one call to this upstream (default: limits.timeout_ms). */
  timeout_ms: z.number().int().positive().max(24 * 3600_000).optional(),
}).refine((u) => (u.command ? 1 : 0) + (u.url ? 1 : 0) === 1, { message: 'an upstream takes exactly one of command (stdio) or url (remote)' })
  .refine((u) => !(u.args && !u.command), { message: 'args go with command (stdio)' })
  .refine((u) => !(u.url && (u.cwd || Object.keys(u.env).length)), { message: 'env and cwd are for stdio upstreams (command); a url upstream takes headers' })
  .refine((u) => !(u.command && Object.keys(u.headers).length), { message: 'headers are for url upstreams; a command upstream takes env' });

export const upstreamsSchema = z.record(
  z.string().regex(UPSTREAM_NAME, 'an upstream name is 1-40 letters, digits, "_", "." or "-", starting with a letter or digit and not ending with "_" (upstream "a_" tool "x" and upstream "a" tool "_x" would both be listed as a___x)').refine((n) => !n.includes('__'), 'an upstream name cannot contain "__" (it separates the upstream from the tool name)'),
  upstreamSchema,
).default({});

export type UpstreamConfig = z.output<typeof upstreamSchema>;

/** The full argv of a stdio upstream. */
export function upstreamArgv(cfg: UpstreamConfig): string[] {
  return [...(cfg.command ?? []), ...(cfg.args ?? [])];
}

/**
 * Replaces `${env:NAME}` with the server's environment variable NAME. A missing variable is an
 * error (a header or token silently empty would be worse), named so the user can set it.
 */
export function expandEnvRefs(value: string, env: NodeJS.ProcessEnv, where: string): string {
  return value.replace(/\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
    const v = env[name];
    if (v === undefined) throw new Error(`${where} names \${env:${name}}, which is not set in toolgate's environment`);
    return v;
  });
}
