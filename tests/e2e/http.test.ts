import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { spawnHttpServer, type SpawnedHttp } from '../../src/server/http-spawn.js';
import { tempDir } from '../../src/testing/helpers.js';

type Kind = 'streamable' | 'sse';

function transportFor(kind: Kind, srv: SpawnedHttp, token = srv.token): Transport {
  const requestInit = { headers: { Authorization: `Bearer ${token}` } };
  return kind === 'streamable'
    ? new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit })
    : new SSEClientTransport(new URL(`${srv.url}/sse`), { requestInit });
}

async function connect(kind: Kind, srv: SpawnedHttp, token?: string) {
  const transport = transportFor(kind, srv, token);
  const client = new Client({ name: 'toolgate-http-test', version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);
  return { client, transport };
}

/** A raw request, so Host and Origin can be set to anything. */
function raw(srv: SpawnedHttp, opts: { method?: string; path?: string; headers?: Record<string, string>; body?: string | Buffer }): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: srv.port, method: opts.method ?? 'POST', path: opts.path ?? '/mcp', headers: opts.headers }, (res) => {
      let b = '';
      res.on('data', (c: Buffer) => { b += c.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: b }));
      res.on('error', reject);
    });
    req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' || e.code === 'EPIPE' ? resolve({ status: -1, body: String(e) }) : reject(e)));
    req.end(opts.body);
  });
}

const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

type Env = { ok: boolean; error: { code: string; message: string } | null; data: Record<string, unknown> | null; tool: string };

const ws = tempDir('tg-http-');
let srv: SpawnedHttp;

before(async () => {
  writeFileSync(path.join(ws.dir, 'hello.txt'), 'first line\nsecond line\n');
  const policy = path.join(ws.dir, 'toolgate.yaml');
  writeFileSync(policy, 'approvals: { timeout_ms: 1500 }\nrules:\n  - { tool: write_file, path: "big-*", decision: allow }\n  - { tool: edit_file, path: "big-*", decision: allow }\n');
  srv = await spawnHttpServer(['--workspace', ws.dir, '--policy', policy], { env: { TOOLGATE_HTTP_MAX_BODY: String(1024 * 1024) } });
});

after(async () => {
  await srv?.stop();
  ws.cleanup();
});

for (const kind of ['streamable', 'sse'] as const) {
  describe(`the contract over ${kind === 'streamable' ? 'Streamable HTTP' : 'legacy SSE'}`, () => {
    test('tools/list carries the tools and their _meta', async () => {
      const { client } = await connect(kind, srv);
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      for (const n of ['display', 'read_file', 'fetch_url']) assert.ok(names.includes(n), `${n} in ${names.join(', ')}`);
      const fetchUrl = tools.find((t) => t.name === 'fetch_url')!;
      assert.equal(fetchUrl._meta?.['toolgate/risk'], 'high');
      assert.equal(fetchUrl.annotations?.openWorldHint, true);
      await client.close();
    });

    test('display and read_file return ok envelopes', async () => {
      const { client } = await connect(kind, srv);
      const d = await client.callTool({ name: 'display', arguments: { content: `hello over ${kind}` } });
      assert.notEqual(d.isError, true);
      assert.equal((d.structuredContent as Env).ok, true);
      const r = await client.callTool({ name: 'read_file', arguments: { path: 'hello.txt' } });
      const env = r.structuredContent as Env;
      assert.equal(env.ok, true, JSON.stringify(env.error));
      assert.match(String(env.data?.content), /second line/);
      await client.close();
    });

    test('errors come back as envelopes with isError', async () => {
      const { client } = await connect(kind, srv);
      const bad = await client.callTool({ name: 'display', arguments: { content: 'x', colour: 'red' } });
      assert.equal(bad.isError, true);
      assert.equal((bad.structuredContent as Env).error?.code, 'InvalidArguments');
      const missing = await client.callTool({ name: 'no_such_tool', arguments: {} });
      assert.equal((missing.structuredContent as Env).error?.code, 'ToolNotFound');
      const outside = await client.callTool({ name: 'read_file', arguments: { path: '../../etc/passwd' } });
      assert.equal((outside.structuredContent as Env).ok, false);
      const net = await client.callTool({ name: 'fetch_url', arguments: { url: 'http://example.com/' } });
      assert.equal((net.structuredContent as Env).error?.code, 'NetworkDenied');
      await client.close();
    });

    test('a 200 KB argument gets through the body parser (the SDK express helper stops at 100 KB)', async () => {
      const { client } = await connect(kind, srv);
      const big = 'x'.repeat(200 * 1024);
      const r = await client.callTool({ name: 'display', arguments: { content: big } });
      const env = r.structuredContent as Env;
      // display caps content at 10,000 characters: the call reached the pipeline and was judged there.
      assert.equal(env.error?.code, 'InvalidArguments');
      assert.match(env.error!.message, /content/);
      await client.close();
    });

    test('a 200 KB write and a 200 KB edit work', async () => {
      const { client } = await connect(kind, srv);
      const file = `big-${kind}.txt`;
      const content = `${'a'.repeat(100)}\n`.repeat(2048) + 'MARK\n';
      const w = await client.callTool({ name: 'write_file', arguments: { path: file, content } });
      assert.equal((w.structuredContent as Env).ok, true, JSON.stringify((w.structuredContent as Env).error));
      await client.callTool({ name: 'read_file', arguments: { path: file, limit: 1 } });
      const repl = `${'b'.repeat(100)}\n`.repeat(2048);
      const e = await client.callTool({ name: 'edit_file', arguments: { path: file, old_string: 'MARK\n', new_string: repl } });
      assert.equal((e.structuredContent as Env).ok, true, JSON.stringify((e.structuredContent as Env).error));
      assert.equal(readFileSync(path.join(ws.dir, file), 'utf8'), content.replace('MARK\n', repl));
      await client.close();
    });

    test('a wrong token cannot connect', async () => {
      await assert.rejects(connect(kind, srv, 'wrong-token'));
    });
  });
}

describe('HTTP guards', () => {
  const auth = () => ({ authorization: `Bearer ${srv.token}` });

  test('no token → 401; a wrong token → 401; the right token → 200', async () => {
    assert.equal((await raw(srv, { headers: JSON_HEADERS, body: INIT })).status, 401);
    assert.equal((await raw(srv, { headers: { ...JSON_HEADERS, authorization: 'Bearer nope' }, body: INIT })).status, 401);
    assert.equal((await raw(srv, { headers: { ...JSON_HEADERS, authorization: `Basic ${srv.token}` }, body: INIT })).status, 401);
    assert.equal((await raw(srv, { headers: { ...JSON_HEADERS, authorization: `Bearer ${srv.token}x` }, body: INIT })).status, 401);
    assert.equal((await raw(srv, { method: 'GET', path: '/sse' })).status, 401);
    assert.equal((await raw(srv, { headers: { ...JSON_HEADERS, ...auth() }, body: INIT })).status, 200);
  });

  test('a foreign Origin → 403, even with the token; a loopback Origin is fine', async () => {
    for (const origin of ['http://evil.example', 'https://attacker.test:3333', 'null', 'http://127.0.0.1.evil.example']) {
      const r = await raw(srv, { headers: { ...JSON_HEADERS, ...auth(), origin }, body: INIT });
      assert.equal(r.status, 403, origin);
    }
    assert.equal((await raw(srv, { method: 'GET', path: '/sse', headers: { ...auth(), origin: 'http://evil.example' } })).status, 403);
    assert.equal((await raw(srv, { headers: { ...JSON_HEADERS, ...auth(), origin: `http://localhost:${srv.port}` }, body: INIT })).status, 200);
  });

  test('a foreign Host (DNS rebinding) → 403, even with the token', async () => {
    for (const host of [`evil.example:${srv.port}`, 'evil.example', `127.0.0.1:${srv.port + 1}`, `localhost.evil.example:${srv.port}`]) {
      const r = await raw(srv, { headers: { ...JSON_HEADERS, ...auth(), host }, body: INIT });
      assert.equal(r.status, 403, host);
    }
    for (const host of [`localhost:${srv.port}`, `127.0.0.1:${srv.port}`]) {
      assert.equal((await raw(srv, { headers: { ...JSON_HEADERS, ...auth(), host }, body: INIT })).status, 200, host);
    }
  });

  test('a body over the configured cap → 413; bad JSON → 400; unknown session → 404', async () => {
    const huge = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'y'.repeat(1024 * 1024 + 10) } });
    const r = await raw(srv, { headers: { ...JSON_HEADERS, ...auth() }, body: huge });
    assert.ok(r.status === 413 || r.status === -1, `status ${r.status}`);
    assert.equal((await raw(srv, { headers: { ...JSON_HEADERS, ...auth() }, body: '{nope' })).status, 400);
    assert.equal((await raw(srv, { headers: { ...JSON_HEADERS, ...auth(), 'mcp-session-id': 'not-a-session' }, body: INIT })).status, 404);
    assert.equal((await raw(srv, { headers: { ...JSON_HEADERS, ...auth() }, path: '/messages?sessionId=nope', body: INIT })).status, 404);
    assert.equal((await raw(srv, { method: 'GET', path: '/other', headers: auth() })).status, 404);
  });

  test('each session has its own audit session_id (the MCP session id)', async () => {
    const a = await connect('streamable', srv);
    const b = await connect('streamable', srv);
    await a.client.callTool({ name: 'display', arguments: { content: 'from a' } });
    await b.client.callTool({ name: 'display', arguments: { content: 'from b' } });
    const ida = (a.transport as StreamableHTTPClientTransport).sessionId!;
    const idb = (b.transport as StreamableHTTPClientTransport).sessionId!;
    assert.notEqual(ida, idb);
    const records = readFileSync(path.join(ws.dir, '.toolgate', 'audit.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { session_id: string; args: { content?: string } });
    assert.equal(records.find((r) => r.args.content === 'from a')?.session_id, ida);
    assert.equal(records.find((r) => r.args.content === 'from b')?.session_id, idb);
    await a.client.close();
    await b.client.close();
  });
});

describe('approvals over HTTP', () => {
  test('an ask becomes an elicitation to the session that made the call (Streamable HTTP)', async () => {
    const transport = transportFor('streamable', srv);
    const client = new Client({ name: 'elicit', version: '1' }, { capabilities: { elicitation: { form: {} } } });
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(String(req.params.message));
      return { action: 'accept', content: { decision: 'allow_once' } };
    });
    await client.connect(transport);
    const r = await client.callTool({ name: 'write_file', arguments: { path: 'asked.txt', content: 'approved\n' } });
    assert.equal((r.structuredContent as Env).ok, true, JSON.stringify((r.structuredContent as Env).error));
    assert.equal(asked.length, 1);
    assert.match(asked[0]!, /write_file/);
    assert.equal(readFileSync(path.join(ws.dir, 'asked.txt'), 'utf8'), 'approved\n');
    // A client without elicitation gets ApprovalRequired, never a silent allow.
    const { client: plain } = await connect('sse', srv);
    const denied = await plain.callTool({ name: 'write_file', arguments: { path: 'asked2.txt', content: 'x' } });
    assert.equal((denied.structuredContent as Env).error?.code, 'ApprovalRequired');
    await plain.close();
    await client.close();
  });
});

describe('sessions and shutdown', () => {
  test('an idle session is closed and cleaned up; the client then gets 404 for it', async () => {
    const w = tempDir('tg-http-idle-');
    const s = await spawnHttpServer(['--workspace', w.dir], { env: { TOOLGATE_HTTP_IDLE_MS: '1000' } });
    try {
      const { client, transport } = await connect('streamable', s);
      await client.callTool({ name: 'display', arguments: { content: 'hi' } });
      const sid = (transport as StreamableHTTPClientTransport).sessionId!;
      const ping = JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping' });
      let status = 200;
      // Each ping is traffic too: space them wider than the idle time so the sweeper can act.
      for (let i = 0; i < 12 && status !== 404; i++) {
        await new Promise((r) => setTimeout(r, 2500));
        status = (await raw(s, { headers: { ...JSON_HEADERS, authorization: `Bearer ${s.token}`, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' }, body: ping })).status;
      }
      assert.equal(status, 404);
      await client.close().catch(() => {});
    } finally {
      await s.stop();
      w.cleanup();
    }
  });

  test('SIGTERM: the server closes its sessions, flushes the audit and exits 0', async () => {
    const w = tempDir('tg-http-stop-');
    const s = await spawnHttpServer(['--workspace', w.dir]);
    const { client } = await connect('sse', s);
    await client.callTool({ name: 'display', arguments: { content: 'before stop' } });
    const code = await s.stop('SIGTERM');
    assert.equal(code, 0, s.stderr());
    const lines = readFileSync(path.join(w.dir, '.toolgate', 'audit.jsonl'), 'utf8').trim().split('\n');
    assert.equal(lines.length, 1);
    assert.ok(readFileSync(path.join(w.dir, '.toolgate', 'audit.jsonl.head'), 'utf8').length > 0);
    await client.close().catch(() => {});
    w.cleanup();
  });

  test('refuses to start on a non-loopback host without a token', async () => {
    await assert.rejects(spawnHttpServer(['--host', '0.0.0.0'], { env: { TOOLGATE_TOKEN: '' } }), /without a token/);
  });
});
