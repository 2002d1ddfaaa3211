import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { McpSession } from './mcp-server.js';

export interface HttpSession<T extends Transport = Transport> {
  id: string;
  kind: 'streamable' | 'sse';
  transport: T;
  mcp: McpSession;
  lastActive: number;
  /** JSON-RPC requests from the client not answered yet (tools/call in flight, …). */
  pending: Set<string | number>;
}

/**
 * The live HTTP sessions of one server: each has its own MCP server object and toolgate
 * Session (reads, grants, background processes, audit session_id). Idle ones are closed.
 */
export class SessionRegistry {
  private readonly sessions = new Map<string, HttpSession>();
  private sweeper?: NodeJS.Timeout;

  constructor(private readonly log: Logger, readonly idleMs: number, readonly maxSessions: number) {}

  get size(): number { return this.sessions.size; }
  get(id: string): HttpSession | undefined { return this.sessions.get(id); }
  all(): HttpSession[] { return [...this.sessions.values()]; }
  pendingCount(): number { return this.all().reduce((n, s) => n + s.pending.size, 0); }

  /**
   * Tracks activity and in-flight requests by wrapping the transport: must run before
   * server.connect(transport), which chains onto the handlers already set.
   */
  track<T extends Transport>(entry: HttpSession<T>): HttpSession<T> {
    const t = entry.transport;
    const touch = () => { entry.lastActive = Date.now(); };
    t.onmessage = (msg: JSONRPCMessage) => {
      touch();
      if ('method' in msg && 'id' in msg && msg.id !== undefined) entry.pending.add(msg.id);
      // A cancelled request gets no response: stop waiting for it.
      if ('method' in msg && msg.method === 'notifications/cancelled') entry.pending.delete((msg.params as { requestId?: string | number } | undefined)?.requestId ?? '');
    };
    const send = t.send.bind(t);
    t.send = async (msg, opts) => {
      touch();
      if (!('method' in msg) && 'id' in msg && msg.id !== undefined) entry.pending.delete(msg.id);
      return send(msg, opts);
    };
    t.onclose = () => { void this.close(entry.id, 'transport closed'); };
    this.sessions.set(entry.id, entry as HttpSession);
    return entry;
  }

  touch(id: string): void {
    const s = this.sessions.get(id);
    if (s) s.lastActive = Date.now();
  }

  /** Closes one session: its MCP server, its transport, and its background processes. */
  async close(id: string, why: string): Promise<void> {
    const s = this.sessions.get(id);
    if (!s) return;
    this.sessions.delete(id);
    this.log.info({ session: id, kind: s.kind, why }, 'session closed');
    await s.mcp.close().catch((e: unknown) => this.log.warn({ err: e, session: id }, 'closing session failed'));
  }

  /** Closes sessions with no request in flight and no traffic for idleMs. */
  async sweep(now = Date.now()): Promise<number> {
    const idle = this.all().filter((s) => s.pending.size === 0 && now - s.lastActive >= this.idleMs);
    await Promise.all(idle.map((s) => this.close(s.id, `idle for ${Math.round((now - s.lastActive) / 1000)} s`)));
    return idle.length;
  }

  startSweeping(): void {
    const every = Math.max(1_000, Math.min(60_000, Math.floor(this.idleMs / 2)));
    this.sweeper = setInterval(() => { void this.sweep(); }, every);
    this.sweeper.unref();
  }

  stopSweeping(): void {
    if (this.sweeper) clearInterval(this.sweeper);
  }

  async closeAll(why: string): Promise<void> {
    await Promise.all(this.all().map((s) => this.close(s.id, why)));
  }
}
