// Security review of the HTTP transport and fetch_url: attacks that are correctly refused.
// Everything runs on 127.0.0.1; names are resolved by an injected resolver (never real DNS).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import zlib from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import type { Envelope } from '../../src/core/envelope.js';
import { runCall } from '../../src/core/pipeline.js';
import { Runtime } from '../../src/core/runtime.js';
import type { Resolver } from '../../src/net/guarded-fetch.js';
import { spawnHttpServer, type SpawnedHttp } from '../../src/server/http-spawn.js';
import { SessionRoots } from '../../src/server/session-roots.js';
import { policyFromYaml, tempDir } from '../../src/testing/helpers.js';
import { createFetchUrlTool } from '../../src/tools/fetch-url/fetch-url.js';

const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'review', version: '1' } } });

/** Writes bytes as given on a fresh socket (duplicate headers, lying lengths) and returns the status line's code. */
function rawSocket(port: number, text: string, waitMs = 3000): Promise<{ status: number; text: string }> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    let out = '';
    const finish = () => { clearTimeout(t); resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(out)?.[1] ?? -1), text: out }); };
    const t = setTimeout(() => { s.destroy(); finish(); }, waitMs);
    s.on('data', (c: Buffer) => { out += c.toString(); if (/^HTTP\/1\.1 \d{3}/.test(out) && out.includes('\r\n\r\n')) { s.destroy(); } });
    s.on('close', finish);
    s.on('error', () => { /* reset after the reply is fine */ });
    s.write(text);
  });
}

function request(port: number, method: string, p: string, headers: Record<string, string>, body = ''): string {
  const h: Record<string, string> = { Host: `127.0.0.1:${port}`, Connection: 'close', ...headers };
  if (body && !('Content-Length' in h) && !('Transfer-Encoding' in h)) h['Content-Length'] = String(Buffer.byteLength(body));
  return `${method} ${p} HTTP/1.1\r\n${Object.entries(h).map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n${body}`;
}

const JSON_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

describe('HTTP transport: refused attacks', () => {
  const ws = tempDir('tg-http-review-');
  let srv: SpawnedHttp;
  const auth = () => ({ Authorization: `Bearer ${srv.token}` });
  const send = (method: string, p: string, headers: Record<string, string>, body = '') => rawSocket(srv.port, request(srv.port, method, p, headers, body));

  before(async () => {
    writeFileSync(path.join(ws.dir, 'a.txt'), 'a\n');
    srv = await spawnHttpServer(['--workspace', ws.dir], { env: { TOOLGATE_HTTP_MAX_BODY: '100000' } });
  });
  after(async () => {
    await srv?.stop();
    ws.cleanup();
  });

  test('bad, partial, re-cased or misplaced tokens → 401 on every endpoint', async () => {
    const t = srv.token;
    const bad: Array<Record<string, string>> = [
      {}, { Authorization: 'Bearer' }, { Authorization: 'Bearer ' }, { Authorization: `Bearer ${t.slice(0, -1)}` },
      { Authorization: `Bearer ${t}x` }, { Authorization: `Bearer ${t.toUpperCase()}` }, { Authorization: `Basic ${t}` },
      { Authorization: t }, { Authorization: `Bearer ${t} extra` }, { 'X-Auth-Token': t }, { Cookie: `token=${t}` },
    ];
    for (const h of bad) assert.equal((await send('POST', '/mcp', { ...JSON_HEADERS, ...h }, INIT)).status, 401, JSON.stringify(h));
    assert.equal((await send('POST', `/mcp?token=${t}&access_token=${t}`, JSON_HEADERS, INIT)).status, 401, 'token in the query');
    // Duplicate Authorization: node keeps the first; a wrong first one is not rescued by a right second one.
    const dup = `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\nAuthorization: Bearer nope\r\nAuthorization: Bearer ${t}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${INIT.length}\r\nConnection: close\r\n\r\n${INIT}`;
    assert.equal((await rawSocket(srv.port, dup)).status, 401);
    for (const [m, p, h] of [['GET', '/sse', {}], ['POST', '/messages?sessionId=x', JSON_HEADERS], ['GET', '/mcp', {}], ['DELETE', '/mcp', { 'Mcp-Session-Id': 'x' }], ['GET', '/', {}], ['PUT', '/mcp', {}]] as const) {
      assert.equal((await send(m, p, { ...h }, m === 'POST' ? '{}' : '')).status, 401, `${m} ${p}`);
    }
    // The scheme name is case-insensitive (RFC 9110): `bearer` works.
    assert.equal((await send('POST', '/mcp', { ...JSON_HEADERS, Authorization: `bearer ${t}` }, INIT)).status, 200);
  });

  test('foreign or spoofed Host headers → 403 even with the token', async () => {
    const p = srv.port;
    for (const host of [`127.0.0.1.nip.io:${p}`, `localhost.:${p}`, `127.0.0.1:${p + 1}`, '127.0.0.1', 'localhost', `127.0.0.2:${p}`,
      `[0:0:0:0:0:0:0:1]:${p}`, `127.0.0.1:${p}.evil.example`, `127.0.0.1:0${p}`, `evil.example:${p}`, `127.0.0.1:${p}@evil.example`]) {
      assert.equal((await send('POST', '/mcp', { ...JSON_HEADERS, ...auth(), Host: host }, INIT)).status, 403, host);
    }
    const noHost = `POST /mcp HTTP/1.0\r\nAuthorization: Bearer ${srv.token}\r\nContent-Type: application/json\r\nContent-Length: ${INIT.length}\r\n\r\n${INIT}`;
    assert.ok([400, 403].includes((await rawSocket(p, noHost)).status), 'no Host');
    const dupHost = `POST /mcp HTTP/1.1\r\nHost: evil.example:${p}\r\nHost: 127.0.0.1:${p}\r\nAuthorization: Bearer ${srv.token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${INIT.length}\r\nConnection: close\r\n\r\n${INIT}`;
    assert.equal((await rawSocket(p, dupHost)).status, 403, 'duplicate Host, foreign first');
  });

  test('foreign, opaque and look-alike Origins → 403 even with the token (also on a preflight)', async () => {
    const p = srv.port;
    for (const origin of ['null', 'http://127.0.0.1.evil.example', `http://localhost:${p}@evil.example`, 'file://', 'chrome-extension://abcdef',
      'http://0.0.0.0', 'http://localhost.', 'http://evil.example#@localhost', `http://localhost.evil.example:${p}`, 'ftp://localhost']) {
      assert.equal((await send('POST', '/mcp', { ...JSON_HEADERS, ...auth(), Origin: origin }, INIT)).status, 403, origin);
    }
    assert.equal((await send('OPTIONS', '/mcp', { Origin: 'http://evil.example', 'Access-Control-Request-Method': 'POST' })).status, 403);
    const dupOrigin = `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${p}\r\nOrigin: http://localhost:${p}\r\nOrigin: http://evil.example\r\nAuthorization: Bearer ${srv.token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${INIT.length}\r\nConnection: close\r\n\r\n${INIT}`;
    assert.equal((await rawSocket(p, dupOrigin)).status, 403, 'two Origin headers');
  });

  test('bodies: a lying Content-Length, chunked past the cap, CL+TE smuggling, wrong content type', async () => {
    assert.equal((await send('POST', '/mcp', { ...JSON_HEADERS, ...auth(), 'Content-Length': '999999999' }, INIT)).status, 413);
    const piece = 'x'.repeat(50_000);
    let chunked = request(srv.port, 'POST', '/mcp', { ...JSON_HEADERS, ...auth(), 'Transfer-Encoding': 'chunked' });
    for (let i = 0; i < 5; i++) chunked += `${piece.length.toString(16)}\r\n${piece}\r\n`;
    chunked += '0\r\n\r\n';
    assert.equal((await rawSocket(srv.port, chunked)).status, 413);
    const smuggle = request(srv.port, 'POST', '/mcp', { ...JSON_HEADERS, ...auth(), 'Content-Length': '5', 'Transfer-Encoding': 'chunked' }, `${INIT.length.toString(16)}\r\n${INIT}\r\n0\r\n\r\n`);
    assert.equal((await rawSocket(srv.port, smuggle)).status, 400);
    assert.equal((await send('POST', '/mcp', { ...auth(), 'Content-Type': 'text/plain', Accept: JSON_HEADERS.Accept }, INIT)).status, 415);
    // A batch that hides initialize does not open a session.
    assert.equal((await send('POST', '/mcp', { ...JSON_HEADERS, ...auth() }, `[${INIT}]`)).status, 400);
  });

  test('session ids are random UUIDs; guessed ids and ids of the other transport kind → 404', async () => {
    const init = await send('POST', '/mcp', { ...JSON_HEADERS, ...auth() }, INIT);
    assert.equal(init.status, 200);
    const streamId = /mcp-session-id: ([\w-]+)/i.exec(init.text)?.[1];
    assert.match(streamId ?? '', /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);

    // Open an SSE stream and read its endpoint event.
    const sse = net.connect(srv.port, '127.0.0.1');
    let sseText = '';
    sse.on('data', (c: Buffer) => { sseText += c.toString(); });
    sse.write(`GET /sse HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\nAuthorization: Bearer ${srv.token}\r\nAccept: text/event-stream\r\n\r\n`);
    for (let i = 0; i < 50 && !/sessionId=/.test(sseText); i++) await new Promise((r) => setTimeout(r, 50));
    const sseId = /sessionId=([\w-]+)/.exec(sseText)?.[1];
    assert.match(sseId ?? '', /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    try {
      const ping = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' });
      // A Streamable id on the legacy endpoint, and the SSE id on /mcp: not the same kind → 404.
      assert.equal((await send('POST', `/messages?sessionId=${streamId}`, { ...JSON_HEADERS, ...auth() }, ping)).status, 404);
      assert.equal((await send('POST', '/mcp', { ...JSON_HEADERS, ...auth(), 'Mcp-Session-Id': sseId! }, ping)).status, 404);
      for (const guess of ['00000000-0000-4000-8000-000000000000', '1', '', `${sseId}x`, sseId!.toUpperCase()]) {
        assert.equal((await send('POST', `/messages?sessionId=${encodeURIComponent(guess)}`, { ...JSON_HEADERS, ...auth() }, ping)).status, 404, guess);
      }
      // Without the token, even the right session id gets nowhere.
      assert.equal((await send('POST', `/messages?sessionId=${sseId}`, JSON_HEADERS, ping)).status, 401);
      assert.equal((await send('POST', '/mcp', { ...JSON_HEADERS, 'Mcp-Session-Id': streamId! }, ping)).status, 401);
      assert.equal((await send('DELETE', '/mcp', { 'Mcp-Session-Id': streamId! })).status, 401);
    } finally {
      sse.destroy();
    }
  });
});

describe('fetch_url: refused SSRF attempts', () => {
  const hits: string[] = [];
  let port = 0;
  let server: http.Server;
  const ws = tempDir('tg-fetch-review-');
  const DNS: Record<string, string[]> = {
    'allowed.test': ['127.0.0.1'], 'mixed.test': ['93.184.216.34', '127.0.0.1'], 'mixed6.test': ['93.184.216.34', '::1'],
    'mapped.test': ['::ffff:127.0.0.1'], 'mapped-hex.test': ['::ffff:7f00:1'], 'compat.test': ['::127.0.0.1'], 'nat64.test': ['64:ff9b::7f00:1'],
    'sixto4.test': ['2002:7f00:1::'], 'zero.test': ['0.0.0.0'], 'unspec6.test': ['::'], 'meta.test': ['169.254.169.254'], 'meta6.test': ['fd00:ec2::254'],
    'octal.test': ['0177.0.0.1'], 'linklocal.test': ['fe80::1%lo'], 'a.example.com': ['127.0.0.1'], 'evil-example.com': ['127.0.0.1'], 'example.com.evil.com': ['127.0.0.1'],
  };
  const resolve: Resolver = async (host) => {
    const a = DNS[host];
    if (!a) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return a.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  let gz: Buffer;

  before(async () => {
    gz = zlib.gzipSync(Buffer.alloc(4 << 20, 0));
    server = http.createServer((req, res) => {
      hits.push(`${req.headers.host} ${req.url}`);
      const u = new URL(req.url ?? '/', 'http://x');
      if (u.pathname === '/r') { res.writeHead(302, { location: u.searchParams.get('to') ?? '/' }); res.end(); return; }
      if (u.pathname === '/hello') { res.writeHead(200, { 'content-type': 'text/plain' }); res.end('hello'); return; }
      if (u.pathname === '/huge') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const b = Buffer.alloc(1 << 20, 97);
        let n = 0;
        const w = () => { while (n < 64 && res.write(b)) n++; if (n < 64) res.once('drain', w); else res.end(); };
        w();
        res.on('error', () => {});
        return;
      }
      if (u.pathname === '/slow') { res.writeHead(200, { 'content-type': 'text/plain' }); const i = setInterval(() => res.write('x'), 100); res.on('close', () => clearInterval(i)); return; }
      if (u.pathname === '/gz') { res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-encoding': 'gzip' }); res.end(gz); return; }
      res.writeHead(404); res.end('nope');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    ws.cleanup();
  });

  function harness(yaml: string) {
    const rt = new Runtime({
      tools: [createFetchUrlTool({ resolve })], policy: policyFromYaml(yaml), log: pino({ level: 'silent' }),
      stateDir: path.join(ws.dir, '.toolgate'), replay: { command: ['toolgate'], flags: [] },
    });
    const roots = new SessionRoots(rt, [ws.dir]);
    return {
      call: async (args: unknown): Promise<Envelope> => (await runCall(rt, roots, 'fetch_url', args, { signal: new AbortController().signal })).envelope,
      close: () => rt.close(),
    };
  }

  test('names whose answers are private in any spelling → NetworkDenied, nothing connects', async () => {
    const names = Object.keys(DNS).filter((n) => n.endsWith('.test') && n !== 'allowed.test');
    const h = harness(`rules:\n  - { tool: fetch_url, domain: ${JSON.stringify(['allowed.test', ...names])}, decision: allow }\n`);
    hits.length = 0;
    for (const n of ['allowed.test', 'allowed.test.', ...names]) {
      const e = await h.call({ url: `http://${n}:${port}/hello` });
      assert.equal(e.error?.code, 'NetworkDenied', `${n}: ${e.error?.message}`);
    }
    assert.deepEqual(hits, []);
    h.close();
  });

  test('literal loopback, unspecified and metadata spellings → NetworkDenied, even with a rule naming them', async () => {
    const h = harness('rules:\n  - { tool: fetch_url, domain: ["127.0.0.1", "0.0.0.0", "::1", "::", "::ffff:7f00:1", "::7f00:1", "169.254.169.254"], decision: allow }\n');
    hits.length = 0;
    for (const host of ['127.0.0.1', '127.1', '0x7f.1', '2130706433', '017700000001', '0177.0.0.1', '127.0.0.1.', '127.0.0.1%2e', '0', '0.0.0.0',
      '[::]', '[::1]', '[0:0:0:0:0:ffff:7f00:1]', '[::ffff:127.0.0.1]', '[::127.0.0.1]', '169.254.169.254', '0xa9fea9fe', '2852039166']) {
      const e = await h.call({ url: `http://${host}:${port}/hello` });
      assert.equal(e.error?.code, 'NetworkDenied', `${host}: ${e.error?.message}`);
    }
    assert.deepEqual(hits, []);
    h.close();
  });

  test('userinfo tricks, forbidden headers and CRLF → refused before any connection', async () => {
    const h = harness('network: { allow_private: true }\nrules:\n  - { tool: fetch_url, domain: ["allowed.test"], decision: allow }\n');
    hits.length = 0;
    assert.equal((await h.call({ url: `http://allowed.test@127.0.0.1:${port}/hello` })).error?.code, 'NetworkDenied');
    assert.equal((await h.call({ url: `http://127.0.0.1:x@allowed.test:${port}/hello` })).error?.code, 'InvalidArguments');
    for (const headers of [{ Host: 'evil.test' }, { 'content-length': '1' }, { 'Transfer-Encoding': 'chunked' }, { 'x-a': 'b\r\nHost: evil.test' }, { 'x-a\r\nHost': 'evil.test' }, { 'Accept-Encoding': 'gzip' }]) {
      const e = await h.call({ url: `http://allowed.test:${port}/hello`, headers });
      assert.equal(e.ok, false, JSON.stringify(headers));
    }
    assert.deepEqual(hits, []);
    h.close();
  });

  test('redirects to forbidden schemes, hosts and credentials are refused hop by hop', async () => {
    const h = harness('network: { allow_private: true }\nrules:\n  - { tool: fetch_url, domain: ["allowed.test"], decision: allow }\n');
    const via = (to: string) => `http://allowed.test:${port}/r?to=${encodeURIComponent(to)}`;
    for (const to of ['file:///etc/passwd', 'ftp://allowed.test/x', 'data:text/plain,hi', 'javascript:alert(1)', `http://127.0.0.1:${port}/hello`,
      'http://169.254.169.254/latest/meta-data/', `http://[::1]:${port}/hello`, `http://2130706433:${port}/hello`]) {
      const e = await h.call({ url: via(to) });
      assert.equal(e.error?.code, 'NetworkDenied', `${to}: ${e.error?.message}`);
    }
    assert.equal((await h.call({ url: via(`http://u:p@allowed.test:${port}/hello`) })).error?.code, 'InvalidArguments');
    h.close();
  });

  test('*.example.com covers sub-domains only, not look-alikes', async () => {
    const h = harness('network: { allow_private: true }\nrules:\n  - { tool: fetch_url, domain: ["*.example.com"], decision: allow }\n');
    assert.equal((await h.call({ url: `http://a.example.com:${port}/hello` })).ok, true);
    for (const host of ['evil-example.com', 'example.com.evil.com', 'example.com']) {
      assert.equal((await h.call({ url: `http://${host}:${port}/hello` })).error?.code, 'NetworkDenied', host);
    }
    h.close();
  });

  test('huge bodies are cut at max_bytes, slow ones time out, gzip is never inflated', async () => {
    const h = harness('network: { allow_private: true, max_bytes: 100000, timeout_ms: 1500 }\nrules:\n  - { tool: fetch_url, domain: ["allowed.test"], decision: allow }\n');
    const big = await h.call({ url: `http://allowed.test:${port}/huge` });
    assert.equal(big.ok, true);
    assert.equal((big.data as { bytes: number }).bytes, 100000);
    assert.equal((big.data as { truncated: boolean }).truncated, true);
    const t0 = Date.now();
    const slow = await h.call({ url: `http://allowed.test:${port}/slow` });
    assert.equal(slow.error?.code, 'Timeout');
    assert.ok(Date.now() - t0 < 5000);
    const z = await h.call({ url: `http://allowed.test:${port}/gz` });
    assert.equal(z.ok, true);
    assert.equal((z.data as { bytes: number }).bytes, gz.length, 'the compressed bytes, not 4 MiB of zeros');
    h.close();
  });
});
