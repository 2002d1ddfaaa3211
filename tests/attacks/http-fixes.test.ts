// Fixes from the HTTP review: refused initializes free their slot, refusals close the
// connection, a body that never finishes is timed out.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { spawnHttpServer, type SpawnedHttp } from '../../src/server/http-spawn.js';
import { tempDir } from '../../src/testing/helpers.js';

const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fixes', version: '1' } } });
const ws = tempDir('tg-http-fixes-');
let srv: SpawnedHttp;

before(async () => {
  srv = await spawnHttpServer(['--workspace', ws.dir], { env: { TOOLGATE_HTTP_MAX_SESSIONS: '2', TOOLGATE_HTTP_BODY_TIMEOUT_MS: '1000' } });
});
after(async () => {
  await srv?.stop();
  ws.cleanup();
});

function post(accept: string): Promise<number> {
  return fetch(`http://127.0.0.1:${srv.port}/mcp`, {
    method: 'POST', body: INIT,
    headers: { authorization: `Bearer ${srv.token}`, 'content-type': 'application/json', accept },
  }).then(async (r) => { await r.arrayBuffer(); return r.status; });
}

test('initializes the SDK refuses (406) do not use up the session slots', async () => {
  for (let i = 0; i < 4; i++) assert.equal(await post('application/json'), 406);
  assert.equal(await post('application/json, text/event-stream'), 200);
});

/** Sends raw bytes and reports the reply and whether the server closed the socket within waitMs. */
function raw(text: string, waitMs: number): Promise<{ reply: string; closed: boolean }> {
  return new Promise((resolve) => {
    const s = net.connect(srv.port, '127.0.0.1');
    let reply = '';
    let closed = false;
    const t = setTimeout(() => { s.destroy(); resolve({ reply, closed }); }, waitMs);
    s.on('data', (c: Buffer) => { reply += c.toString(); });
    s.on('close', () => { closed = true; clearTimeout(t); resolve({ reply, closed }); });
    s.on('error', () => {});
    s.write(text);
  });
}

test('a refusal without the token closes the connection instead of reading an endless body', async () => {
  const r = await raw(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n{"a":`, 4000);
  assert.match(r.reply, /^HTTP\/1\.1 401/);
  assert.equal(r.closed, true);
});

test('an authenticated body that never finishes is answered 408 and closed', async () => {
  const r = await raw(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\nAuthorization: Bearer ${srv.token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{"a":`, 6000);
  assert.equal(r.closed, true);
});
