import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { verifyAudit } from '../audit/verify.js';
import type { GrantStore } from '../approvals/grant-store.js';
import type { Inbox } from '../approvals/inbox.js';
import type { PeerVerdict } from '../approvals/peer.js';
import { ConsoleAuth } from './auth.js';
import type { CallLog } from './calls.js';
import { APP_CSS, APP_JS, appPage, loginPage } from './page.js';

export interface ConsoleDeps {
  inbox: Inbox;
  grants: GrantStore;
  calls: CallLog;
  /** The workspace roots whose stored grants are shown. */
  roots: () => string[];
  /** The audit files of this process. */
  auditFiles: () => string[];
  onCallEvent: (fn: () => void) => () => void;
  /** Who is on the other end of an answer (src/approvals/peer.ts): only a person's process answers. */
  judgePeer?: (sock: Socket) => Promise<PeerVerdict>;
}

export interface ConsoleServer {
  port: number;
  /** The address without any secret. */
  url(path?: string): string;
  /** A fresh one-time login URL (to show to the person only). */
  loginUrl(next?: string): string;
  close(): Promise<void>;
}

const SECURITY_HEADERS = {
  'Content-Security-Policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

const MAX_BODY = 16 * 1024;

function send(res: http.ServerResponse, status: number, body: string, type = 'text/plain; charset=utf-8', extra: Record<string, string> = {}): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': type, ...extra });
  res.end(body);
}

function readBody(req: http.IncomingMessage): Promise<string | null> {
  return new Promise((resolve) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) { resolve(null); req.destroy(); return; }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(null));
  });
}

const safeNext = (n: string | null | undefined) => (n && /^\/(r\/[0-9a-f]{1,32})?$/.test(n) ? n : '/');

/**
 * The console: a local page (127.0.0.1 only) with the pending approvals, the calls of this
 * process, the audit chain's state and the stored grants. Reached through a one-time secret
 * exchanged for an HttpOnly SameSite=Strict cookie; every request must name this host and port
 * (DNS rebinding), every change must come from this origin with the session's CSRF token.
 */
export async function startConsole(deps: ConsoleDeps, port = 0): Promise<ConsoleServer> {
  let actualPort = 0;
  let auth!: ConsoleAuth;
  const hosts = () => new Set([`127.0.0.1:${actualPort}`, `localhost:${actualPort}`]);
  const origins = () => new Set([`http://127.0.0.1:${actualPort}`, `http://localhost:${actualPort}`]);
  const sse = new Set<http.ServerResponse>();
  const push = () => { for (const r of sse) r.write('event: changed\ndata: {}\n\n'); };
  const offInbox = deps.inbox.onChange(push);
  const offCalls = deps.onCallEvent(push);

  const state = async () => {
    const audits = await Promise.all(deps.auditFiles().map(async (file) => {
      try { return { file, ...(await verifyAudit(file)) }; } catch (e) { return { file, ok: false, records: 0, problem: (e as Error).message }; }
    }));
    const grants = deps.roots().map((root) => {
      const r = deps.grants.load(root);
      return { root, grants: r.grants, warning: r.warning ?? null };
    });
    return { pid: process.pid, pending: deps.inbox.pending(), calls: deps.calls.all(), audits, grants };
  };

  const login = (res: http.ServerResponse, secret: unknown, next: string) => {
    const cookie = auth.exchange(secret);
    if (!cookie) { send(res, 403, loginPage('That secret is not valid (each one works once). Run `toolgate console` for a new one.'), 'text/html; charset=utf-8'); return; }
    send(res, 303, '', 'text/plain', {
      'Set-Cookie': `${auth.cookieName}=${cookie}; HttpOnly; SameSite=Strict; Path=/`,
      Location: next,
    });
  };

  const server = http.createServer(async (req, res) => {
    try {
      // DNS rebinding: a page on evil.example resolving to 127.0.0.1 still sends its own Host.
      if (!hosts().has(String(req.headers.host ?? ''))) return send(res, 421, 'wrong Host');
      const origin = req.headers.origin;
      if (origin !== undefined && !origins().has(origin)) return send(res, 403, 'wrong Origin');
      const fetchSite = req.headers['sec-fetch-site'];
      if (typeof fetchSite === 'string' && !['same-origin', 'none'].includes(fetchSite) && req.method !== 'GET') return send(res, 403, 'cross-site request');
      const url = new URL(req.url ?? '/', `http://127.0.0.1:${actualPort}`);
      const p = url.pathname;
      const method = req.method ?? 'GET';

      if (p === '/app.js' && method === 'GET') return send(res, 200, APP_JS, 'text/javascript; charset=utf-8');
      if (p === '/app.css' && method === 'GET') return send(res, 200, APP_CSS, 'text/css; charset=utf-8');
      if (p === '/login') {
        if (method === 'GET') return login(res, url.searchParams.get('s'), safeNext(url.searchParams.get('next')));
        if (method === 'POST') {
          if (origin === undefined) return send(res, 403, 'missing Origin');
          if (!String(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) return send(res, 415, 'form expected');
          const body = await readBody(req);
          if (body === null) return send(res, 413, 'too large');
          const form = new URLSearchParams(body);
          return login(res, form.get('secret'), safeNext(form.get('next')));
        }
        return send(res, 405, 'method not allowed', 'text/plain', { Allow: 'GET, POST' });
      }

      const sess = auth.session(req.headers.cookie);
      if (p === '/' || /^\/r\/[0-9a-f]{1,32}$/.test(p)) {
        if (method !== 'GET') return send(res, 405, 'method not allowed', 'text/plain', { Allow: 'GET' });
        return send(res, 200, sess ? appPage() : loginPage(null, p), 'text/html; charset=utf-8');
      }
      if (!p.startsWith('/api/')) return send(res, 404, 'not found');
      if (!sess) return send(res, 401, JSON.stringify({ error: 'no console session: open the URL toolgate printed, or run `toolgate console`' }), 'application/json');

      if (p === '/api/state') {
        if (method !== 'GET') return send(res, 405, 'method not allowed');
        return send(res, 200, JSON.stringify({ ...(await state()), csrf: sess.csrf }), 'application/json');
      }
      if (p === '/api/events') {
        if (method !== 'GET') return send(res, 405, 'method not allowed');
        res.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': 'text/event-stream', Connection: 'keep-alive' });
        res.write('retry: 2000\n\n');
        sse.add(res);
        const ping = setInterval(() => res.write(': ping\n\n'), 15_000);
        req.on('close', () => { clearInterval(ping); sse.delete(res); });
        return;
      }
      if (p === '/api/answer' || p === '/api/revoke') {
        if (method !== 'POST') return send(res, 405, 'method not allowed', 'text/plain', { Allow: 'POST' });
        if (origin === undefined) return send(res, 403, 'missing Origin');
        // Exactly JSON: a text/plain or form body (what a cross-site form can send) is refused.
        if (String(req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase() !== 'application/json') return send(res, 415, 'application/json expected');
        if (!auth.checkCsrf(sess, req.headers['x-csrf-token'])) return send(res, 403, 'missing or wrong CSRF token');
        const body = await readBody(req);
        let data: Record<string, unknown>;
        try { data = JSON.parse(body ?? '') as Record<string, unknown>; } catch { return send(res, 400, 'bad JSON'); }
        if (!data || typeof data !== 'object' || Array.isArray(data)) return send(res, 400, 'a JSON object expected');
        if (p === '/api/answer') {
          const v = deps.judgePeer ? await deps.judgePeer(req.socket) : null;
          if (v && !v.ok) return send(res, 403, JSON.stringify({ ok: false, reason: 'refused', message: v.message }), 'application/json');
          const r = deps.inbox.answer(String(data.id), data.decision, 'console');
          return send(res, r.ok ? 200 : r.reason === 'invalid' ? 400 : 409, JSON.stringify(r), 'application/json');
        }
        const root = String(data.root);
        if (!deps.roots().includes(root)) return send(res, 404, JSON.stringify({ ok: false, message: 'unknown root' }), 'application/json');
        let ok = false;
        try { ok = deps.grants.revoke(root, String(data.id)); } catch (e) { return send(res, 409, JSON.stringify({ ok: false, message: (e as Error).message }), 'application/json'); }
        if (ok) push();
        return send(res, ok ? 200 : 404, JSON.stringify({ ok }), 'application/json');
      }
      return send(res, 404, 'not found');
    } catch {
      if (!res.headersSent) send(res, 500, 'console error');
    }
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => { server.off('error', reject); resolve(); });
  });
  server.unref();
  actualPort = (server.address() as AddressInfo).port;
  // Cookies are per host, not per port: each console names its own, so two servers do not clash.
  auth = new ConsoleAuth(`toolgate_${actualPort}`);
  const base = `http://127.0.0.1:${actualPort}`;
  return {
    port: actualPort,
    url: (path = '/') => `${base}${path}`,
    loginUrl: (next?: string) => `${base}/login?s=${auth.mintLogin()}${next ? `&next=${encodeURIComponent(next)}` : ''}`,
    async close() {
      offInbox();
      offCalls();
      for (const r of sse) r.end();
      sse.clear();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
