import assert from 'node:assert/strict';
import { PassThrough, Writable } from 'node:stream';
import { test } from 'node:test';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { LineStdioTransport } from './stdio-transport.js';

function rig(maxLineBytes?: number) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const t = new LineStdioTransport(stdin, stdout, maxLineBytes);
  const got: JSONRPCMessage[] = [];
  const written: unknown[] = [];
  let buf = '';
  stdout.on('data', (c: Buffer) => {
    buf += c.toString();
    for (let nl = buf.indexOf('\n'); nl !== -1; nl = buf.indexOf('\n')) {
      written.push(JSON.parse(buf.slice(0, nl)));
      buf = buf.slice(nl + 1);
    }
  });
  t.onmessage = (m) => got.push(m);
  const tick = () => new Promise((r) => setImmediate(r));
  return { stdin, t, got, written, tick };
}

test('messages split across chunks, several in one chunk, CRLF and blank lines', async () => {
  const r = rig();
  await r.t.start();
  r.stdin.write('{"jsonrpc":"2.0","id":1,"met');
  r.stdin.write('hod":"ping"}\r\n\n{"jsonrpc":"2.0","method":"a"}\n{"jsonrpc":"2.0","id":2,"method":"b"}\n');
  await r.tick();
  assert.deepEqual(r.got.map((m) => ('method' in m ? m.method : null)), ['ping', 'a', 'b']);
  assert.deepEqual(r.written, []);
});

test('a batch: members fed one by one, the answers written as one array once all are in', async () => {
  const r = rig();
  await r.t.start();
  r.stdin.write('[{"jsonrpc":"2.0","id":1,"method":"x"},{"jsonrpc":"2.0","method":"note"},{"jsonrpc":"2.0","id":"b","method":"y"}]\n');
  await r.tick();
  assert.equal(r.got.length, 3);
  await r.t.send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } } as JSONRPCMessage);
  await r.t.send({ jsonrpc: '2.0', id: 'b', result: {} } as JSONRPCMessage);
  await r.tick();
  assert.deepEqual(r.written, [{ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } }], 'notifications go out at once; the batch waits');
  await r.t.send({ jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'nope' } } as JSONRPCMessage);
  await r.tick();
  assert.deepEqual(r.written[1], [{ jsonrpc: '2.0', id: 'b', result: {} }, { jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'nope' } }]);
  // Later answers with the same id are not held back.
  await r.t.send({ jsonrpc: '2.0', id: 1, result: {} } as JSONRPCMessage);
  await r.tick();
  assert.deepEqual(r.written[2], { jsonrpc: '2.0', id: 1, result: {} });
});

test('parse errors, invalid requests, empty and notification-only batches', async () => {
  const r = rig();
  await r.t.start();
  r.stdin.write('not json\n{"id":7,"method":"x"}\n[]\n[{"jsonrpc":"2.0","method":"n"}]\n"str"\n');
  await r.tick();
  assert.deepEqual(r.written.map((w) => (w as { error: { code: number } }).error.code), [-32700, -32600, -32600, -32600]);
  assert.deepEqual(r.written.map((w) => (w as { id: unknown }).id), [null, 7, null, null], 'the id is echoed when the line had a usable one');
  assert.equal(r.got.length, 1, 'the notification in the batch was delivered');
});

test('an over-long line is refused once and dropped; the next line is read', async () => {
  const r = rig(64);
  await r.t.start();
  r.stdin.write(`{"jsonrpc":"2.0","id":1,"method":"${'x'.repeat(40)}`);
  r.stdin.write(`${'y'.repeat(100)}`);
  r.stdin.write(`${'z'.repeat(100)}"}\n{"jsonrpc":"2.0","id":2,"method":"ok"}\n`);
  await r.tick();
  assert.equal(r.written.length, 1);
  assert.equal((r.written[0] as { error: { code: number } }).error.code, -32600);
  assert.deepEqual(r.got.map((m) => ('id' in m ? m.id : null)), [2]);
});

test('close stops reading and reports it', async () => {
  const r = rig();
  let closed = false;
  r.t.onclose = () => { closed = true; };
  await r.t.start();
  await r.t.close();
  r.stdin.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
  await r.tick();
  assert.equal(closed, true);
  assert.equal(r.got.length, 0);
});

test('answers written in one turn while others are owed leave together after it; close() writes what is still held', async () => {
  const r = rig();
  await r.t.start();
  r.stdin.write('{"jsonrpc":"2.0","id":1,"method":"x"}\n{"jsonrpc":"2.0","id":2,"method":"x"}\n{"jsonrpc":"2.0","id":3,"method":"x"}\n{"jsonrpc":"2.0","id":4,"method":"x"}\n');
  await r.tick();
  const chunks: string[] = [];
  (r.t as unknown as { stdout: PassThrough }).stdout.on('data', (c: Buffer) => chunks.push(c.toString()));
  void r.t.send({ jsonrpc: '2.0', id: 1, result: {} } as JSONRPCMessage);
  void r.t.send({ jsonrpc: '2.0', id: 2, result: {} } as JSONRPCMessage);
  // Held until the turn ends: nothing on the wire yet.
  assert.deepEqual(chunks, []);
  await r.tick();
  assert.deepEqual(r.written.map((m) => (m as { id: number }).id), [1, 2]);
  void r.t.send({ jsonrpc: '2.0', id: 3, result: {} } as JSONRPCMessage);
  assert.ok(!chunks.join('').includes('"id":3'), 'held: id 4 is still owed');
  await r.t.close(); // before the turn ends (as on shutdown): still written
  assert.ok(chunks.join('').includes('"id":3'));
});

/** A stdout that records each write the transport's stream hands down (a corked run arrives as one writev). */
function recordingRig(highWaterMark = 16 * 1024) {
  const stdin = new PassThrough();
  const writes: string[][] = [];
  const stdout = new Writable({
    highWaterMark,
    write(chunk: Buffer, _enc, cb) { writes.push([chunk.toString()]); cb(); },
    writev(chunks, cb) { writes.push(chunks.map((c) => String(c.chunk))); cb(); },
  });
  const t = new LineStdioTransport(stdin, stdout);
  const tick = () => new Promise((r) => setImmediate(r));
  return { stdin, stdout, t, writes, tick };
}

test('answers finished together while others are owed leave in one write; the last one owed leaves at once', async () => {
  const r = recordingRig();
  await r.t.start();
  r.stdin.write('{"jsonrpc":"2.0","id":1,"method":"x"}\n{"jsonrpc":"2.0","id":2,"method":"x"}\n{"jsonrpc":"2.0","id":3,"method":"x"}\n');
  await r.tick();
  void r.t.send({ jsonrpc: '2.0', id: 1, result: {} } as JSONRPCMessage);
  void r.t.send({ jsonrpc: '2.0', id: 2, result: {} } as JSONRPCMessage);
  assert.equal(r.writes.length, 0, 'held while id 3 is still owed');
  await r.tick();
  assert.equal(r.writes.length, 1);
  assert.deepEqual(r.writes[0]!.map((w: string) => JSON.parse(w).id), [1, 2], 'both answers in one write');
  void r.t.send({ jsonrpc: '2.0', id: 3, result: {} } as JSONRPCMessage);
  assert.equal(r.writes.length, 2, 'the last answer owed is written before send returns, not a tick later');
  assert.equal(JSON.parse(r.writes[1]![0]!).id, 3);
  // A cancelled request is not owed any more: the next answer is not held behind it.
  r.stdin.write('{"jsonrpc":"2.0","id":4,"method":"x"}\n{"jsonrpc":"2.0","id":5,"method":"x"}\n{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}\n');
  await r.tick();
  void r.t.send({ jsonrpc: '2.0', id: 5, result: {} } as JSONRPCMessage);
  assert.equal(r.writes.length, 3);
  await r.t.close();
});

test('corked answers leave once they fill a pipe (64 KB), not only at the end of the turn', async () => {
  const r = recordingRig(1 << 20);
  await r.t.start();
  const ids = Array.from({ length: 12 }, (_, i) => i + 1);
  r.stdin.write(ids.map((id) => `{"jsonrpc":"2.0","id":${id},"method":"x"}\n`).join(''));
  await r.tick();
  // 11 answers of ~10 KB in one turn, while the 12th is still owed.
  for (const id of ids.slice(0, 11)) void r.t.send({ jsonrpc: '2.0', id, result: { pad: 'x'.repeat(10_000) } } as JSONRPCMessage);
  assert.equal(r.writes.length, 1, 'the first seven (over 64 KB) left within the turn');
  assert.deepEqual(r.writes[0]!.map((w: string) => JSON.parse(w).id), [1, 2, 3, 4, 5, 6, 7]);
  await r.tick();
  assert.deepEqual(r.writes.map((w) => w.map((x: string) => JSON.parse(x).id)), [[1, 2, 3, 4, 5, 6, 7], [8, 9, 10, 11]], 'the rest together at the end of the turn');
  void r.t.send({ jsonrpc: '2.0', id: 12, result: {} } as JSONRPCMessage);
  assert.equal(r.writes.length, 3);
  await r.t.close();
});

test('a full pipe: every write waits on one shared drain, not a listener each', async () => {
  const r = recordingRig(64);
  await r.t.start();
  const ids = Array.from({ length: 40 }, (_, i) => i + 1);
  r.stdin.write(ids.map((id) => `{"jsonrpc":"2.0","id":${id},"method":"x"}\n`).join(''));
  await r.tick();
  const sent = ids.map((id) => r.t.send({ jsonrpc: '2.0', id, result: { pad: 'x'.repeat(100) } } as JSONRPCMessage));
  assert.ok(r.stdout.listenerCount('drain') <= 1, `drain listeners: ${r.stdout.listenerCount('drain')}`);
  await Promise.all(sent);
  assert.deepEqual(r.writes.flat().map((w) => JSON.parse(w).id), ids);
  await r.t.close();
});
