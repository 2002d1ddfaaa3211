// Upstreams in-process: the real pipeline and a real upstream (our fixture over stdio, and SDK
// servers over Streamable HTTP and legacy SSE started here), without the CLI around them.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { test } from 'node:test';
import pino from 'pino';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { runCall } from '../core/pipeline.js';
import { Runtime } from '../core/runtime.js';
import { Session } from '../core/session.js';
import { SessionRoots } from '../server/session-roots.js';
import { CLI, policyFromYaml, REPO_ROOT, tempDir } from '../testing/helpers.js';
import { allTools } from '../tools/index.js';
import { startUpstreams } from './manager.js';

const FIXTURE = path.join(REPO_ROOT, 'tests', 'fixtures', 'upstream-fixture.mjs');

async function harness(yaml: string, env: Record<string, string> = {}) {
  const t = tempDir('tg-upin-');
  const ws = path.join(t.dir, 'ws');
  mkdirSync(ws);
  const policy = policyFromYaml(yaml);
  const rt = new Runtime({ tools: allTools(), policy, log: pino({ level: 'silent' }), replay: { command: ['node', CLI], flags: [] } });
  const fullEnv = { ...process.env, XDG_STATE_HOME: path.join(t.dir, 'state'), ...env };
  const ups = await startUpstreams(rt, { waitMs: 10_000, env: fullEnv });
  const roots = new SessionRoots(rt, [ws], new Session());
  const call = async (name: string, args: unknown) => (await runCall(rt, roots, name, args, { signal: new AbortController().signal })).envelope as any;
  return { ...t, ws, rt, ups, call, close: () => { rt.close(); t.cleanup(); } };
}

const fixture = (log: string) => `
upstreams:
  fx:
    command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(FIXTURE)}]
    env: { FIXTURE_LOG: ${JSON.stringify(log)} }
rules:
  - { tool: "fx__*", decision: allow }
`;

test('if the gate itself throws, the call is refused (Internal) and never reaches the upstream', async () => {
  const { dir, cleanup } = tempDir('tg-upgate-');
  const log = path.join(dir, 'fx.log');
  const h = await harness(fixture(log));
  assert.equal((await h.call('fx__greet', { name: 'first' })).ok, true);
  // Break the policy's matcher: evaluate() now throws for every call.
  for (const r of h.rt.policy.rules) r.tool = () => { throw new Error('matcher exploded'); };
  (h.rt as any).listedCache = undefined;
  const r = await h.call('fx__greet', { name: 'second' });
  assert.equal(r.ok, false);
  assert.equal(r.error.code, 'Internal');
  const calls = readFileSync(log, 'utf8').split('\n').filter((l) => l.startsWith('greet '));
  assert.deepEqual(calls, ['greet first'], 'the refused call was not passed through');
  h.close();
  cleanup();
});

test('the profile decides too: without the "upstream" permission no upstream tool is listed or callable', async () => {
  const { dir, cleanup } = tempDir('tg-upprof-');
  const h = await harness(`profile: edit\n${fixture(path.join(dir, 'fx.log'))}`);
  assert.ok(h.rt.tools.has('fx__greet'));
  assert.ok(!h.rt.listed().some((t) => t.name.startsWith('fx__')));
  assert.equal((await h.call('fx__greet', { name: 'x' })).error?.code, 'ToolNotAllowed');
  h.close();
  cleanup();
});

function mcpServer(seen: string[]) {
  const s = new McpServer({ name: 'remote', version: '1.0.0' });
  s.registerTool('add', { description: 'Add two numbers.', inputSchema: { a: z.number(), b: z.number() }, outputSchema: { sum: z.number() }, annotations: { readOnlyHint: true } },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }], structuredContent: { sum: a + b } }));
  s.registerTool('whoami', { description: 'The Authorization header it got.', inputSchema: {} }, async (_a, extra) => {
    const auth = String(extra.requestInfo?.headers?.authorization ?? '');
    seen.push(auth);
    return { content: [{ type: 'text', text: auth ? 'authorized' : 'anonymous' }] };
  });
  return s;
}

async function listen(handler: http.RequestListener): Promise<{ url: string; close: () => void }> {
  const srv = http.createServer(handler);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, close: () => { srv.closeAllConnections(); srv.close(); } };
}

test('a remote upstream over Streamable HTTP: headers with ${env:…}, structuredContent as data', async () => {
  const seen: string[] = [];
  const srv = await listen(async (req, res) => {
    const t = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await mcpServer(seen).connect(t);
    await t.handleRequest(req, res);
  });
  const h = await harness(`
upstreams:
  remote:
    url: "${srv.url}/mcp"
    headers: { Authorization: "Bearer \${env:TG_REMOTE_TOKEN}" }
rules:
  - { tool: "remote__*", decision: allow }
`, { TG_REMOTE_TOKEN: 'sekrit' });
  assert.equal(h.ups[0]!.kind, 'streamable-http');
  const r = await h.call('remote__add', { a: 2, b: 40 });
  assert.equal(r.ok, true, JSON.stringify(r.error));
  assert.deepEqual(r.data, { sum: 42 });
  assert.equal((await h.call('remote__whoami', {})).ok, true);
  assert.ok(seen.includes('Bearer sekrit'));
  h.close();
  srv.close();
});

test('a remote upstream that only speaks legacy SSE is reached through the fallback', async () => {
  const transports = new Map<string, SSEServerTransport>();
  const srv = await listen(async (req, res) => {
    if (req.method === 'GET' && req.url === '/sse') {
      const t = new SSEServerTransport('/messages', res);
      transports.set(t.sessionId, t);
      await mcpServer([]).connect(t);
      return;
    }
    if (req.method === 'POST' && req.url?.startsWith('/messages')) {
      const id = new URL(req.url, 'http://x').searchParams.get('sessionId') ?? '';
      const t = transports.get(id);
      if (t) return void t.handlePostMessage(req, res);
    }
    res.writeHead(405).end();
  });
  const h = await harness(`
upstreams:
  old:
    url: "${srv.url}/sse"
rules:
  - { tool: "old__*", decision: allow }
`);
  assert.equal(h.ups[0]!.kind, 'sse');
  const r = await h.call('old__add', { a: 1, b: 2 });
  assert.equal(r.ok, true, JSON.stringify(r.error));
  assert.equal(r.data.sum, 3);
  h.close();
  srv.close();
});

test('an unset ${env:NAME} is a start failure that names the variable, not an empty header', async () => {
  const h = await harness(`
upstreams:
  remote:
    url: "http://127.0.0.1:9/mcp"
    headers: { Authorization: "Bearer \${env:TG_NOT_SET_ANYWHERE}" }
`);
  const r = await h.call('remote__add', { a: 1, b: 2 });
  assert.equal(r.error?.code, 'IOError');
  assert.match(r.error.message, /TG_NOT_SET_ANYWHERE/);
  assert.ok(!existsSync(path.join(h.dir, 'state', 'toolgate', 'pins', 'remote.json')));
  h.close();
});
