// The stdio connection to an upstream, without the manager: the cap on one message's size.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import pino from 'pino';
import { REPO_ROOT } from '../testing/helpers.js';
import { upstreamSchema } from './config.js';
import { connectUpstream } from './connect.js';

const FIXTURE = path.join(REPO_ROOT, 'tests', 'fixtures', 'upstream-fixture.mjs');

test('an upstream that sends one endless line is closed at the cap (the call fails, memory stays bounded); a long answer under the cap passes', async () => {
  const warnings: string[] = [];
  const log = pino({ level: 'warn' }, { write: (l: string) => { warnings.push(l); } });
  const cfg = upstreamSchema.parse({ command: [process.execPath, FIXTURE] });
  const conn = await connectUpstream('fx', cfg, { env: process.env, log, timeoutMs: 10_000, setup: () => {}, maxLineBytes: 1024 * 1024 });
  let closed = false;
  const sdkClose = conn.transport.onclose;
  conn.transport.onclose = () => { sdkClose?.(); closed = true; };
  // Control: a 600 KiB answer (one line) is under the cap.
  const big = await conn.client.callTool({ name: 'big', arguments: { lines: 60_000 } });
  assert.match(JSON.stringify(big.content).slice(-40), /line 60000/);
  assert.equal(closed, false);
  const rss0 = process.memoryUsage().rss;
  await assert.rejects(conn.client.callTool({ name: 'flood', arguments: { kib: 64 * 1024 } }, undefined, { timeout: 20_000 }), /closed|Connection/i);
  assert.equal(closed, true, 'the transport was closed');
  assert.ok(warnings.some((w) => /longer than 1048576 bytes/.test(w)), warnings.join('\n'));
  assert.ok(process.memoryUsage().rss - rss0 < 48 * 1024 * 1024, 'nowhere near the 64 MiB the upstream sent was buffered');
});
