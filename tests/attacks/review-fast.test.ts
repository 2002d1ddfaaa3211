// Attack review of the stdio fast path: messages it takes must get what the SDK path gives.
// The SDK path is the one before notifications/initialized.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { byId, RawStdio, rawFixture, type Msg } from '../../src/testing/raw-stdio.js';

const fixture = () => rawFixture('tg-rfast-');
const gist = (r: Msg) => r.error ? { rpc: r.error.code } : { isError: r.result.isError, ok: r.result.structuredContent?.ok, code: r.result.structuredContent?.error?.code };

// Raw JSON so that "__proto__" and "constructor" arrive as own keys, as JSON.parse makes them.
const ARGS = [
  '{"path":"a.txt"}',
  '{"__proto__":{"path":"a.txt"}}',
  '{"path":"a.txt","__proto__":{"x":1}}',
  '{"constructor":{"prototype":{"x":1}},"path":"a.txt"}',
  '{"path":"a.txt","toString":"x"}',
];

test('fast path and SDK path give the same answer for prototype-key arguments', async (t) => {
  const f = fixture();
  const c = new RawStdio(f.ws, f.dir);
  t.after(() => { c.close(); f.cleanup(); });
  // Before notifications/initialized every call goes through the SDK; after it, the fast path.
  c.send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  await c.next(byId('init'));
  const viaSdk: Msg[] = [];
  for (const [i, args] of ARGS.entries()) {
    c.write(`{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":"read_file","arguments":${args}}}`);
    viaSdk.push(await c.next(byId(i)));
  }
  c.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  for (const [i, args] of ARGS.entries()) {
    c.write(`{"jsonrpc":"2.0","id":${100 + i},"method":"tools/call","params":{"name":"read_file","arguments":${args}}}`);
    const viaFast = await c.next(byId(100 + i));
    const fast = gist(viaFast), sdk = gist(viaSdk[i]);
    // The fast path must never accept what the SDK path refuses. Known divergence the other way:
    // an own "__proto__" key next to real ones is refused (InvalidArguments) by the fast path,
    // while the SDK's zod record rebuild turns it into the object's prototype and accepts.
    if (fast.ok) assert.deepEqual(fast, sdk, `arguments ${args}`);
    else if (sdk.ok) assert.ok(args.includes('"__proto__"'), `only __proto__ may diverge: ${args} ${JSON.stringify({ fast, sdk })}`);
    else assert.deepEqual(fast, sdk, `arguments ${args}`);
  }
});

test('requests written then stdin closed: every answer still arrives, stdout only JSON', async (t) => {
  const f = fixture();
  const c = new RawStdio(f.ws, f.dir);
  t.after(() => { c.close(); f.cleanup(); });
  await c.init('2025-06-18');
  for (let i = 0; i < 20; i++) c.send({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'read_file', arguments: { path: 'a.txt' } } });
  c.child.stdin.end();
  for (let i = 0; i < 20; i++) assert.equal((await c.next(byId(i))).result.isError, false);
});

const SLEEP = 'version: 1\nrules:\n  - tool: run_command\n    command: ["sleep"]\n    decision: allow\n';
function withPolicy(f: ReturnType<typeof fixture>) {
  writeFileSync(path.join(f.dir, 'policy.yaml'), SLEEP);
  return ['--policy', path.join(f.dir, 'policy.yaml')];
}

test('a cancel for the number 7 does not cancel the call "7"; a duplicate id in flight is answered twice', async (t) => {
  const f = fixture();
  const c = new RawStdio(f.ws, f.dir, withPolicy(f));
  t.after(() => { c.close(); f.cleanup(); });
  await c.init('2025-06-18');
  c.send({ jsonrpc: '2.0', id: '7', method: 'tools/call', params: { name: 'run_command', arguments: { command: 'sleep 1' } } });
  c.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7, reason: 'not yours' } });
  // The same id again while the first is in flight: the SDK path takes it; both are answered.
  c.send({ jsonrpc: '2.0', id: '7', method: 'tools/call', params: { name: 'read_file', arguments: { path: 'a.txt' } } });
  const first = await c.next(byId('7'));
  const second = await c.next(byId('7'));
  const texts = [first, second].map((m) => JSON.stringify(m.result.structuredContent?.data ?? m.result));
  assert.equal(first.result.isError, false, JSON.stringify(first));
  assert.equal(second.result.isError, false, JSON.stringify(second));
  assert.ok(texts.some((x) => x.includes('alpha')), 'the read was answered');
});

test('the audit record of every fast-path call is on disk when its answer arrives', async (t) => {
  const f = fixture();
  const c = new RawStdio(f.ws, f.dir);
  t.after(() => { c.close(); f.cleanup(); });
  await c.init('2025-06-18');
  const audit = path.join(f.ws, '.toolgate', 'audit.jsonl');
  for (let i = 0; i < 10; i++) c.send({ jsonrpc: '2.0', id: 500 + i, method: 'tools/call', params: { name: 'read_file', arguments: { path: 'a.txt' } } });
  for (let i = 0; i < 10; i++) {
    const m = await c.next(byId(500 + i));
    const callId = m.result.structuredContent.tool_call_id;
    const onDisk = readFileSync(audit, 'utf8');
    assert.ok(onDisk.includes(callId), `audit record of ${callId} written before its answer`);
  }
});

test('SIGTERM while fast-path answers are corked: the server exits and stdout holds only JSON-RPC lines', async (t) => {
  const f = fixture();
  const c = new RawStdio(f.ws, f.dir);
  t.after(() => { c.close(); f.cleanup(); });
  await c.init('2025-06-18');
  for (let i = 0; i < 30; i++) c.send({ jsonrpc: '2.0', id: 900 + i, method: 'tools/call', params: { name: 'read_file', arguments: { path: 'a.txt' } } });
  await c.next(byId(900));
  const exited = new Promise<number | null>((r) => c.child.once('exit', (code) => r(code)));
  c.child.kill('SIGTERM');
  await exited; // RawStdio throws on any non-JSON line on stdout
  for (const v of c.queued()) assert.equal((v as Msg).jsonrpc, '2.0', JSON.stringify(v));
});
