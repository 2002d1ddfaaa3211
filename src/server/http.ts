import { randomUUID } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { UsageError } from '../cli/setup.js';
import type { Runtime } from '../core/runtime.js';
import { BodyError, readJsonBody } from './http-body.js';
import { allowedHostHeaders, bearerCheck, hostAllowed, isLoopbackHost, newToken, originAllowed } from './http-guard.js';
import { SessionRegistry } from './http-sessions.js';
import { createMcpSession } from './mcp-server.js';
import { BatchingSseTransport } from './sse-transport.js';

export interface HttpOptions {
  host: string;
  port: number;
  /** Bearer token every request must carry. Default: $TOOLGATE_TOKEN; on loopback, generated when unset. */
  token?: string;
  /** Request body cap (default $TOOLGATE_HTTP_MAX_BODY or 4 MiB); 413 beyond. */
  maxBodyBytes?: number;
  /** A session with no traffic for this long is closed (default $TOOLGATE_HTTP_IDLE_MS or 30 min). */
  idleMs?: number;
  /** At most this many live sessions (default $TOOLGATE_HTTP_MAX_SESSIONS or 200); 503 beyond. */
  maxSessions?: number;
  /** Origins allowed besides loopback ones (default $TOOLGATE_ALLOWED_ORIGINS, comma-separated). */
  allowedOrigins?: string[];
  /** Host header values allowed besides the bound host and loopback names ($TOOLGATE_ALLOWED_HOSTS). */
  allowedHosts?: string[];
  /** On shutdown, how long in-flight calls may take to finish before they are cancelled (default 10 s). */
  shutdownGraceMs?: number;
}

export interface HttpServerHandle {
  url: string;
  port: number;
  token: string;
  sessions: SessionRegistry;
  /** Stop accepting, let in-flight calls finish (or cancel them after the grace time), close sessions, flush the audit. */
  close(why?: string): Promise<void>;
}

const envList = (v: string | undefined) => (v ? v.split(',').map((s) => s.trim()).filter(Boolean) : []);
const envNum = (v: string | undefined, dflt: number) => {
  const n = Number(v);
  return v !== undefined && v !== '' && Number.isFinite(n) && n > 0 ? n : dflt;
};

/** Options from the environment, for `toolgate serve --transport http`. */
export function httpOptionsFromEnv(base: { host: string; port: number }, env: NodeJS.ProcessEnv = process.env): HttpOptions {
  return {
    ...base,
    token: env.TOOLGATE_TOKEN || undefined,
    maxBodyBytes: envNum(env.TOOLGATE_HTTP_MAX_BODY, 4 * 1024 * 1024),
    idleMs: envNum(env.TOOLGATE_HTTP_IDLE_MS, 30 * 60_000),
    maxSessions: envNum(env.TOOLGATE_HTTP_MAX_SESSIONS, 200),
    allowedOrigins: envList(env.TOOLGATE_ALLOWED_ORIGINS),
    allowedHosts: envList(env.TOOLGATE_ALLOWED_HOSTS),
    shutdownGraceMs: envNum(env.TOOLGATE_HTTP_SHUTDOWN_MS, 10_000),
  };
}

function sendJsonRpcError(res: ServerResponse, status: number, message: string, code = -32000): void {
  if (res.headersSent) { res.end(); return; }
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

function refuse(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  // Close the connection: node would otherwise keep reading an unread (maybe endless) body to
  // keep it alive, so a client without the token could hold sockets open indefinitely.
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', connection: 'close', ...headers });
  res.end(`${message}\n`, () => res.socket?.destroySoon?.());
}

/**
 * Starts Streamable HTTP (/mcp) and legacy HTTP+SSE (GET /sse, POST /messages) on one
 * node:http server. Every request: Host and Origin checked (403), bearer token checked (401).
 * Each MCP session gets its own createMcpSession: reads, grants, elicitation, audit session_id.
 */
export async function startHttpServer(rt: Runtime, ceiling: string[] | null, opts: HttpOptions): Promise<HttpServerHandle> {
  const loopback = isLoopbackHost(opts.host);
  let token = opts.token;
  if (!token) {
    if (!loopback) throw new UsageError(`refusing to serve HTTP on ${opts.host} without a token: set TOOLGATE_TOKEN (a long random string)`);
    token = newToken();
    process.stderr.write(`toolgate: TOOLGATE_TOKEN is not set; this run's token is ${token}\n`);
  } else if (token.length < 16) {
    rt.log.warn('TOOLGATE_TOKEN is shorter than 16 characters; use a long random string');
  }
  const authorized = bearerCheck(token);
  const maxBody = opts.maxBodyBytes ?? 4 * 1024 * 1024;
  const sessions = new SessionRegistry(rt.log, opts.idleMs ?? 30 * 60_000, opts.maxSessions ?? 200);
  const allowedOrigins = opts.allowedOrigins ?? [];
  let allowedHosts = new Set<string>();
  let closing = false;

  const newSessionRoom = (res: ServerResponse): boolean => {
    if (closing) { sendJsonRpcError(res, 503, 'Server is shutting down'); return false; }
    if (sessions.size >= sessions.maxSessions) { sendJsonRpcError(res, 503, `Too many sessions (${sessions.maxSessions}); close one or try later`); return false; }
    return true;
  };

  async function streamable(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const sid = req.headers['mcp-session-id'];
    const body = req.method === 'POST' ? await readJsonBody(req, maxBody) : undefined;
    if (typeof sid === 'string') {
      const s = sessions.get(sid);
      if (!s || s.kind !== 'streamable') { sendJsonRpcError(res, 404, 'Session not found; start a new session with initialize', -32001); return; }
      sessions.touch(sid);
      await (s.transport as StreamableHTTPServerTransport).handleRequest(req, res, body);
      return;
    }
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      sendJsonRpcError(res, 400, 'Bad Request: no Mcp-Session-Id header; the first request of a session must be initialize');
      return;
    }
    if (!newSessionRoom(res)) return;
    const id = randomUUID();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => id, maxRequestBodySize: maxBody });
    const mcp = createMcpSession(rt, ceiling, id);
    sessions.track({ id, kind: 'streamable', transport, mcp, lastActive: Date.now(), pending: new Set() });
    await mcp.server.connect(transport);
    await transport.handleRequest(req, res, body);
    // The SDK refused the initialize (406, 400…): the client never learnt the id, so the slot
    // would otherwise stay taken until the idle sweep.
    if (transport.sessionId === undefined || res.statusCode >= 400) {
      await sessions.close(id, `initialize refused (${res.statusCode})`);
      return;
    }
    rt.log.info({ session: id }, 'streamable HTTP session opened');
  }

  async function legacySse(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    if (url.pathname === '/sse') {
      if (req.method !== 'GET') { refuse(res, 405, 'GET /sse opens the event stream', { allow: 'GET' }); return; }
      if (!newSessionRoom(res)) return;
      const transport = new BatchingSseTransport('/messages', res); // + JSON-RPC batches
      const id = transport.sessionId;
      const mcp = createMcpSession(rt, ceiling, id);
      sessions.track({ id, kind: 'sse', transport, mcp, lastActive: Date.now(), pending: new Set() });
      await mcp.server.connect(transport);
      rt.log.info({ session: id }, 'SSE session opened');
      return;
    }
    if (req.method !== 'POST') { refuse(res, 405, 'POST /messages?sessionId=… carries client messages', { allow: 'POST' }); return; }
    const sid = url.searchParams.get('sessionId') ?? '';
    const s = sessions.get(sid);
    if (!s || s.kind !== 'sse') { refuse(res, 404, 'Session not found; open GET /sse first'); return; }
    const body = await readJsonBody(req, maxBody);
    sessions.touch(sid);
    await (s.transport as SSEServerTransport).handlePostMessage(req, res, body);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // DNS rebinding: the Host must be ours, the Origin (when a browser sends one) local or listed.
    if (!hostAllowed(req, allowedHosts)) { refuse(res, 403, 'Forbidden: Host header not allowed'); return; }
    if (!originAllowed(req, allowedOrigins)) { refuse(res, 403, 'Forbidden: Origin not allowed'); return; }
    if (!authorized(req)) {
      refuse(res, 401, 'Unauthorized: send Authorization: Bearer $TOOLGATE_TOKEN', { 'www-authenticate': 'Bearer realm="toolgate"' });
      return;
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/mcp') {
      if (!['GET', 'POST', 'DELETE'].includes(req.method ?? '')) { refuse(res, 405, 'Use POST, GET or DELETE on /mcp', { allow: 'GET, POST, DELETE' }); return; }
      await streamable(req, res);
    } else if (url.pathname === '/sse' || url.pathname === '/messages') {
      await legacySse(req, res, url);
    } else {
      refuse(res, 404, 'Not found: MCP is served on /mcp (Streamable HTTP) and /sse + /messages (legacy SSE)');
    }
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (e instanceof BodyError) {
        if (!res.headersSent) res.setHeader('connection', 'close');
        sendJsonRpcError(res, e.status, e.message, e.status === 400 ? -32700 : -32600);
        return;
      }
      rt.log.error({ err: e, url: req.url }, 'HTTP request failed');
      sendJsonRpcError(res, 500, 'Internal server error', -32603);
    });
  });
  server.requestTimeout = 0; // tool calls and SSE streams may be long; idle sessions are swept instead
  server.maxConnections = Number(process.env.TOOLGATE_HTTP_MAX_CONNECTIONS ?? 512);
  server.headersTimeout = 30_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => { server.off('error', reject); resolve(); });
  });
  const port = (server.address() as AddressInfo).port;
  allowedHosts = allowedHostHeaders(opts.host, port, opts.allowedHosts);
  sessions.startSweeping();
  const shownHost = opts.host.includes(':') ? `[${opts.host}]` : opts.host;

  let closed: Promise<void> | undefined;
  const close = (why = 'shutdown') => (closed ??= (async () => {
    closing = true;
    rt.log.info({ why, sessions: sessions.size, in_flight: sessions.pendingCount() }, 'HTTP server shutting down');
    server.close();
    server.closeIdleConnections();
    sessions.stopSweeping();
    const grace = Date.now() + (opts.shutdownGraceMs ?? 10_000);
    while (sessions.pendingCount() > 0 && Date.now() < grace) await new Promise((r) => setTimeout(r, 50));
    const cancelled = sessions.pendingCount();
    await sessions.closeAll(why); // aborts what is still running; kills background processes
    // Let cancelled calls write their audit records before the writers close.
    if (cancelled > 0) await new Promise((r) => setTimeout(r, 250));
    server.closeAllConnections();
    rt.close();
  })());

  return { url: `http://${shownHost}:${port}`, port, token, sessions, close };
}

/** `toolgate serve --transport http`: start, announce on stderr, and shut down cleanly on SIGINT/SIGTERM. */
export async function serveHttp(rt: Runtime, ceiling: string[] | null, base: { host: string; port: number }): Promise<HttpServerHandle> {
  if (!Number.isInteger(base.port) || base.port < 0 || base.port > 65535) throw new UsageError(`--port must be a number from 0 to 65535`);
  const h = await startHttpServer(rt, ceiling, httpOptionsFromEnv(base));
  const shutdown = (sig: string) => {
    void h.close(sig).then(() => process.exit(0), () => process.exit(1));
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.stderr.write(`toolgate: listening on ${h.url}/mcp (Streamable HTTP) and ${h.url}/sse (legacy SSE)\n`);
  rt.log.info({ url: h.url, roots: ceiling, policy: rt.policy.origin, profile: rt.policy.profile, mode: rt.policy.mode }, 'toolgate serving on HTTP');
  return h;
}
