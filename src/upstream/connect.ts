import { accessSync, constants } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ChildProcess } from 'node:child_process';
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { redactString, REDACTED } from '../audit/redact.js';
import { cappedFetch } from './capped-fetch.js';
import { VERSION } from '../version.js';
import { expandEnvRefs, upstreamArgv, type UpstreamConfig } from './config.js';
import { withoutChannel } from '../exec/inherited-fds.js';
import { findInPath } from '../exec/direct.js';
import { safePath } from '../exec/env.js';

/**
 * The longest message (one JSON-RPC line) an upstream may send. The SDK's reader keeps
 * growing its buffer until a newline arrives, so an upstream that never ends a line would eat
 * toolgate's memory; past this size a stdio upstream is closed (and restarted with back-off),
 * an HTTP upstream's response (or SSE line) is dropped and its request fails (capped-fetch.ts).
 */
export const UPSTREAM_MAX_LINE_BYTES = 16 * 1024 * 1024;

export interface Connected {
  client: Client;
  transport: Transport;
  /** 'stdio' | 'streamable-http' | 'sse' */
  kind: string;
}

/**
 * The environment of a stdio upstream: the SDK's short safe list (PATH, HOME, LANG, TERM,
 * USER, …) plus exactly what the policy names, with `${env:NAME}` expanded. Nothing else of
 * toolgate's own environment (tokens!) reaches the upstream.
 */
export function upstreamEnv(name: string, cfg: UpstreamConfig, env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = { ...getDefaultEnvironment() };
  for (const [k, v] of Object.entries(cfg.env)) out[k] = expandEnvRefs(v, env, `upstreams.${name}.env.${k}`);
  return out;
}

export function upstreamHeaders(name: string, cfg: UpstreamConfig, env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(cfg.headers)) out[k] = expandEnvRefs(v, env, `upstreams.${name}.headers.${k}`);
  return out;
}

/** What toolgate declares to an upstream: form elicitation (routed to the calling client), sampling only when allowed. */
export function clientCapabilities(cfg: UpstreamConfig) {
  return { elicitation: { form: {} }, ...(cfg.sampling ? { sampling: {} } : {}) };
}

/**
 * Opens one connection: stdio (stderr into toolgate's log, never stdout), or Streamable HTTP
 * falling back to SSE. `setup` installs the request handlers on the client before it connects.
 */
export async function connectUpstream(name: string, cfg: UpstreamConfig, opts: { env: NodeJS.ProcessEnv; log: Logger; timeoutMs: number; setup: (c: Client) => void; maxLineBytes?: number }): Promise<Connected> {
  const make = () => {
    const c = new Client({ name: 'toolgate', version: VERSION }, { capabilities: clientCapabilities(cfg) });
    opts.setup(c);
    return c;
  };
  const withTimeout = async <T>(p: Promise<T>, what: string): Promise<T> => {
    let t: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([p, new Promise<never>((_, rej) => { t = setTimeout(() => rej(new Error(`${what} took longer than ${opts.timeoutMs} ms`)), opts.timeoutMs); })]);
    } finally { clearTimeout(t); }
  };
  if (cfg.command) {
    const [program, ...programArgs] = upstreamArgv(cfg);
    const upEnv = upstreamEnv(name, cfg, opts.env);
    // The server starts it outside any sandbox: PATH without its relative entries (node_modules/.bin
    // names the upstream's folder, often the workspace a command writes), for the name here and for
    // the upstream's own lookups (npx is `#!/usr/bin/env node`).
    if (upEnv.PATH !== undefined) upEnv.PATH = safePath(upEnv.PATH, []);
    const found = program!.includes('/') ? program! : findInPath(program!, upEnv.PATH ?? '');
    if (found === null) throw Object.assign(new Error(`spawn ${program} ENOENT (not found in PATH; relative PATH entries are not searched: give the program's absolute path)`), { code: 'ENOENT' });
    // Started through bash (below), a program that cannot be run would only show as a closed connection.
    try { accessSync(found, constants.X_OK); } catch (e) {
      throw Object.assign(new Error(`spawn ${found} ${(e as NodeJS.ErrnoException).code ?? 'EACCES'} (not executable: check the path and its mode)`), { code: (e as NodeJS.ErrnoException).code ?? 'EACCES' });
    }
    // The SDK sets the child's stdio: a server IPC channel it would inherit is closed by bash first,
    // which also marks it (src/exec/mark.ts): what it starts cannot answer approvals.
    const { command, args, env } = withoutChannel(found, programArgs, upEnv, { mark: true });
    const transport = new StdioClientTransport({ command, args, env, cwd: cfg.cwd, stderr: 'pipe' });
    pipeStderr(transport, name, opts.log, secretValues(cfg, opts.env));
    capLineSize(transport, name, opts.log, opts.maxLineBytes ?? UPSTREAM_MAX_LINE_BYTES);
    const client = make();
    try {
      await withTimeout(client.connect(transport), 'starting and initializing');
    } catch (e) {
      await transport.close().catch(() => {});
      throw e;
    }
    return { client, transport, kind: 'stdio' };
  }
  const url = new URL(cfg.url!);
  const requestInit = { headers: upstreamHeaders(name, cfg, opts.env) };
  const capped = cappedFetch(opts.maxLineBytes ?? UPSTREAM_MAX_LINE_BYTES, `upstream ${name}`);
  const first = make();
  const http = new StreamableHTTPClientTransport(url, { requestInit, fetch: capped });
  try {
    await withTimeout(first.connect(http), 'connecting (Streamable HTTP)');
    return { client: first, transport: http, kind: 'streamable-http' };
  } catch (e) {
    await http.close().catch(() => {});
    opts.log.info({ upstream: name, err: (e as Error).message }, 'Streamable HTTP failed; trying SSE');
  }
  const client = make();
  const sse = new SSEClientTransport(url, { requestInit, fetch: capped });
  try {
    await withTimeout(client.connect(sse), 'connecting (SSE)');
  } catch (e) {
    await sse.close().catch(() => {});
    throw e;
  }
  return { client, transport: sse, kind: 'sse' };
}

/** The values the policy hands the upstream from toolgate's environment (`${env:NAME}`): secrets by definition. */
export function secretValues(cfg: UpstreamConfig, env: NodeJS.ProcessEnv): string[] {
  const out = new Set<string>();
  for (const v of [...Object.values(cfg.env), ...Object.values(cfg.headers)]) {
    for (const m of v.matchAll(/\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g)) {
      const x = env[m[1]!];
      if (x && x.length >= 4) out.add(x);
    }
  }
  return [...out].sort((a, b) => b.length - a.length);
}

/** A line of the upstream's stderr as it may be logged: its secrets (named or credential-shaped) replaced. */
export function scrubLine(line: string, secrets: string[]): string {
  let out = line;
  for (const s of secrets) out = out.split(s).join(REDACTED);
  return redactString(out);
}

/**
 * Counts the bytes of the upstream's current line beside the SDK's own reader (installed right
 * after the SDK spawns the process) and closes the transport once a line passes `max` bytes:
 * the requests in flight fail, and the upstream's onclose restarts it.
 */
function capLineSize(t: StdioClientTransport, name: string, log: Logger, max: number): void {
  const start = t.start.bind(t);
  t.start = async () => {
    await start();
    const out = (t as unknown as { _process?: ChildProcess })._process?.stdout;
    if (!out) {
      log.warn({ upstream: name }, 'cannot watch the size of upstream messages (SDK internals changed)');
      return;
    }
    let line = 0;
    let tripped = false;
    out.on('data', (chunk: Buffer) => {
      if (tripped) return;
      const nl = chunk.lastIndexOf(10);
      line = nl >= 0 ? chunk.length - nl - 1 : line + chunk.length;
      if (line <= max) return;
      tripped = true;
      const msg = `upstream ${name} sent a message longer than ${max} bytes; closing it (it is restarted)`;
      log.warn({ upstream: name, max_line_bytes: max }, msg);
      // Stop reading at once: the SDK's close waits up to seconds for the process to exit, and its
      // reader would keep buffering whatever the upstream still sends meanwhile.
      out.destroy();
      (t as unknown as { _process?: ChildProcess })._process?.kill('SIGKILL');
      t.onerror?.(new Error(msg));
      void t.close();
    });
  };
}

function pipeStderr(t: StdioClientTransport, name: string, log: Logger, secrets: string[]): void {
  const stream = t.stderr;
  if (!stream) return;
  let buf = '';
  // An upstream that prints its configuration must not put its token into toolgate's log.
  const emit = (text: string) => log.info({ upstream: name, stderr: scrubLine(text, secrets).slice(0, 4000) }, 'upstream stderr');
  stream.on('data', (chunk: Buffer) => {
    buf += chunk.toString('utf8');
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).trimEnd();
      buf = buf.slice(nl + 1);
      if (line) emit(line.slice(0, 8000));
    }
    if (buf.length > 64 * 1024) { emit(buf.slice(0, 8000)); buf = ''; }
  });
}

/** Every tool of the upstream (following pagination), bounded. */
export async function listAllTools(client: Client, timeoutMs: number): Promise<McpTool[]> {
  const out: McpTool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const res = await client.listTools(cursor ? { cursor } : undefined, { timeout: timeoutMs });
    out.push(...res.tools);
    cursor = res.nextCursor;
    if (!cursor) break;
  }
  return out;
}
