// The stdio fast path answers a plain tools/call without the SDK's dispatch. These tests hold it
// to what the SDK path does: the same result, the SDK's own errors for what it declines, no
// answer to a request the client cancelled (and an audit record that says so), and calls in
// flight that do not block one another.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { byId, RawStdio, rawFixture, type Msg } from '../../src/testing/raw-stdio.js';

function fixture(policyYaml?: string) {
  const f = rawFixture('tg-fast-');
  const args: string[] = [];
  if (policyYaml) {
    writeFileSync(path.join(f.dir, 'policy.yaml'), policyYaml);
    args.push('--policy', path.join(f.dir, 'policy.yaml'));
  }
  return { ...f, args };
}

/** A result without what differs from call to call (ids, timings). */
function stable(result: Msg): Msg {
  const sc = { ...result.structuredContent };
  delete sc.tool_call_id;
  delete sc.trace_id;
  delete sc.stats;
  delete sc.data?.mtime_ms;
  return { ...result, structuredContent: sc };
}

test('a tools/call answered by the fast path equals the one the SDK answers (before notifications/initialized)', async () => {
  const f = fixture();
  const c = new RawStdio(f.ws, f.dir);
  try {
    c.send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    await c.next(byId('init'));
    // Before initialized the fast path stands aside: this one goes through the SDK.
    c.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read_file', arguments: { path: 'a.txt' } } });
    const viaSdk = await c.next(byId(1));
    c.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    c.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'read_file', arguments: { path: 'a.txt' } } });
    const viaFast = await c.next(byId(2));
    assert.equal(viaFast.result.isError, false);
    assert.match(viaFast.result.content[0].text, /alpha/);
    assert.deepEqual(stable(viaFast.result), stable(viaSdk.result));
    // An error envelope too (a missing file), with a string id.
    c.send({ jsonrpc: '2.0', id: 'x', method: 'tools/call', params: { name: 'read_file', arguments: { path: 'missing.txt' } } });
    const missing = await c.next(byId('x'));
    assert.equal(missing.result.isError, true);
    assert.equal(missing.result.structuredContent.error.code, 'NotFound');
  } finally {
    c.close();
    f.cleanup();
  }
});

test('what the fast path declines gets the SDK\'s own answer: bad params, unknown tools, odd ids', async () => {
  const f = fixture();
  const c = new RawStdio(f.ws, f.dir);
  try {
    await c.init('2025-06-18');
    const cases: Array<[unknown, (m: Msg) => void]> = [
      // The SDK refuses these with a JSON-RPC error (its dispatch reports -32603; a bad token fails its message schema: -32600).
      [{ name: 'read_file', arguments: ['a.txt'] }, (m) => assert.match(m.error?.message, /arguments/)],
      [{ arguments: { path: 'a.txt' } }, (m) => assert.match(m.error?.message, /name/)],
      [{ name: 7 }, (m) => assert.match(m.error?.message, /name/)],
      [{ name: 'read_file', arguments: { path: 'a.txt' }, _meta: { progressToken: 1.5 } }, (m) => assert.equal(m.error?.code, -32600)],
      [{ name: 'no_such_tool', arguments: {} }, (m) => assert.equal(m.result?.structuredContent?.error?.code, 'ToolNotFound')],
    ];
    let id = 100;
    for (const [params, check] of cases) {
      c.send({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params });
      check(await c.next(byId(id)));
    }
    // A fractional id is not a JSON-RPC request id the SDK accepts: -32600 (naming the id), and the server goes on.
    c.send({ jsonrpc: '2.0', id: 1.5, method: 'tools/call', params: { name: 'read_file', arguments: { path: 'a.txt' } } });
    assert.equal((await c.next((v) => v.error?.code === -32600)).id, 1.5);
    c.send({ jsonrpc: '2.0', id: 'after', method: 'ping' });
    assert.deepEqual((await c.next(byId('after'))).result, {});
  } finally {
    c.close();
    f.cleanup();
  }
});

test('a call the client cancels gets no answer, is audited as cancelled, and does not hold up the next call', async () => {
  const f = fixture('version: 1\nrules:\n  - tool: run_command\n    command: ["sleep"]\n    decision: allow\n');
  const c = new RawStdio(f.ws, f.dir, f.args);
  try {
    await c.init('2025-06-18');
    c.send({ jsonrpc: '2.0', id: 'slow', method: 'tools/call', params: { name: 'run_command', arguments: { command: 'sleep 30' } } });
    // While it runs, another call is answered (the fast path does not serialise calls).
    c.send({ jsonrpc: '2.0', id: 'quick', method: 'tools/call', params: { name: 'read_file', arguments: { path: 'a.txt' } } });
    assert.equal((await c.next(byId('quick'))).result.isError, false);
    c.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'slow', reason: 'user stopped it' } });
    // The audit record of the cancelled call is written when it ends: wait for it.
    const audit = path.join(f.ws, '.toolgate', 'audit.jsonl');
    let rec: Msg | undefined;
    for (let i = 0; i < 100 && !rec; i++) {
      await new Promise((r) => setTimeout(r, 100));
      rec = readFileSync(audit, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Msg).find((r) => r.tool === 'run_command');
    }
    assert.ok(rec, 'the cancelled call has an audit record');
    assert.equal(rec.error_code, 'Cancelled');
    c.send({ jsonrpc: '2.0', id: 'after', method: 'ping' });
    await c.next(byId('after'));
    assert.equal(c.queued().some((v) => byId('slow')(v as Msg)), false, 'no answer to the cancelled request');
  } finally {
    c.close();
    f.cleanup();
  }
});
