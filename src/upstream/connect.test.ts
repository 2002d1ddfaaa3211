// The connection to an upstream, without the manager: the cap on one message's size (stdio and HTTP).
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';
import { test } from 'node:test';
import pino from 'pino';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { REPO_ROOT } from '../testing/helpers.js';
import { upstreamSchema } from './config.js';
import { connectUpstream } from './connect.js';

const FIXTURE = path.join(REPO_ROOT, 'tests', 'fixtures', 'upstream-fixture.mjs');

test('an upstream that sends one endless line is closed at the cap (the call fails, memory stays bounded); a long answer under the cap passes', async () => {
  const warnings: string[] = [];
  const log = pino({ level: 'warn' }, { write: (l: string) => { warnings.push(l); } });
  const cfg = upstreamSchema.parse({ command: [process.execPath, FIXTURE] });
  const conn = await connectUpstream('fx', cfg, { env: process.env, log, timeoutMs: 10_000, setup: () => {}, maxLineBytes: 1024 * 1024 });
  const stdout = (conn.transport as unknown as { _process: { stdout: Socket } })._process.stdout;
  let closed = false;
  const sdkClose = conn.transport.onclose;
  conn.transport.onclose = () => { sdkClose?.(); closed = true; };
  // Control: a 600 KiB answer (one line) is under the cap.
  const big = await conn.client.callTool({ name: 'big', arguments: { lines: 60_000 } });
  assert.match(JSON.stringify(big.content).slice(-40), /line 60000/);
  assert.equal(closed, false);
  await assert.rejects(conn.client.callTool({ name: 'flood', arguments: { kib: 64 * 1024 } }, undefined, { timeout: 20_000 }), /closed|Connection/i);
  assert.equal(closed, true, 'the transport was closed');
  assert.ok(warnings.some((w) => /longer than 1048576 bytes/.test(w)), warnings.join('\n'));
  // What toolgate took from the pipe (the SDK buffers at most that): stopped at the cap, nowhere
  // near the 64 MiB the upstream meant to send (it keeps them in its own memory, not ours).
  await new Promise((r) => setTimeout(r, 200));
  assert.ok(stdout.bytesRead < 8 * 1024 * 1024, `toolgate read ${stdout.bytesRead} bytes from the upstream`);
});

for (const json of [true, false]) {
  test(`an HTTP upstream (${json ? 'JSON' : 'SSE'} responses) that answers past the cap: that call fails at once and says why, the next call works`, async () => {
    const srv = http.createServer(async (req, res) => {
      const s = new McpServer({ name: 'big', version: '1.0.0' });
      s.registerTool('say', { description: 'n KiB of text.', inputSchema: { kib: z.number().int() } }, async ({ kib }) => ({ content: [{ type: 'text', text: 'w'.repeat(kib * 1024) }] }));
      const t = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: json });
      await s.connect(t);
      await t.handleRequest(req, res);
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const cfg = upstreamSchema.parse({ url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}/mcp` });
    const conn = await connectUpstream('web', cfg, { env: process.env, log: pino({ level: 'silent' }), timeoutMs: 10_000, setup: () => {}, maxLineBytes: 1024 * 1024 });
    assert.equal(conn.kind, 'streamable-http');
    const call = (kib: number) => conn.client.callTool({ name: 'say', arguments: { kib } }, undefined, { timeout: 20_000 });
    const ok = await call(600);
    assert.equal(JSON.stringify(ok.content).length > 600 * 1024, true, 'a 600 KiB answer is under the 1 MiB cap');
    // (The server runs in this process, so memory is not measured here: capped-fetch.test.ts and the stdio test do.)
    // The cap's own message (not the request timeout's): the call fails when the cap trips.
    await assert.rejects(call(48 * 1024), /upstream web sent (a response|an event line) longer than 1048576 bytes/);
    assert.equal(JSON.stringify((await call(1)).content).length > 1024, true, 'the connection still answers');
    await conn.client.close();
    srv.closeAllConnections();
    srv.close();
  });
}
