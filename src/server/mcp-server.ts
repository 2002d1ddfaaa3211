import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema, ListToolsRequestSchema, RootsListChangedNotificationSchema,
  type ServerNotification, type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { toCallToolResult } from '../core/envelope.js';
import { runCall } from '../core/pipeline.js';
import type { Runtime } from '../core/runtime.js';
import type { Session } from '../core/session.js';
import { SessionRoots } from './session-roots.js';
import { VERSION } from '../version.js';

export interface McpSession {
  server: Server;
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

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

function progressFor(extra: Extra) {
  const token = extra._meta?.progressToken;
  let n = 0;
  return (message: string, progress?: number, total?: number) => {
    if (token === undefined) return;
    n = progress ?? n + 1;
    extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: n, ...(total !== undefined ? { total } : {}), message } })
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

  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const ctrl = new AbortController();
    const onAbort = () => ctrl.abort(extra.signal.reason);
    if (extra.signal.aborted) ctrl.abort(extra.signal.reason);
    else extra.signal.addEventListener('abort', onAbort, { once: true });
    const call = runCall(rt, roots, req.params.name, req.params.arguments ?? {}, {
      signal: ctrl.signal,
      progress: progressFor(extra),
      notify: async (level, data) => { await server.sendLoggingMessage({ level, logger: 'toolgate', data }, extra.sessionId).catch(() => {}); },
      meta: req.params._meta as Record<string, unknown> | undefined,
      requestId: extra.requestId,
    });
    const entry = { ctrl, done: call.catch(() => {}) };
    inflight.add(entry);
    try {
      const outcome = await call;
      return toCallToolResult(outcome.envelope, outcome.content);
    } finally {
      inflight.delete(entry);
      extra.signal.removeEventListener('abort', onAbort);
    }
  });

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
    server, roots, session,
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
