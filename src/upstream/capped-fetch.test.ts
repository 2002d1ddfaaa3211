// The HTTP side of the upstream message cap, against a real local HTTP server.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { cappedFetch } from './capped-fetch.js';

async function serve(handler: http.RequestListener): Promise<{ url: string; close: () => void }> {
  const srv = http.createServer(handler);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, close: () => { srv.closeAllConnections(); srv.close(); } };
}

const KIB = 1024;

test('a JSON body is capped in total: under the cap it arrives whole, over it the read fails and says why', async () => {
  const srv = await serve((req, res) => {
    const n = Number(new URL(req.url!, 'http://x').searchParams.get('kib'));
    res.writeHead(200, { 'content-type': 'application/json' });
    // Written in 1 KiB pieces, with newlines: a total cap, not a line cap.
    for (let i = 0; i < n; i++) res.write(`${'x'.repeat(KIB - 1)}\n`);
    res.end();
  });
  const f = cappedFetch(64 * KIB, 'upstream t');
  assert.equal((await (await f(`${srv.url}/?kib=60`)).text()).length, 60 * KIB);
  const big = await f(`${srv.url}/?kib=4096`);
  assert.equal(big.status, 200);
  await assert.rejects(big.text(), /upstream t sent a response longer than 65536 bytes/);
  srv.close();
});

test('an SSE stream is capped per line: many short events pass, one endless data line fails', async () => {
  const srv = await serve((req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (req.url === '/many') {
      for (let i = 0; i < 500; i++) res.write(`data: ${'y'.repeat(500)}\r\n\r\n`);
      res.end();
      return;
    }
    res.write('data: ');
    const chunk = 'z'.repeat(16 * KIB);
    let sent = 0;
    const more = () => { while (sent < 8192 && res.write(chunk)) sent++; if (sent < 8192) res.once('drain', more); else res.end(); };
    more();
  });
  const f = cappedFetch(64 * KIB, 'upstream s');
  const many = await (await f(`${srv.url}/many`)).text();
  assert.equal(many.length, 500 * 510, '250 KB of short events pass a 64 KiB line cap');
  await assert.rejects((await f(`${srv.url}/endless`)).text(), /upstream s sent an event line longer than 65536 bytes/);
  srv.close();
});

test('status, headers, url and bodiless answers pass unchanged (the SDK reads redirects and session headers)', async () => {
  const srv = await serve((req, res) => {
    if (req.url === '/moved') return void res.writeHead(302, { location: '/elsewhere' }).end();
    if (req.url === '/empty') return void res.writeHead(202).end();
    res.writeHead(200, { 'mcp-session-id': 'abc', 'content-type': 'application/json' }).end('{"ok":true}');
  });
  const f = cappedFetch(64 * KIB, 'upstream h');
  const r = await f(`${srv.url}/json`);
  assert.equal(r.headers.get('mcp-session-id'), 'abc');
  assert.equal(r.url, `${srv.url}/json`);
  assert.deepEqual(await r.json(), { ok: true });
  const moved = await f(`${srv.url}/moved`, { redirect: 'manual' });
  assert.equal(moved.status, 302);
  assert.equal(moved.headers.get('location'), '/elsewhere');
  assert.equal((await f(`${srv.url}/empty`, { method: 'POST' })).status, 202);
  srv.close();
});
