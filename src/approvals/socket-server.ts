import { chmodSync, rmSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Inbox } from './inbox.js';
import type { PeerVerdict } from './peer.js';
import { ensurePrivateDir } from './private-fs.js';

export interface SocketHandlers {
  inbox: Inbox;
  /** A fresh one-time console login URL (for `toolgate console`), or null when the console is off. */
  consoleLogin(): string | null;
  /** Who is on the other end (peer.ts): an answer or a console login is given only to a person's process. */
  judgePeer?(conn: net.Socket): Promise<PeerVerdict>;
  /** A refused sender, for the log. */
  refused?(op: string, message: string): void;
}

/** The requests that change something or hand out the console's secret: their sender is checked. */
const GUARDED = new Set(['answer', 'console']);

const MAX_REQUEST = 64 * 1024;

type Request = { op?: unknown; id?: unknown; decision?: unknown } | null;

/** Answers one request (a JSON line, parsed): list, answer, console. */
function handleSocketRequest(h: SocketHandlers, req: Request): unknown {
  if (req?.op === 'list') return { ok: true, pid: process.pid, pending: h.inbox.pending() };
  if (req?.op === 'answer') return h.inbox.answer(String(req.id), req.decision, 'cli');
  if (req?.op === 'console') {
    const url = h.consoleLogin();
    return url ? { ok: true, url } : { ok: false, reason: 'off', message: 'this server runs with --console off' };
  }
  return { ok: false, reason: 'invalid', message: 'unknown op' };
}

async function reply(h: SocketHandlers, conn: net.Socket, line: string): Promise<unknown> {
  let req: Request;
  try {
    req = JSON.parse(line) as Request;
  } catch {
    return { ok: false, reason: 'invalid', message: 'not JSON' };
  }
  const op = req?.op;
  if (typeof op === 'string' && GUARDED.has(op) && h.judgePeer) {
    const v = await h.judgePeer(conn);
    if (!v.ok) {
      h.refused?.(op, v.message);
      return { ok: false, reason: 'refused', message: v.message };
    }
  }
  return handleSocketRequest(h, req);
}

/**
 * The channel `toolgate approvals` talks to: a Unix socket (0600) in the private runtime
 * directory (0700), which no tool can reach (denied path, masked in the sandbox).
 */
export async function listenSocket(file: string, h: SocketHandlers): Promise<net.Server> {
  ensurePrivateDir(path.dirname(file));
  rmSync(file, { force: true });
  const server = net.createServer((conn) => {
    let buf = '';
    conn.setEncoding('utf8');
    conn.setTimeout(10_000, () => conn.destroy());
    let taken = false;
    conn.on('data', (chunk: string) => {
      if (taken) return; // one request per connection; reading goes on so that its end is seen
      buf += chunk;
      if (buf.length > MAX_REQUEST) { conn.destroy(); return; }
      const nl = buf.indexOf('\n');
      if (nl < 0) return;
      const line = buf.slice(0, nl);
      taken = true;
      void reply(h, conn, line).then((r) => { if (!conn.destroyed) conn.end(JSON.stringify(r) + '\n'); }, () => conn.destroy());
    });
    conn.on('error', () => {});
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(file, () => { server.off('error', reject); resolve(); });
  });
  chmodSync(file, 0o600);
  server.unref();
  return server;
}

/** Sends one request to a server's socket and returns its JSON reply. */
export function askSocket(file: string, req: unknown, timeoutMs = 5_000): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const conn = net.createConnection(file);
    let buf = '';
    const timer = setTimeout(() => { conn.destroy(); reject(new Error('no reply from the server')); }, timeoutMs);
    conn.setEncoding('utf8');
    conn.on('connect', () => conn.write(JSON.stringify(req) + '\n'));
    conn.on('data', (c: string) => { buf += c; });
    conn.on('end', () => {
      clearTimeout(timer);
      try { resolve(JSON.parse(buf) as Record<string, unknown>); } catch { reject(new Error('bad reply from the server')); }
    });
    conn.on('error', (e) => { clearTimeout(timer); reject(e); });
  });
}
