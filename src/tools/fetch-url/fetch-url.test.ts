import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, test } from 'node:test';
import pino from 'pino';
import { runCall } from '../../core/pipeline.js';
import { Runtime } from '../../core/runtime.js';
import type { Envelope } from '../../core/envelope.js';
import type { Resolver } from '../../net/guarded-fetch.js';
import { SessionRoots } from '../../server/session-roots.js';
import { policyFromYaml, tempDir } from '../../testing/helpers.js';
import { createFetchUrlTool } from './fetch-url.js';

// A local server on 127.0.0.1 only; every request it sees is recorded.
const hits: string[] = [];
let port = 0;
let server: http.Server;
const ws = tempDir('tg-fetch-');

before(async () => {
  server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname === '/hello') { res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }); res.end('hello from loopback\n'); return; }
    if (u.pathname === '/json') { res.writeHead(200, { 'content-type': 'application/json' }); res.end('{"a":1}'); return; }
    if (u.pathname === '/echo') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => { res.writeHead(200, { 'content-type': 'text/plain' }); res.end(`${req.method} ${req.headers['x-test'] ?? ''} ${Buffer.concat(chunks).toString()}`); });
      return;
    }
    if (u.pathname === '/big') { res.writeHead(200, { 'content-type': 'text/plain' }); res.end('line\n'.repeat(20_000)); return; }
    if (u.pathname === '/bin') { res.writeHead(200, { 'content-type': 'image/png' }); res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3])); return; }
    if (u.pathname === '/redirect') { res.writeHead(302, { location: u.searchParams.get('to') ?? '/hello' }); res.end(); return; }
    if (u.pathname === '/headers') { res.writeHead(200, { 'content-type': 'application/json' }); res.end(JSON.stringify(req.headers)); return; }
    if (u.pathname === '/loop') { res.writeHead(302, { location: '/loop' }); res.end(); return; }
    res.writeHead(404, { 'content-type': 'text/plain' }); res.end('nope');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});

after(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  ws.cleanup();
});

/** A resolver that never touches real DNS: names map to fixed answers. */
function fakeDns(map: Record<string, string[]>): Resolver {
  return async (host) => {
    const a = map[host];
    if (!a) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return a.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

function harness(yaml: string, dns: Record<string, string[]> = {}) {
  const rt = new Runtime({
    tools: [createFetchUrlTool({ resolve: fakeDns(dns) })],
    policy: policyFromYaml(yaml), log: pino({ level: 'silent' }),
    stateDir: path.join(ws.dir, '.toolgate'),
    replay: { command: ['toolgate'], flags: [] },
  });
  const roots = new SessionRoots(rt, [ws.dir]);
  return {
    call: async (args: unknown): Promise<Envelope> => (await runCall(rt, roots, 'fetch_url', args, { signal: new AbortController().signal })).envelope,
    close: () => rt.close(),
  };
}

const LOOPBACK_ALLOWED = `
network: { allow_private: true }
rules:
  - { tool: fetch_url, domain: ["127.0.0.1"], decision: allow }
`;

test('off by default: no rule names the domain → NetworkDenied, nothing fetched', async () => {
  const h = harness('rules: []', { 'docs.example': ['127.0.0.1'] });
  const before = hits.length;
  const env = await h.call({ url: `http://docs.example:${port}/hello` });
  assert.equal(env.ok, false);
  assert.equal(env.error?.code, 'NetworkDenied');
  assert.equal(hits.length, before);
  h.close();
});

test('an allowed name that resolves to 127.0.0.1 is refused before connecting', async () => {
  const h = harness('rules: [{ tool: fetch_url, domain: "docs.example", decision: allow }]', { 'docs.example': ['127.0.0.1'] });
  const before = hits.length;
  const env = await h.call({ url: `http://docs.example:${port}/hello` });
  assert.equal(env.error?.code, 'NetworkDenied', JSON.stringify(env.error));
  assert.match(env.error!.message, /resolves to 127\.0\.0\.1/);
  assert.equal(env.error!.details?.category, 'loopback');
  assert.equal(hits.length, before);
  h.close();
});

test('a name with one public and one private answer is refused (every address must pass)', async () => {
  const h = harness('rules: [{ tool: fetch_url, domain: "mixed.example", decision: allow }]', { 'mixed.example': ['93.184.215.14', '10.0.0.5'] });
  const env = await h.call({ url: 'http://mixed.example/' });
  assert.equal(env.error?.code, 'NetworkDenied');
  assert.equal(env.error!.details?.address, '10.0.0.5');
  h.close();
});

test('http://[::1] is refused', async () => {
  const h = harness('rules: [{ tool: fetch_url, domain: "::1", decision: allow }]');
  const env = await h.call({ url: `http://[::1]:${port}/hello` });
  assert.equal(env.error?.code, 'NetworkDenied');
  assert.equal(env.error!.details?.category, 'loopback');
  h.close();
});

test('decimal, octal, hex and short IPv4 forms are recognised as 127.0.0.1 and refused', async () => {
  const h = harness('rules: [{ tool: fetch_url, domain: ["127.0.0.1", "2130706433", "0177.0.0.1"], decision: allow }]');
  const before = hits.length;
  for (const host of ['2130706433', '0177.0.0.1', '0x7f.0.0.1', '127.1', '[::ffff:127.0.0.1]']) {
    const env = await h.call({ url: `http://${host}:${port}/hello` });
    assert.equal(env.error?.code, 'NetworkDenied', `${host}: ${JSON.stringify(env.error)}`);
  }
  assert.equal(hits.length, before);
  h.close();
});

test('a rule for the decimal spelling does not allow it: the gate sees the normalised host', async () => {
  const h = harness('network: { allow_private: true }\nrules: [{ tool: fetch_url, domain: "2130706433", decision: allow }]');
  const env = await h.call({ url: `http://2130706433:${port}/hello` });
  assert.equal(env.error?.code, 'NetworkDenied');
  assert.match(env.error!.message, /127\.0\.0\.1/);
  h.close();
});

test('169.254.169.254 (and its decimal form) is refused without connecting, even with allow_private', async () => {
  const h = harness('network: { allow_private: true }\nrules: [{ tool: fetch_url, domain: ["169.254.169.254", "metadata.example"], decision: allow }]',
    { 'metadata.example': ['169.254.169.254'] });
  for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://2852039166/latest/meta-data/', 'http://metadata.example/']) {
    const env = await h.call({ url });
    assert.equal(env.error?.code, 'NetworkDenied', url);
    assert.equal(env.error!.details?.category, 'metadata', url);
  }
  h.close();
});

test('with allow_private and a rule for 127.0.0.1 a fetch works end to end', async () => {
  const h = harness(LOOPBACK_ALLOWED);
  const env = await h.call({ url: `http://127.0.0.1:${port}/hello` });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  const d = env.data as Record<string, unknown>;
  assert.equal(d.status, 200);
  assert.equal(d.content, 'hello from loopback\n');
  assert.equal(d.binary, false);
  assert.match(String(d.content_type), /text\/plain/);
  h.close();
});

test('POST sends the body and headers; forbidden headers are refused', async () => {
  const h = harness(LOOPBACK_ALLOWED);
  const env = await h.call({ url: `http://127.0.0.1:${port}/echo`, method: 'POST', headers: { 'X-Test': 'yes' }, body: 'payload' });
  assert.equal((env.data as { content: string }).content, 'POST yes payload');
  const bad = await h.call({ url: `http://127.0.0.1:${port}/echo`, headers: { Host: 'internal' } });
  assert.equal(bad.error?.code, 'InvalidArguments');
  h.close();
});

test('a redirect from an allowed domain to a forbidden one is refused', async () => {
  const h = harness(LOOPBACK_ALLOWED, { 'localhost.example': ['127.0.0.1'] });
  const before = hits.length;
  const env = await h.call({ url: `http://127.0.0.1:${port}/redirect?to=${encodeURIComponent(`http://localhost.example:${port}/hello`)}` });
  assert.equal(env.error?.code, 'NetworkDenied', JSON.stringify(env.error));
  assert.match(env.error!.message, /redirect to http:\/\/localhost\.example/);
  assert.equal(hits.length, before + 1); // the first hop only
  h.close();
});

test('a redirect to the metadata address is refused even when a rule allows every hop', async () => {
  const h = harness(`network: { allow_private: true }\nrules: [{ tool: fetch_url, domain: ["127.0.0.1", "169.254.169.254"], decision: allow }]`);
  const env = await h.call({ url: `http://127.0.0.1:${port}/redirect?to=${encodeURIComponent('http://169.254.169.254/latest/')}` });
  assert.equal(env.error?.code, 'NetworkDenied');
  assert.equal(env.error!.details?.category, 'metadata');
  h.close();
});

test('a redirect within the allowed domain is followed and reported', async () => {
  const h = harness(LOOPBACK_ALLOWED);
  const env = await h.call({ url: `http://127.0.0.1:${port}/redirect?to=/json` });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  const d = env.data as { content: string; redirects: string[]; url: string };
  assert.equal(d.content, '{"a":1}');
  assert.deepEqual(d.redirects, [`http://127.0.0.1:${port}/json`]);
  h.close();
});

test('redirect loops stop after 5 hops', async () => {
  const h = harness(LOOPBACK_ALLOWED);
  const env = await h.call({ url: `http://127.0.0.1:${port}/loop` });
  assert.equal(env.error?.code, 'IOError');
  assert.match(env.error!.message, /Too many redirects/);
  h.close();
});

test('max_bytes cuts the body; long text is truncated and spilled in full', async () => {
  const h = harness(LOOPBACK_ALLOWED);
  const small = await h.call({ url: `http://127.0.0.1:${port}/big`, max_bytes: 100 });
  assert.equal(small.status, 'partial');
  assert.equal((small.data as { bytes: number }).bytes, 100);
  assert.equal((small.data as { truncated: boolean }).truncated, true);
  const big = await h.call({ url: `http://127.0.0.1:${port}/big` });
  assert.equal(big.status, 'partial');
  const d = big.data as { content: string; bytes: number };
  assert.equal(d.bytes, 100_000);
  assert.ok(d.content.split('\n').length <= 2001);
  assert.ok(big.artifacts.storage_ref);
  assert.equal(readFileSync(path.join(ws.dir, big.artifacts.storage_ref!), 'utf8').length, 100_000);
  h.close();
});

test('binary bodies are summarised, not returned', async () => {
  const h = harness(LOOPBACK_ALLOWED);
  const env = await h.call({ url: `http://127.0.0.1:${port}/bin` });
  assert.equal(env.ok, true);
  const d = env.data as { content: string | null; binary: boolean; bytes: number };
  assert.equal(d.content, null);
  assert.equal(d.binary, true);
  assert.equal(d.bytes, 8);
  assert.match(env.text, /binary/);
  h.close();
});

test('non-http schemes and bad URLs are refused with InvalidArguments', async () => {
  const h = harness(LOOPBACK_ALLOWED);
  for (const url of ['file:///etc/passwd', 'ftp://127.0.0.1/', 'not a url', 'gopher://127.0.0.1:70/']) {
    const env = await h.call({ url });
    assert.equal(env.error?.code, 'InvalidArguments', url);
  }
  h.close();
});

test('a connection refused is an IOError', async () => {
  const h = harness(LOOPBACK_ALLOWED);
  const closed = http.createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const deadPort = (closed.address() as AddressInfo).port;
  await new Promise((r) => closed.close(r));
  const env = await h.call({ url: `http://127.0.0.1:${deadPort}/` });
  assert.equal(env.error?.code, 'IOError');
  assert.match(env.error!.message, /ECONNREFUSED/);
  h.close();
});

test('the socket goes to the address the guard resolved and checked (pinned; no second DNS lookup)', async () => {
  // "pinned.example" exists only in the injected resolver: a second, system lookup would fail with ENOTFOUND.
  const h = harness('network: { allow_private: true }\nrules: [{ tool: fetch_url, domain: "pinned.example", decision: allow }]', { 'pinned.example': ['127.0.0.1'] });
  const env = await h.call({ url: `http://pinned.example:${port}/hello` });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  assert.equal((env.data as { content: string }).content, 'hello from loopback\n');
  h.close();
});

test('a redirect to another allowed origin carries none of the caller\'s custom headers (x-api-key)', async () => {
  const h = harness(`network: { allow_private: true }\nrules:\n  - { tool: fetch_url, domain: ["a.test", "b.test"], decision: allow }\n`, { 'a.test': ['127.0.0.1'], 'b.test': ['127.0.0.1'] });
  const env = await h.call({
    url: `http://a.test:${port}/redirect?to=${encodeURIComponent(`http://b.test:${port}/headers`)}`,
    headers: { 'x-api-key': 'SECRET-A', authorization: 'Bearer S', accept: 'application/json' },
  });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  const seen = JSON.parse((env.data as { content: string }).content) as Record<string, string>;
  assert.equal(seen['x-api-key'], undefined);
  assert.equal(seen.authorization, undefined);
  assert.equal(seen.accept, 'application/json');
  h.close();
});

test('a resolver that never answers is stopped by network.timeout_ms', async () => {
  const rt = new Runtime({
    tools: [createFetchUrlTool({ resolve: () => new Promise(() => {}) })],
    policy: policyFromYaml('network: { timeout_ms: 300 }\nrules:\n  - { tool: fetch_url, domain: "slow.test", decision: allow }\n'),
    log: pino({ level: 'silent' }), stateDir: path.join(ws.dir, '.toolgate'), replay: { command: ['toolgate'], flags: [] },
  });
  const env = (await runCall(rt, new SessionRoots(rt, [ws.dir]), 'fetch_url', { url: 'http://slow.test/x' }, { signal: new AbortController().signal })).envelope;
  assert.equal(env.error?.code, 'Timeout', JSON.stringify(env.error));
  rt.close();
});
