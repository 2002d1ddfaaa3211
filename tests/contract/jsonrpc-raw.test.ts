// Raw JSON-RPC over stdio and HTTP, as a client nobody here wrote would speak it: every protocol
// version from 2024-11-05 on, batches (answered as one array; a batch of notifications gets
// no reply), malformed lines (-32700 / -32600 with id null, and the server keeps going).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { spawnHttpServer } from '../../src/server/http-spawn.js';
import { byId, RawStdio, rawFixture, type Msg } from '../../src/testing/raw-stdio.js';

const VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'] as const;

const fixture = () => rawFixture('tg-raw-');

const isArray = (v: unknown) => Array.isArray(v);

for (const version of VERSIONS) {
  test(`stdio ${version}: initialize, tools/list, tools/call, a batch and malformed lines`, async () => {
    const f = fixture();
    const c = new RawStdio(f.ws, f.dir);
    try {
      const init = await c.init(version);
      assert.equal(init.result.protocolVersion, version, 'the server speaks the version the client asked for');

      c.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
      const list = await c.next(byId(1));
      assert.ok(list.result.tools.some((t: Msg) => t.name === 'read_file'));

      c.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'read_file', arguments: { path: 'a.txt' } } });
      const read = await c.next(byId(2));
      assert.equal(read.result.isError, false);
      assert.match(read.result.content[0].text, /alpha/, 'the text block carries the content');

      // A batch: two requests and a notification → one array with both answers.
      c.send([
        { jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'read_file', arguments: { path: 'a.txt' } } },
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 999, reason: 'none' } },
        { jsonrpc: '2.0', id: 11, method: 'ping' },
      ]);
      const batch = await c.next(isArray);
      assert.deepEqual(batch.map((m: Msg) => m.id).sort(), [10, 11]);
      assert.equal(batch.find((m: Msg) => m.id === 10).result.isError, false);
      assert.deepEqual(batch.find((m: Msg) => m.id === 11).result, {});

      // Malformed lines: answered with id null, the server keeps going.
      c.write('{"jsonrpc": "2.0", "id": 3, "method": ');
      const parse = await c.next(byId(null));
      assert.equal(parse.error.code, -32700);
      c.send({ hello: 'world' });
      const invalid = await c.next(byId(null));
      assert.equal(invalid.error.code, -32600);
      c.send([]);
      assert.equal((await c.next(byId(null))).error.code, -32600, 'an empty batch is an invalid request');
      // A batch with a bad member: its error sits in the batch's answer beside the good one.
      c.send([{ jsonrpc: '2.0', id: 20, method: 'ping' }, 42]);
      const mixed = await c.next(isArray);
      assert.deepEqual(mixed.find((m: Msg) => m.id === 20)?.result, {});
      assert.equal(mixed.find((m: Msg) => m.id === null)?.error.code, -32600);
      // Notifications only → no reply; the next request is answered, nothing arrived before it.
      c.send([{ jsonrpc: '2.0', method: 'notifications/initialized' }]);
      c.send({ jsonrpc: '2.0', id: 4, method: 'ping' });
      assert.deepEqual((await c.next(byId(4))).result, {});
      assert.deepEqual(c.queued(), [], 'nothing else was sent');
    } finally {
      c.close();
      f.cleanup();
    }
  });
}

test('stdio: a batch whose answers finish out of order is still one array, ids matched', async () => {
  const f = fixture();
  const c = new RawStdio(f.ws, f.dir);
  try {
    await c.init('2025-03-26');
    c.send([
      { jsonrpc: '2.0', id: 'slow', method: 'tools/call', params: { name: 'grep', arguments: { pattern: 'beta' } } },
      { jsonrpc: '2.0', id: 'fast', method: 'ping' },
      { jsonrpc: '2.0', id: 'missing', method: 'no/such/method' },
    ]);
    const batch = await c.next(isArray);
    assert.equal(batch.length, 3);
    assert.equal(batch.find((m: Msg) => m.id === 'slow').result.isError, false);
    assert.equal(batch.find((m: Msg) => m.id === 'missing').error.code, -32601);
  } finally {
    c.close();
    f.cleanup();
  }
});

for (const version of VERSIONS) test(`HTTP ${version}: the same batch is answered with the same ids (consistent with stdio)`, async () => {
  const f = fixture();
  const srv = await spawnHttpServer(['--workspace', f.ws], { env: { XDG_STATE_HOME: path.join(f.dir, 's'), XDG_RUNTIME_DIR: path.join(f.dir, 'r') } });
  try {
    const post = async (body: unknown, session?: string) => {
      const res = await fetch(`${srv.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${srv.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream',
          ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': version } : {}),
        },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      const data = text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
      return { res, messages: data.length ? data.flat() : text ? [JSON.parse(text)].flat() : [] };
    };
    const init = await post({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    const session = init.res.headers.get('mcp-session-id') ?? undefined;
    assert.equal(init.messages[0].result.protocolVersion, version);
    await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, session);
    const batch = await post([
      { jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'read_file', arguments: { path: 'a.txt' } } },
      { jsonrpc: '2.0', id: 11, method: 'ping' },
    ], session);
    assert.deepEqual(batch.messages.map((m: Msg) => m.id).sort(), [10, 11]);
    assert.equal(batch.messages.find((m: Msg) => m.id === 10).result.isError, false);
    const notes = await post([{ jsonrpc: '2.0', method: 'notifications/initialized' }], session);
    assert.equal(notes.res.status, 202, 'a batch of notifications gets no body');
    const bad = await fetch(`${srv.url}/mcp`, {
      method: 'POST', body: '{"jsonrpc": "2.0", "id": 3, "method": ',
      headers: { authorization: `Bearer ${srv.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(session ? { 'mcp-session-id': session } : {}) },
    });
    const parsed = await bad.json() as Msg;
    assert.equal(parsed.error.code, -32700, 'not JSON: a parse error, as over stdio');
    assert.equal(parsed.id, null);
  } finally {
    await srv.stop();
    f.cleanup();
  }
});

test('stdio 2024-11-05 (no structuredContent): the approval replay command and rule are in the text block', async () => {
  const f = fixture();
  const policy = path.join(f.dir, 'policy.yaml');
  writeFileSync(policy, 'version: 1\nmode: ci\nrules:\n  - tool: write_file\n    decision: ask\n');
  const c = new RawStdio(f.ws, f.dir, ['--policy', policy]);
  try {
    await c.init('2024-11-05');
    c.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'write_file', arguments: { path: 'new.txt', content: 'x' } } });
    const r = await c.next(byId(1));
    assert.equal(r.result.isError, true);
    const text: string = r.result.content[0].text;
    const details = r.result.structuredContent?.error?.details;
    assert.match(text, /^\[ApprovalRequired\]/);
    assert.ok(details?.replay?.command, 'the structured envelope has the replay');
    assert.ok(text.includes(details.replay.command), `the text carries the replay command:\n${text}`);
    for (const line of String(details.replay.rule).trim().split('\n')) assert.ok(text.includes(line.trim()), `the text carries the rule line "${line}"`);
    assert.match(text, /"why":/, 'the other details are there too');
  } finally {
    c.close();
    f.cleanup();
  }
});

test('legacy SSE (2024-11-05): a POSTed batch is answered with one message event holding an array', async () => {
  const f = fixture();
  const srv = await spawnHttpServer(['--workspace', f.ws], { env: { XDG_STATE_HOME: path.join(f.dir, 's'), XDG_RUNTIME_DIR: path.join(f.dir, 'r') } });
  const abort = new AbortController();
  try {
    const auth = { authorization: `Bearer ${srv.token}` };
    const stream = await fetch(`${srv.url}/sse`, { headers: { ...auth, accept: 'text/event-stream' }, signal: abort.signal });
    assert.equal(stream.status, 200);
    const reader = stream.body!.getReader();
    let buf = '';
    const events: Array<{ event: string; data: string }> = [];
    const nextEvent = async (pick: (e: { event: string; data: string }) => boolean) => {
      for (;;) {
        const i = events.findIndex(pick);
        if (i !== -1) return events.splice(i, 1)[0]!;
        const { value, done } = await reader.read();
        if (done) throw new Error('the event stream ended');
        buf += Buffer.from(value).toString();
        let sep: number;
        while ((sep = buf.indexOf('\n\n')) !== -1) {
          const block = buf.slice(0, sep);
          buf = buf.slice(sep + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
          const data = block.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
          events.push({ event, data });
        }
      }
    };
    const endpoint = (await nextEvent((e) => e.event === 'endpoint')).data;
    const post = (body: unknown) => fetch(new URL(endpoint, srv.url), { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal((await post({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })).status, 202);
    const init = JSON.parse((await nextEvent((e) => e.event === 'message' && e.data.includes('"init"'))).data);
    assert.equal(init.result.protocolVersion, '2024-11-05');
    await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    const r = await post([
      { jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'read_file', arguments: { path: 'a.txt' } } },
      { jsonrpc: '2.0', id: 11, method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 999 } },
    ]);
    assert.equal(r.status, 202);
    const batch = JSON.parse((await nextEvent((e) => e.event === 'message' && e.data.startsWith('['))).data);
    assert.deepEqual(batch.map((m: Msg) => m.id).sort(), [10, 11]);
    assert.match(batch.find((m: Msg) => m.id === 10).result.content[0].text, /alpha/);
  } finally {
    abort.abort();
    await srv.stop();
    f.cleanup();
  }
});
