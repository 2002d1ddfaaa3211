import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema, CreateMessageRequestSchema, ElicitRequestSchema, ErrorCode, McpError,
  ToolListChangedNotificationSchema, type CallToolResult, type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js';
import { statSync } from 'node:fs';
import picomatch from 'picomatch';
import type { Logger } from 'pino';
import type { AnyTool } from '../core/define-tool.js';
import { ToolError } from '../core/errors.js';
import { commandFailure } from '../core/circuit.js';
import type { Session } from '../core/session.js';
import type { ToolContext, ToolResult } from '../core/types.js';
import type { UpstreamConfig } from './config.js';
import { connectUpstream, listAllTools, type Connected } from './connect.js';
import { isPinned, judgePins, pinFile, pinHash, type PinVerdict } from './pins.js';
import { fromUpstreamResult } from './result.js';
import { listedName, makeUpstreamTool, MCP_TOOL_NAME } from './upstream-tool.js';

export type UpstreamState = 'starting' | 'ready' | 'restarting' | 'failed' | 'closed';

export interface UpstreamToolStatus {
  name: string;
  listed_as: string;
  pin: PinVerdict | 'unsupported';
  note?: string;
}

export interface UpstreamDeps {
  log: Logger;
  env: NodeJS.ProcessEnv;
  /** Default time limit of one call (policy limits.timeout_ms). */
  timeoutMs: number;
  /** Time limit of an answer to an elicitation the upstream forwards (policy approvals.timeout_ms). */
  elicitTimeoutMs: number;
  /** Publishes this upstream's tools (replacing the previous set). */
  publish(tools: AnyTool[]): void;
  /** Whether a tool is pending trust is re-read from the pin file on a refused call (trust given meanwhile). */
  connectTimeoutMs?: number;
  /** Restart back-off: first delay and cap. */
  backoff?: { firstMs: number; maxMs: number };
}

interface InFlight { session: Session; requestId?: string | number; signal: AbortSignal }

/**
 * One upstream MCP server: one connection shared by every session, restarted with back-off
 * when it fails to start, exits or stops answering. Its tools stay listed while it restarts
 * and refuse calls with IOError until it is back.
 */
export class Upstream {
  state: UpstreamState = 'starting';
  restarts = 0;
  lastError?: string;
  kind?: string;
  toolStatus: UpstreamToolStatus[] = [];
  private conn?: Connected;
  private attempt = 0;
  private timer?: NodeJS.Timeout;
  private pinTimer?: NodeJS.Timeout;
  private published: AnyTool[] = [];
  private readonly inflight = new Set<InFlight>();
  private readyWaiters: Array<() => void> = [];
  private closing = false;

  constructor(readonly name: string, readonly cfg: UpstreamConfig, private readonly deps: UpstreamDeps) {}

  /** Starts connecting; resolves when the first attempt is over (ready or failed), never throws. */
  start(): Promise<void> {
    return this.connect();
  }

  /** Resolves when the upstream is ready, or after ms. */
  whenReady(ms: number): Promise<boolean> {
    if (this.state === 'ready') return Promise.resolve(true);
    return new Promise((resolve) => {
      const t = setTimeout(() => { this.readyWaiters = this.readyWaiters.filter((w) => w !== done); resolve(false); }, ms);
      const done = () => { clearTimeout(t); resolve(true); };
      this.readyWaiters.push(done);
    });
  }

  private async connect(): Promise<void> {
    if (this.closing) return;
    try {
      const conn = await connectUpstream(this.name, this.cfg, {
        env: this.deps.env, log: this.deps.log, timeoutMs: this.deps.connectTimeoutMs ?? 30_000,
        setup: (c) => this.installHandlers(c),
      });
      if (this.closing) { await conn.client.close().catch(() => {}); return; }
      this.conn = conn;
      this.kind = conn.kind;
      // Chained after the SDK's own handlers: those fail the requests in flight when the connection goes.
      const sdkClose = conn.transport.onclose;
      const sdkError = conn.transport.onerror;
      conn.transport.onclose = () => { sdkClose?.(); this.lost('the connection closed (the server exited?)'); };
      conn.transport.onerror = (e) => { sdkError?.(e); this.deps.log.warn({ upstream: this.name, err: e.message }, 'upstream transport error'); };
      await this.refreshTools();
      this.state = 'ready';
      this.attempt = 0;
      this.lastError = undefined;
      this.deps.log.info({ upstream: this.name, transport: conn.kind, tools: this.toolStatus.length }, 'upstream ready');
      for (const w of this.readyWaiters.splice(0)) w();
    } catch (e) {
      const msg = (e as Error)?.message ?? String(e);
      this.deps.log.warn({ upstream: this.name, err: msg }, 'upstream failed to start');
      const c = this.conn;
      this.conn = undefined;
      if (c) await c.client.close().catch(() => {});
      this.scheduleRestart(msg);
    }
  }

  private lost(why: string): void {
    if (this.closing || !this.conn) return;
    this.conn = undefined;
    this.deps.log.warn({ upstream: this.name, why }, 'upstream lost; restarting');
    this.scheduleRestart(why);
  }

  private scheduleRestart(why: string): void {
    if (this.closing) return;
    this.lastError = why;
    this.state = this.toolStatus.length > 0 || this.restarts > 0 ? 'restarting' : 'failed';
    const { firstMs, maxMs } = this.deps.backoff ?? { firstMs: 500, maxMs: 30_000 };
    const delay = Math.min(maxMs, firstMs * 2 ** this.attempt);
    this.attempt++;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => { this.restarts++; void this.connect(); }, delay);
    this.timer.unref();
  }

  ensureReady(): void {
    if (this.state === 'ready' && this.conn) return;
    const what = this.state === 'starting' ? 'is starting' : this.state === 'closed' ? 'is shut down' : this.state === 'failed' ? 'failed to start and is being retried' : 'is restarting';
    // Not a failure of this call: the upstream has its own back-off, so the session's circuit breaker does not count it.
    throw commandFailure(new ToolError('IOError', `upstream ${this.name} ${what}${this.lastError ? ` (last error: ${this.lastError})` : ''}; try again in a few seconds, or use another tool.`,
      { details: { upstream: this.name, state: this.state, restarts: this.restarts } }));
  }

  private async refreshTools(): Promise<void> {
    const conn = this.conn!;
    const raw = await listAllTools(conn.client, 15_000);
    const wanted = this.cfg.tools ? picomatch(this.cfg.tools) : () => true;
    const mounted = raw.filter((t) => wanted(t.name));
    // A name listed twice has no one pin: the second copy could change unseen behind the first.
    const seen = new Map<string, number>();
    for (const t of mounted) seen.set(t.name, (seen.get(t.name) ?? 0) + 1);
    const hashes: Record<string, string> = Object.create(null);
    for (const t of mounted) if (seen.get(t.name) === 1) hashes[t.name] = pinHash(t);
    const { verdicts, reason } = judgePins(this.name, hashes, this.deps.env);
    const tools: AnyTool[] = [];
    const status: UpstreamToolStatus[] = [];
    for (const t of mounted) {
      const listed = listedName(this.name, t.name);
      if (!MCP_TOOL_NAME.test(listed)) {
        status.push({ name: t.name, listed_as: listed, pin: 'unsupported', note: 'the listed name breaks the MCP name rule (1-128 of A-Z a-z 0-9 _ . -)' });
        continue;
      }
      if (seen.get(t.name)! > 1) {
        if (!status.some((x) => x.name === t.name)) status.push({ name: t.name, listed_as: listed, pin: 'unsupported', note: 'the upstream lists this name more than once' });
        continue;
      }
      const verdict = verdicts[t.name]!;
      try {
        tools.push(this.toolFor(t, verdict, hashes[t.name]!, reason));
        status.push({ name: t.name, listed_as: listed, pin: verdict });
      } catch (e) {
        this.deps.log.warn({ upstream: this.name, tool: t.name, err: (e as Error).message }, 'upstream tool not mounted: its input schema is not supported');
        status.push({ name: t.name, listed_as: listed, pin: 'unsupported', note: `input schema not supported: ${(e as Error).message}` });
      }
    }
    this.toolStatus = status;
    this.published = tools;
    this.deps.publish(tools);
    this.watchPins(status.some((t) => t.pin === 'changed' || t.pin === 'new' || t.pin === 'corrupt'));
  }

  /** While a tool waits for trust, the pin file is checked every 2 s: `toolgate upstream trust` shows up without a restart. */
  private watchPins(pending: boolean): void {
    clearInterval(this.pinTimer);
    this.pinTimer = undefined;
    if (!pending || this.closing) return;
    const file = pinFile(this.name, this.deps.env);
    const stamp = () => { try { return statSync(file).mtimeMs; } catch { return 0; } };
    let last = stamp();
    this.pinTimer = setInterval(() => {
      const now = stamp();
      if (now === last || !this.conn) return;
      last = now;
      void this.refreshTools().catch((e) => this.deps.log.warn({ upstream: this.name, err: (e as Error).message }, 'relisting after trust failed'));
    }, 2000);
    this.pinTimer.unref();
  }

  private toolFor(t: McpTool, verdict: PinVerdict, hash: string, reason?: string): AnyTool {
    let trusted = verdict === 'trusted';
    const refusal = () => {
      if (trusted) return undefined;
      return new ToolError('ToolNotAllowed',
        `${listedName(this.name, t.name)} ${verdict === 'new' ? 'is new on upstream ' + this.name + ' and was not approved' : verdict === 'corrupt' ? `cannot be checked (${reason})` : 'changed since it was approved'}: run \`toolgate upstream trust ${this.name}\` after checking it, then call it again.`,
        { details: { upstream: this.name, tool: t.name, pin: verdict, rule: `upstream pin: ${verdict === 'corrupt' ? 'pin file corrupt' : `${verdict} since approved`}` } });
    };
    const caller = { ensureReady: () => this.ensureReady(), call: (tool: string, args: Record<string, unknown>, ctx: ToolContext) => this.call(tool, args, ctx) };
    const tool = makeUpstreamTool(this.name, t, caller, { timeout_ms: this.cfg.timeout_ms, refusal });
    if (!trusted) {
      // Trust given meanwhile (`toolgate upstream trust`) is seen at the next call.
      const first = tool.refusal!;
      tool.refusal = () => {
        if (!trusted && isPinned(this.name, t.name, hash, this.deps.env)) {
          trusted = true;
          const st = this.toolStatus.find((x) => x.name === t.name);
          if (st) st.pin = 'trusted';
          // Same tools, published again: what is listed is computed afresh, and clients are told.
          this.deps.publish(this.published);
        }
        return first();
      };
    }
    return tool;
  }

  async call(tool: string, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult<unknown>> {
    this.ensureReady();
    const conn = this.conn!;
    const entry: InFlight = { session: ctx.session, signal: ctx.signal, requestId: ctx.requestId };
    this.inflight.add(entry);
    const limit = this.cfg.timeout_ms ?? this.deps.timeoutMs;
    let res: CallToolResult;
    // MCP wants progress to increase, and a message is a status line: an upstream that goes
    // backwards or sends megabytes per notification is not passed through as such.
    let lastProgress = -Infinity;
    const onprogress = (p: { progress: number; total?: number; message?: string }) => {
      if (!(p.progress > lastProgress)) return;
      lastProgress = p.progress;
      const msg = p.message ?? `${this.name}/${tool}: ${p.progress}${p.total ? `/${p.total}` : ''}`;
      ctx.progress(msg.length > 500 ? `${msg.slice(0, 500)}…` : msg, p.progress, p.total);
    };
    try {
      res = await conn.client.callTool({ name: tool, arguments: args }, CallToolResultSchema, {
        signal: ctx.signal,
        // toolgate's own deadline stops the call; the SDK's must not fire first.
        timeout: limit + 5000,
        onprogress,
      }) as CallToolResult;
    } catch (e) {
      if (ctx.signal.aborted) {
        if (String(ctx.signal.reason?.message ?? '').includes('timeout')) void this.healthCheck();
        throw e;
      }
      if (e instanceof McpError && e.code === ErrorCode.RequestTimeout) { void this.healthCheck(); throw new ToolError('Timeout', `upstream ${this.name} did not answer ${tool} in time.`); }
      // A remote upstream that went away shows no "close": check that it still answers.
      void this.healthCheck();
      throw new ToolError('IOError', `upstream ${this.name} failed on ${tool}: ${(e as Error)?.message ?? String(e)}`, { details: { upstream: this.name, tool } });
    } finally {
      this.inflight.delete(entry);
    }
    return fromUpstreamResult(this.name, tool, res, ctx);
  }

  /** After a time-out: a server that does not answer a ping within 5 s is hung, and restarted. */
  private async healthCheck(): Promise<void> {
    const conn = this.conn;
    if (!conn) return;
    try {
      await conn.client.ping({ timeout: 5000 });
    } catch {
      if (this.conn !== conn) return;
      this.deps.log.warn({ upstream: this.name }, 'upstream does not answer ping: restarting it');
      this.conn = undefined;
      await conn.client.close().catch(() => {});
      this.scheduleRestart('it stopped answering (hung)');
    }
  }

  private installHandlers(c: Client): void {
    c.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      if (this.conn?.client === c) await this.refreshTools().catch((e) => this.deps.log.warn({ upstream: this.name, err: (e as Error).message }, 'relisting upstream tools failed'));
    });
    // Form elicitation is forwarded to the client whose call is in flight, shown as coming from
    // this upstream; declined when that is not one session, or its client cannot answer.
    c.setRequestHandler(ElicitRequestSchema, async (req) => {
      const p = req.params as { mode?: string; message: string; requestedSchema?: Record<string, unknown> };
      const sessions = new Set([...this.inflight].map((f) => f.session));
      const only = sessions.size === 1 ? [...this.inflight][0] : undefined;
      if ((p.mode && p.mode !== 'form') || !only || !only.session.elicit || !p.requestedSchema) {
        this.deps.log.info({ upstream: this.name, sessions: sessions.size }, 'upstream elicitation declined');
        return { action: 'decline' as const };
      }
      const res = await only.session.elicit(
        { message: `[upstream MCP server "${this.name}" asks] ${p.message}`, requestedSchema: p.requestedSchema },
        { signal: only.signal, timeoutMs: this.deps.elicitTimeoutMs, relatedRequestId: only.requestId },
      );
      return res.content ? { action: res.action, content: res.content as Record<string, string | number | boolean | string[]> } : { action: res.action };
    });
    // Sampling is declared (and handled) only when the policy sets `sampling: true` for this
    // upstream; otherwise the SDK answers "method not found" and the upstream sees it declined.
    if (!this.cfg.sampling) return;
    c.setRequestHandler(CreateMessageRequestSchema, async (req) => {
      const sessions = new Set([...this.inflight].map((f) => f.session));
      const only = sessions.size === 1 ? [...this.inflight][0] : undefined;
      if (!only?.session.sample) throw new McpError(ErrorCode.InvalidRequest, `toolgate cannot route this sampling request: ${only ? 'the client does not support sampling' : 'no single call of this upstream is in flight'}`);
      return await only.session.sample(req.params as Record<string, unknown>, { signal: only.signal, relatedRequestId: only.requestId }) as never;
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    this.state = 'closed';
    clearTimeout(this.timer);
    clearInterval(this.pinTimer);
    const c = this.conn;
    this.conn = undefined;
    if (!c) return;
    // toolgate may exit right after this: the server process must not outlive it (no orphans).
    const pid = (c.transport as { pid?: number | null }).pid;
    if (pid) { try { process.kill(pid, 'SIGTERM'); } catch { /* already gone */ } }
    await c.client.close().catch(() => {});
  }
}
