import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import pino from 'pino';
import { z } from 'zod';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { defineTool } from '../../src/core/define-tool.js';
import { Runtime } from '../../src/core/runtime.js';
import { defaultPolicy } from '../../src/policy/load.js';
import { startHttpServer, type HttpServerHandle } from '../../src/server/http.js';
import { tempDir } from '../../src/testing/helpers.js';
import { displayTool } from '../../src/tools/display/display.js';

/** A tool that runs until the test releases it, or until its signal fires. */
function gateTool() {
  let release: () => void = () => {};
  let started: () => void = () => {};
  const startedP = new Promise<void>((r) => { started = r; });
  const tool = defineTool({
    name: 'wait_here', version: '1.0.0', title: 'Wait', description: 'test tool',
    input: z.strictObject({}), output: z.object({ done: z.boolean() }),
    risk: 'low', permissions: [], side_effects: 'none',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    plan: () => ({ targets: [], summary: 'wait' }),
    async execute(_a, _p, ctx) {
      started();
      await new Promise<void>((resolve, reject) => {
        release = resolve;
        ctx.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
      });
      return { data: { done: true }, text: 'done' };
    },
  });
  return { tool, release: () => release(), started: startedP };
}

async function start(opts: { grace?: number } = {}) {
  const ws = tempDir('tg-http-inproc-');
  const gate = gateTool();
  const rt = new Runtime({ tools: [displayTool, gate.tool], policy: defaultPolicy(), log: pino({ level: 'silent' }), replay: { command: ['toolgate'], flags: [] } });
  const h: HttpServerHandle = await startHttpServer(rt, [ws.dir], { host: '127.0.0.1', port: 0, token: 'a-test-token-of-some-length', idleMs: 60_000, shutdownGraceMs: opts.grace ?? 10_000 });
  const transport = new StreamableHTTPClientTransport(new URL(`${h.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${h.token}` } } });
  const client = new Client({ name: 't', version: '1' });
  await client.connect(transport);
  const audit = () => readFileSync(path.join(ws.dir, '.toolgate', 'audit.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  return { ws, gate, rt, h, client, transport, audit };
}

test('idle sweep closes the session and disposes what it owns (background processes)', async () => {
  const s = await start();
  await s.client.callTool({ name: 'display', arguments: { content: 'x' } });
  const sid = s.transport.sessionId!;
  const entry = s.h.sessions.get(sid)!;
  assert.ok(entry);
  let disposed = 0;
  entry.mcp.session.resources.set('bg_1', { dispose: () => { disposed++; } });
  // Not idle yet: nothing happens.
  assert.equal(await s.h.sessions.sweep(Date.now()), 0);
  assert.equal(disposed, 0);
  // Past the idle time: closed, resources disposed, the id is gone.
  assert.equal(await s.h.sessions.sweep(Date.now() + 60_001), 1);
  assert.equal(disposed, 1);
  assert.equal(s.h.sessions.get(sid), undefined);
  await assert.rejects(s.client.callTool({ name: 'display', arguments: { content: 'again' } }));
  await s.client.close().catch(() => {});
  await s.h.close();
  s.ws.cleanup();
});

test('a session with a call in flight is not swept, however old its last traffic', async () => {
  const s = await start();
  const call = s.client.callTool({ name: 'wait_here', arguments: {} });
  await s.gate.started;
  assert.equal(await s.h.sessions.sweep(Date.now() + 10 * 60 * 60_000), 0);
  s.gate.release();
  const r = await call;
  assert.equal((r.structuredContent as { ok: boolean }).ok, true);
  await s.client.close();
  await s.h.close();
  s.ws.cleanup();
});

test('shutdown lets an in-flight call finish, then closes sessions and the audit', async () => {
  const s = await start();
  const call = s.client.callTool({ name: 'wait_here', arguments: {} });
  await s.gate.started;
  const closing = s.h.close('test');
  setImmediate(() => s.gate.release());
  const r = await call;
  assert.equal((r.structuredContent as { ok: boolean }).ok, true);
  await closing;
  assert.equal(s.h.sessions.size, 0);
  const rec = s.audit().find((x) => x.tool === 'wait_here');
  assert.equal(rec?.ok, true);
  await s.client.close().catch(() => {});
  s.ws.cleanup();
});

test('shutdown cancels a call that outlives the grace time; its audit record is still written', async () => {
  const s = await start({ grace: 100 });
  const ac = new AbortController();
  const call = s.client.callTool({ name: 'wait_here', arguments: {} }, undefined, { signal: ac.signal }).catch((e: unknown) => e);
  await s.gate.started;
  await s.h.close('test');
  ac.abort(); // the server is gone: no answer will come
  assert.equal(s.h.sessions.size, 0);
  const rec = s.audit().find((x) => x.tool === 'wait_here');
  assert.equal(rec?.ok, false);
  assert.equal(rec?.error_code, 'Cancelled');
  await call;
  await s.client.close().catch(() => {});
  s.ws.cleanup();
});
