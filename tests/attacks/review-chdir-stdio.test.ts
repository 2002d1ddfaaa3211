// Review of the stdio transport's answers (corked only while others are owed, one shared drain
// wait) and of the JSON-RPC batches it answers: no answer may be lost, held for good or reordered.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { REPO_ROOT } from '../../src/testing/helpers.js';
import { byId, RawStdio, rawFixture } from '../../src/testing/raw-stdio.js';
import { LineStdioTransport } from '../../src/server/stdio-transport.js';

const TSX = import.meta.resolve('tsx');
const line = (m: object) => `${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`;

function rig() {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const t = new LineStdioTransport(stdin, stdout);
  const written: unknown[] = [];
  let buf = '';
  stdout.on('data', (c: Buffer) => {
    buf += c.toString();
    for (let nl = buf.indexOf('\n'); nl !== -1; nl = buf.indexOf('\n')) { written.push(JSON.parse(buf.slice(0, nl))); buf = buf.slice(nl + 1); }
  });
  return { stdin, t, written, tick: () => new Promise((r) => setImmediate(r)) };
}

// A request the client cancels gets no answer (MCP; the SDK and the fast path both drop it). The
// batch it was part of waited for that answer for ever: the others' answers were never written.
test('a batch with a member the client cancels: the other members\' answers are still written (as one array)', async () => {
  const r = rig();
  await r.t.start();
  r.stdin.write(`[${line({ id: 1, method: 'x' }).trim()},${line({ id: 2, method: 'x' }).trim()}]\n`);
  await r.tick();
  await r.t.send({ jsonrpc: '2.0', id: 2, result: { two: true } } as JSONRPCMessage);
  r.stdin.write(line({ method: 'notifications/cancelled', params: { requestId: 1, reason: 'user' } }));
  await r.tick();
  await r.tick();
  assert.deepEqual(r.written, [[{ jsonrpc: '2.0', id: 2, result: { two: true } }]], 'the answer to 2, in its batch\'s array');
  // A batch whose every request is cancelled gets no reply at all (nothing to say).
  r.stdin.write(`[${line({ id: 3, method: 'x' }).trim()}]\n`);
  await r.tick();
  r.stdin.write(line({ method: 'notifications/cancelled', params: { requestId: 3 } }));
  await r.tick();
  assert.equal(r.written.length, 1);
  // A cancellation sent inside a batch counts too.
  r.stdin.write(`[${line({ id: 4, method: 'x' }).trim()},${line({ id: 5, method: 'x' }).trim()}]\n`);
  await r.tick();
  r.stdin.write(`[${line({ method: 'notifications/cancelled', params: { requestId: 4 } }).trim()}]\n`);
  await r.t.send({ jsonrpc: '2.0', id: 5, result: {} } as JSONRPCMessage);
  await r.tick();
  assert.deepEqual(r.written[1], [{ jsonrpc: '2.0', id: 5, result: {} }]);
  await r.t.close();
});

test('end to end: a batch of a slow call and list_dir, the slow call cancelled: list_dir\'s answer arrives', { timeout: 60_000 }, async (t) => {
  const f = rawFixture('tg-rc-batch-');
  const s = new RawStdio(f.ws, f.dir);
  t.after(() => { s.close(); f.cleanup(); });
  await s.init('2025-03-26');
  s.send([
    { jsonrpc: '2.0', id: 'slow', method: 'tools/call', params: { name: 'run_command', arguments: { command: 'sleep 20' } } },
    { jsonrpc: '2.0', id: 'fast', method: 'tools/call', params: { name: 'list_dir', arguments: {} } },
  ]);
  await new Promise((r) => setTimeout(r, 500));
  s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'slow', reason: 'changed my mind' } });
  const batch = await s.next((v) => Array.isArray(v), 10_000);
  assert.deepEqual(batch.map((m: { id: unknown }) => m.id), ['fast']);
  assert.equal(batch[0].result.structuredContent.ok, true);
  s.send({ jsonrpc: '2.0', id: 'after', method: 'ping' });
  await s.next(byId('after'));
});

// The process exits in the same turn as an answer held while another is owed (a shutdown, a fatal
// error): the answer is still on the wire (the transport uncorks on 'exit'; stdout to a pipe is
// synchronous on Linux).
test('an answer held while another is owed is not lost when the process exits in the same turn', { timeout: 30_000 }, async () => {
  const child = spawn(process.execPath, ['--import', TSX, '--input-type=module', '-e', `
    import { LineStdioTransport } from ${JSON.stringify(path.join(REPO_ROOT, 'src/server/stdio-transport.ts'))};
    const t = new LineStdioTransport();
    const seen = [];
    t.onmessage = (m) => {
      seen.push(m.id);
      if (seen.length < 2) return;
      void t.send({ jsonrpc: '2.0', id: 1, result: { last: 'words' } });
      process.exit(0);
    };
    await t.start();
  `], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => { out += c.toString(); });
  child.stdin.write(line({ id: 1, method: 'x' }) + line({ id: 2, method: 'x' }));
  const code = await new Promise((r) => child.once('exit', r));
  assert.equal(code, 0);
  assert.deepEqual(out.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)), [{ jsonrpc: '2.0', id: 1, result: { last: 'words' } }]);
});

// A client that keeps many requests owed (never answered: slow calls, ids sent twice, a
// cancellation for an id never sent) cannot hold an answer past the turn it was written in.
test('requests owed for good (slow, duplicate ids, odd cancellations): every answer still leaves within its turn, in order', async () => {
  const r = rig();
  await r.t.start();
  r.stdin.write(Array.from({ length: 500 }, (_, i) => line({ id: `slow${i}`, method: 'x' })).join(''));
  r.stdin.write(line({ id: 7, method: 'x' }) + line({ id: 7, method: 'x' }) + line({ method: 'notifications/cancelled', params: { requestId: 'never-sent' } }));
  await r.tick();
  for (const n of [1, 2, 3]) {
    void r.t.send({ jsonrpc: '2.0', id: 7, result: { n } } as JSONRPCMessage);
    void r.t.send({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: n } } as JSONRPCMessage);
    await r.tick();
    assert.deepEqual(r.written.slice(-2), [{ jsonrpc: '2.0', id: 7, result: { n } }, { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: n } }], `turn ${n}: both out, in order`);
  }
  await r.t.close();
});

// The legacy SSE transport holds batch answers the same way (BatchingSseTransport).
test('legacy SSE: a batch with a member the client cancels still gets the other answers (one message event)', { timeout: 60_000 }, async (t) => {
  const { spawnHttpServer } = await import('../../src/server/http-spawn.js');
  const f = rawFixture('tg-rc-sse-');
  const srv = await spawnHttpServer(['--workspace', f.ws], { env: { XDG_STATE_HOME: path.join(f.dir, 's'), XDG_RUNTIME_DIR: path.join(f.dir, 'r') } });
  const abort = new AbortController();
  t.after(async () => { abort.abort(); await srv.stop(); f.cleanup(); });
  const auth = { authorization: `Bearer ${srv.token}` };
  const stream = await fetch(`${srv.url}/sse`, { headers: { ...auth, accept: 'text/event-stream' }, signal: abort.signal });
  const reader = stream.body!.getReader();
  let buf = '';
  const events: Array<{ event: string; data: string }> = [];
  const nextEvent = async (pick: (e: { event: string; data: string }) => boolean, ms = 10_000) => {
    const end = Date.now() + ms;
    for (;;) {
      const i = events.findIndex(pick);
      if (i !== -1) return events.splice(i, 1)[0]!;
      const left = end - Date.now();
      if (left <= 0) throw new Error(`no such event; got ${JSON.stringify(events).slice(0, 300)}`);
      const got = await Promise.race([reader.read(), new Promise<null>((r) => setTimeout(() => r(null), left))]);
      if (!got || got.done) continue;
      buf += Buffer.from(got.value).toString();
      for (let sep = buf.indexOf('\n\n'); sep !== -1; sep = buf.indexOf('\n\n')) {
        const block = buf.slice(0, sep);
        buf = buf.slice(sep + 2);
        events.push({ event: /^event: (.*)$/m.exec(block)?.[1] ?? 'message', data: block.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n') });
      }
    }
  };
  const endpoint = (await nextEvent((e) => e.event === 'endpoint')).data;
  const post = (body: unknown) => fetch(new URL(endpoint, srv.url), { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await post({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  await nextEvent((e) => e.data.includes('"init"'));
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  await post([
    { jsonrpc: '2.0', id: 'slow', method: 'tools/call', params: { name: 'run_command', arguments: { command: 'sleep 20' } } },
    { jsonrpc: '2.0', id: 'fast', method: 'tools/call', params: { name: 'list_dir', arguments: {} } },
  ]);
  await new Promise((r) => setTimeout(r, 500));
  await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'slow' } });
  const batch = JSON.parse((await nextEvent((e) => e.event === 'message' && e.data.startsWith('['))).data) as Array<{ id: unknown }>;
  assert.deepEqual(batch.map((m) => m.id), ['fast']);
});
