import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, RootsListChangedNotificationSchema,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import { toCallToolResult } from '../core/envelope.js';
import { runCall } from '../core/pipeline.js';
import type { Runtime } from '../core/runtime.js';
import type { Session } from '../core/session.js';
import { isPlainObject, isProgressToken } from './batch.js';
import { SessionRoots } from './session-roots.js';
import { VERSION } from '../version.js';

export interface McpSession {
  server: Server;
  /** For a transport that can answer tools/call itself (stdio). */
  fastPath: FastPath;
  roots: SessionRoots;
  session: Session;
  /** graceMs: let calls in flight finish for that long before they are cancelled (default: cancel now). */
  close(opts?: { graceMs?: number }): Promise<void>;
}

/** The tools/list entry: MCP fields, plus toolgate's own in _meta. */
export function listEntry(t: Runtime['tools'] extends ReadonlyMap<string, infer T> ? T : never) {
  return {
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: t.inputJsonSchema as { type: 'object' },
    outputSchema: t.outputJsonSchema as { type: 'object' },
    annotations: { title: t.title, ...t.annotations },
    _meta: {
      'toolgate/version': t.version,
      'toolgate/risk': t.risk,
      'toolgate/permissions': t.permissions,
      'toolgate/side_effects': t.side_effects,
    },
  };
}

interface CallParams { name: string; arguments?: Record<string, unknown>; _meta?: { progressToken?: string | number } & Record<string, unknown> }
interface CallCtx {
  signal: AbortSignal;
  /** The controller behind `signal`, when the caller lets the call abort it directly. */
  ctrl?: AbortController;
  requestId: string | number;
  sessionId?: string;
  sendNotification: (n: { method: string; params: Record<string, unknown> }) => Promise<void>;
}

/** Answers a message itself (true) or leaves it to the SDK (false); `send` writes to the client. */
export type FastPath = (msg: JSONRPCMessage, send: (m: JSONRPCMessage) => Promise<void>) => boolean;

/**
 * The params of a tools/call the fast path takes: what the SDK's CallToolRequestSchema accepts,
 * narrowed to the plain case (no task, a well-typed progress token). Anything else: undefined,
 * and the SDK handles it (and words its errors).
 */
export function fastCallParams(p: unknown): CallParams | undefined {
  if (!isPlainObject(p) || typeof p.name !== 'string' || 'task' in p) return undefined;
  if (p.arguments !== undefined && !isPlainObject(p.arguments)) return undefined;
  if (p._meta !== undefined && (!isPlainObject(p._meta) || !isProgressToken(p._meta.progressToken))) return undefined;
  return p as unknown as CallParams;
}

function progressFor(token: string | number | undefined, send: CallCtx['sendNotification']) {
  let n = 0;
  return (message: string, progress?: number, total?: number) => {
    if (token === undefined) return;
    n = progress ?? n + 1;
    send({ method: 'notifications/progress', params: { progressToken: token, progress: n, ...(total !== undefined ? { total } : {}), message } })
      .catch(() => {});
  };
}

/** One MCP server object per client connection (stdio: one; HTTP: one per session). */
export function createMcpSession(rt: Runtime, ceiling: string[] | null, sessionId?: string): McpSession {
  const server = new Server(
    { name: 'toolgate', version: VERSION, title: 'toolgate' },
    {
      capabilities: { tools: { listChanged: true }, logging: {} },
      instructions: 'toolgate gives controlled access to a workspace folder. Paths are relative to the workspace root. Read a file before you change it. Every result is an envelope: check ok, and follow error.message when it is false.',
    },
  );
  const roots = new SessionRoots(rt, ceiling);
  const session = roots.session;
  if (sessionId) (session as { id: string }).id = sessionId;

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: rt.listed().map(listEntry) }));

  // Calls under way, so that closing the session cancels them and waits for their audit records.
  const inflight = new Set<{ ctrl: AbortController; done: Promise<unknown> }>();

  /** One tools/call, from the SDK's dispatch or from the stdio fast path: the same pipeline, the same result. */
  const handleCall = async (params: CallParams, ctx: CallCtx) => {
    // The fast path hands over a controller of its own; the SDK's signal is linked to a new one.
    const own = ctx.ctrl;
    const ctrl = own ?? new AbortController();
    const onAbort = () => ctrl.abort(ctx.signal.reason);
    if (!own) {
      if (ctx.signal.aborted) ctrl.abort(ctx.signal.reason);
      else ctx.signal.addEventListener('abort', onAbort, { once: true });
    }
    const call = runCall(rt, roots, params.name, params.arguments ?? {}, {
      signal: ctrl.signal, ctrl,
      progress: progressFor(params._meta?.progressToken, ctx.sendNotification),
      notify: async (level, data) => { await server.sendLoggingMessage({ level, logger: 'toolgate', data }, ctx.sessionId).catch(() => {}); },
      meta: params._meta as Record<string, unknown> | undefined,
      requestId: ctx.requestId,
    });
    const entry = { ctrl, done: call.catch(() => {}) };
    inflight.add(entry);
    try {
      const outcome = await call;
      return toCallToolResult(outcome.envelope, outcome.content, rt.policy.data.limits);
    } finally {
      inflight.delete(entry);
      if (!own) ctx.signal.removeEventListener('abort', onAbort);
    }
  };

  server.setRequestHandler(CallToolRequestSchema, (req, extra) => handleCall(req.params as CallParams, {
    signal: extra.signal, requestId: extra.requestId, sessionId: extra.sessionId,
    sendNotification: (n) => extra.sendNotification(n as never),
  }));

  // The stdio fast path: a well-formed tools/call is answered here without the SDK's dispatch,
  // which parses every request twice and every result once with zod (a third of a small read's
  // server time). Anything it does not recognise goes the SDK's way, errors included.
  const fastCalls = new Map<string | number, { ctrl: AbortController; cancelled: boolean }>();
  const fastPath: FastPath = (msg, send) => {
    if (!initialized || !('method' in msg)) return false;
    if (msg.method === 'notifications/cancelled' && !('id' in msg)) {
      const id = (msg.params as { requestId?: unknown } | undefined)?.requestId;
      const call = typeof id === 'string' || typeof id === 'number' ? fastCalls.get(id) : undefined;
      if (call) { call.cancelled = true; call.ctrl.abort((msg.params as { reason?: unknown }).reason ?? 'cancelled'); }
      return false;
    }
    if (msg.method !== 'tools/call' || !('id' in msg)) return false;
    const id = (msg as { id: unknown }).id;
    if ((typeof id !== 'string' && !Number.isSafeInteger(id)) || fastCalls.has(id as string | number)) return false;
    const params = fastCallParams(msg.params);
    if (!params) return false;
    const call = { ctrl: new AbortController(), cancelled: false };
    fastCalls.set(id as string | number, call);
    // A request the client cancelled gets no answer (as the SDK does); one cut by close() does.
    handleCall(params, {
      signal: call.ctrl.signal, ctrl: call.ctrl, requestId: id as string | number,
      sendNotification: (n) => send({ jsonrpc: '2.0', ...n } as JSONRPCMessage),
    }).then(
      (result) => { if (!call.cancelled) return send({ jsonrpc: '2.0', id, result } as unknown as JSONRPCMessage); },
      (e: unknown) => { if (!call.cancelled) return send({ jsonrpc: '2.0', id, error: { code: ErrorCode.InternalError, message: (e as Error)?.message ?? 'Internal error' } } as unknown as JSONRPCMessage); },
    ).catch(() => {}).finally(() => fastCalls.delete(id as string | number));
    return true;
  };

  // Upstream tools come and go (an upstream connects, restarts, is trusted): tell the client.
  let initialized = false;
  const unsubscribe = rt.onToolsChanged(() => { if (initialized) void server.sendToolListChanged().catch(() => {}); });

  server.oninitialized = () => {
    initialized = true;
    const caps = server.getClientCapabilities();
    if (caps?.sampling) {
      session.sample = (params, opts) => server.createMessage(params as never, { signal: opts.signal, relatedRequestId: opts.relatedRequestId, timeout: rt.policy.data.approvals.timeout_ms });
    }
    if (caps?.roots) {
      const fetchRoots = async () => (await server.listRoots(undefined, { timeout: 10_000 })).roots.map((r) => r.uri);
      roots.refresh(fetchRoots);
      if (caps.roots.listChanged) {
        server.setNotificationHandler(RootsListChangedNotificationSchema, async () => roots.refresh(fetchRoots));
      }
    }
    const el = caps?.elicitation as { form?: object; url?: object } | undefined;
    if (el && (el.form || !el.url)) {
      session.elicit = async (req, opts) => {
        const tick = opts.onTick ? setInterval(opts.onTick, 10_000) : undefined;
        try {
          const res = await server.elicitInput(
            { mode: 'form', message: req.message, requestedSchema: req.requestedSchema as never },
            { signal: opts.signal, timeout: opts.timeoutMs, relatedRequestId: opts.relatedRequestId },
          );
          return { action: res.action, content: res.content as Record<string, unknown> | undefined };
        } finally {
          if (tick) clearInterval(tick);
        }
      };
    } else if (el?.url) {
      // URL mode only (spec 2025-11-25): the client opens the console's page for the request;
      // the answer itself comes through the inbox, from a browser holding the console cookie.
      session.elicitUrl = async (req, opts) => {
        const res = await server.elicitInput(
          { mode: 'url', message: req.message, url: req.url, elicitationId: req.elicitationId },
          { signal: opts.signal, timeout: opts.timeoutMs, relatedRequestId: opts.relatedRequestId },
        );
        return { action: res.action, content: res.content as Record<string, unknown> | undefined };
      };
    }
  };

  return {
    server, fastPath, roots, session,
    async close(opts: { graceMs?: number } = {}) {
      const settle = (ms: number) => Promise.race([
        Promise.allSettled([...inflight].map((c) => c.done)),
        new Promise((r) => setTimeout(r, ms).unref()),
      ]);
      // A client that sent its requests and closed its end still gets its answers (bounded).
      if (opts.graceMs && inflight.size > 0) await settle(opts.graceMs);
      // Cancel what is still running and let each call finish its audit record (bounded wait).
      for (const c of inflight) c.ctrl.abort(new Error('session closed'));
      await settle(5000);
      unsubscribe();
      await session.dispose();
      await server.close().catch(() => {});
    },
  };
}
