// Attacks on the console (SPEC §11): every request that is not the person's own browser session
// on this very console is refused — no cookie, a spent or wrong secret, a cookie from before a
// restart, a foreign Host (DNS rebinding) or Origin, no/wrong CSRF token, a body a cross-site form
// could send, a GET with side effects; an answer is taken once. Controls show the real path works.
// Also: URL-mode elicitation sends the console's URL for the request, never the secret; the secret
// is in no tool result, audit line or log line at info level.
import assert from 'node:assert/strict';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { connectStdio, tempDir } from '../../src/testing/helpers.js';

type Res = { status: number; body: string; headers: http.IncomingHttpHeaders };

function request(port: number, o: { method?: string; path: string; headers?: Record<string, string>; body?: string }): Promise<Res> {
  return new Promise((resolve, reject) => {
    const r = http.request({ host: '127.0.0.1', port, method: o.method ?? 'GET', path: o.path, headers: { Host: `127.0.0.1:${port}`, ...(o.headers ?? {}) } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode!, body, headers: res.headers }));
    });
    r.on('error', reject);
    if (o.body) r.write(o.body);
    r.end();
  });
}

function watchStderr(stream: NodeJS.ReadableStream) {
  const out = { text: '' };
  stream.on('data', (d: Buffer) => { out.text += d.toString(); });
  return out;
}

async function until<T>(f: () => T | undefined | Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await f();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function start(ws: string, userDir: string, extra: string[] = [], capabilities?: Record<string, unknown>) {
  const env = { XDG_RUNTIME_DIR: path.join(userDir, 'run'), XDG_STATE_HOME: path.join(userDir, 'state'), TOOLGATE_NOTIFY: 'off', TOOLGATE_LOG_LEVEL: 'info' };
  const conn = await connectStdio(['--workspace', ws, ...extra], { env, capabilities });
  const err = watchStderr(conn.transport.stderr as unknown as NodeJS.ReadableStream);
  const login = await until(() => /toolgate console: (http:\/\/127\.0\.0\.1:(\d+)\/login\?s=([\w-]+))/.exec(err.text) ?? undefined, 'the console URL');
  return { ...conn, err, loginUrl: login[1]!, port: Number(login[2]), secret: login[3]! };
}

/** Spends the secret like a browser would: the cookie, and the CSRF token from /api/state. */
async function signIn(port: number, secret: string) {
  const r = await request(port, { path: `/login?s=${secret}` });
  assert.equal(r.status, 303);
  const setCookie = String(r.headers['set-cookie']);
  assert.match(setCookie, /HttpOnly/);
  assert.match(setCookie, /SameSite=Strict/);
  assert.equal(r.headers.location, '/');
  const cookie = setCookie.split(';')[0]!;
  const st = await request(port, { path: '/api/state', headers: { Cookie: cookie } });
  assert.equal(st.status, 200);
  return { cookie, csrf: JSON.parse(st.body).csrf as string };
}

test('console: refuses without cookie, spent secrets, foreign Host/Origin, missing CSRF, cross-site bodies, GET side effects; answers once', async () => {
  const ws = tempDir('tg-con-att-');
  const user = tempDir('tg-con-user-');
  const s = await start(ws.dir, user.dir);
  const { port } = s;
  try {
    const call = s.client.callTool({ name: 'write_file', arguments: { path: 'x.txt', content: 'x\n' } }, undefined, { timeout: 120_000 });
    const { cookie, csrf } = await signIn(port, s.secret);
    const id = await until(async () => {
      const st = JSON.parse((await request(port, { path: '/api/state', headers: { Cookie: cookie } })).body);
      return st.pending[0]?.id as string | undefined;
    }, 'a pending request');
    const origin = `http://127.0.0.1:${port}`;
    const good = { Cookie: cookie, Origin: origin, 'Content-Type': 'application/json', 'X-CSRF-Token': csrf };
    const body = JSON.stringify({ id, decision: 'allow_once' });
    const attempts: Array<[string, Parameters<typeof request>[1], number[]]> = [
      ['state without a cookie', { path: '/api/state' }, [401]],
      ['answer without a cookie', { method: 'POST', path: '/api/answer', headers: { ...good, Cookie: '' }, body }, [401]],
      ['answer with a made-up cookie', { method: 'POST', path: '/api/answer', headers: { ...good, Cookie: `toolgate_${port}=forged` }, body }, [401]],
      ['the secret as a cookie', { method: 'POST', path: '/api/answer', headers: { ...good, Cookie: `toolgate_${port}=${s.secret}` }, body }, [401]],
      ['the secret spent a second time', { path: `/login?s=${s.secret}` }, [403]],
      ['the secret posted a second time', { method: 'POST', path: '/login', headers: { Origin: origin, 'Content-Type': 'application/x-www-form-urlencoded' }, body: `secret=${s.secret}` }, [403]],
      ['DNS rebinding Host', { method: 'POST', path: '/api/answer', headers: { ...good, Host: `evil.example:${port}` }, body }, [421]],
      ['DNS rebinding Host on GET', { path: '/api/state', headers: { Cookie: cookie, Host: 'evil.example' } }, [421]],
      ['Host of another port', { path: '/api/state', headers: { Cookie: cookie, Host: `127.0.0.1:${port + 1}` } }, [421]],
      ['another Origin', { method: 'POST', path: '/api/answer', headers: { ...good, Origin: 'http://evil.example' }, body }, [403]],
      ['Origin null', { method: 'POST', path: '/api/answer', headers: { ...good, Origin: 'null' }, body }, [403]],
      ['Origin of another port', { method: 'POST', path: '/api/answer', headers: { ...good, Origin: `http://127.0.0.1:${port + 1}` }, body }, [403]],
      ['no Origin', { method: 'POST', path: '/api/answer', headers: { ...good, Origin: '' }, body }, [403]],
      ['no CSRF token', { method: 'POST', path: '/api/answer', headers: { ...good, 'X-CSRF-Token': '' }, body }, [403]],
      ['wrong CSRF token', { method: 'POST', path: '/api/answer', headers: { ...good, 'X-CSRF-Token': csrf.slice(0, -2) + 'xx' }, body }, [403]],
      ['JSON as text/plain (what a cross-site form can send)', { method: 'POST', path: '/api/answer', headers: { ...good, 'Content-Type': 'text/plain' }, body }, [415]],
      ['JSON as a form', { method: 'POST', path: '/api/answer', headers: { ...good, 'Content-Type': 'application/x-www-form-urlencoded' }, body }, [415]],
      ['cross-site fetch metadata', { method: 'POST', path: '/api/answer', headers: { ...good, 'Sec-Fetch-Site': 'cross-site' }, body }, [403]],
      ['GET with side effects', { path: `/api/answer?id=${id}&decision=allow_once`, headers: { Cookie: cookie } }, [405]],
      ['PUT', { method: 'PUT', path: '/api/answer', headers: good, body }, [405]],
      ['revoke without CSRF', { method: 'POST', path: '/api/revoke', headers: { ...good, 'X-CSRF-Token': '' }, body: '{}' }, [403]],
    ];
    const leaks: string[] = [];
    for (const [name, o, codes] of attempts) {
      const r = await request(port, o);
      if (!codes.includes(r.status)) leaks.push(`${name}: ${r.status} ${r.body.slice(0, 80)}`);
    }
    assert.deepEqual(leaks, []);
    // Nothing above answered: the request still waits, the file is not there.
    const st = JSON.parse((await request(port, { path: '/api/state', headers: { Cookie: cookie } })).body);
    assert.equal(st.pending.length, 1);
    assert.equal(st.pending[0].id, id);
    // Control: the real browser path answers, once.
    const ok = await request(port, { method: 'POST', path: '/api/answer', headers: good, body });
    assert.equal(ok.status, 200, ok.body);
    const twice = await request(port, { method: 'POST', path: '/api/answer', headers: good, body });
    assert.equal(twice.status, 409);
    const bad = await request(port, { method: 'POST', path: '/api/answer', headers: good, body: JSON.stringify({ id, decision: 'allow' }) });
    assert.equal(bad.status, 400);
    const r = await call;
    assert.equal((r.structuredContent as { ok: boolean }).ok, true);
    // Security headers on the page.
    const page = await request(port, { path: '/', headers: { Cookie: cookie } });
    assert.match(String(page.headers['content-security-policy']), /default-src 'none'/);
    assert.equal(page.headers['x-frame-options'], 'DENY');
    assert.equal(page.headers['referrer-policy'], 'no-referrer');
    // Without a cookie the page asks for the secret and shows nothing of the inbox.
    const anon = await request(port, { path: '/' });
    assert.match(anon.body, /needs the console secret/);
    assert.doesNotMatch(anon.body, /write_file/);
  } finally {
    await s.close();
  }
  // The secret: on stderr once (the line meant for the person), never in a log line, result or audit line.
  const lines = s.err.text.split('\n').filter((l) => l.includes(s.secret));
  assert.deepEqual(lines, [`toolgate console: ${s.loginUrl}`]);
  assert.ok(!readFileSync(path.join(ws.dir, '.toolgate', 'audit.jsonl'), 'utf8').includes(s.secret));
  const audit = readFileSync(path.join(ws.dir, '.toolgate', 'audit.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(audit.find((x) => x.tool === 'write_file').approval.source, 'console');
  ws.cleanup();
  user.cleanup();
});

test('console: a cookie from before a restart is refused by the new process (same port)', async () => {
  const ws = tempDir('tg-con-att-');
  const user = tempDir('tg-con-user-');
  const first = await start(ws.dir, user.dir, ['--console', '0']);
  const { cookie } = await signIn(first.port, first.secret);
  const port = first.port;
  await first.close();
  await new Promise((r) => setTimeout(r, 200));
  const second = await start(ws.dir, user.dir, ['--console', String(port)]);
  try {
    assert.equal(second.port, port);
    assert.equal((await request(port, { path: '/api/state', headers: { Cookie: cookie } })).status, 401);
    assert.equal((await request(port, { path: `/login?s=${first.secret}` })).status, 403, 'the old secret means nothing either');
    const { cookie: fresh } = await signIn(port, second.secret);
    assert.equal((await request(port, { path: '/api/state', headers: { Cookie: fresh } })).status, 200, 'control');
  } finally {
    await second.close();
  }
  ws.cleanup();
  user.cleanup();
});

test('--console off: no console, the inbox still answers through `toolgate approvals`; a bad --console value is a usage error', async () => {
  const ws = tempDir('tg-con-att-');
  const user = tempDir('tg-con-user-');
  const env = { XDG_RUNTIME_DIR: path.join(user.dir, 'run'), XDG_STATE_HOME: path.join(user.dir, 'state'), TOOLGATE_NOTIFY: 'off' };
  const conn = await connectStdio(['--workspace', ws.dir, '--console', 'off'], { env });
  const err = watchStderr(conn.transport.stderr as unknown as NodeJS.ReadableStream);
  try {
    const call = conn.client.callTool({ name: 'write_file', arguments: { path: 'o.txt', content: 'o\n' } });
    const { spawnSync } = await import('node:child_process');
    const { CLI } = await import('../../src/testing/helpers.js');
    const id = await until(() => {
      const r = spawnSync(process.execPath, [CLI, 'approvals', 'list', '--json', '--workspace', ws.dir], { env: { ...process.env, ...env }, encoding: 'utf8' });
      return (JSON.parse(r.stdout) as { id: string }[])[0]?.id;
    }, 'a pending request');
    const c = spawnSync(process.execPath, [CLI, 'console', '--workspace', ws.dir], { env: { ...process.env, ...env }, encoding: 'utf8' });
    assert.notEqual(c.status, 0);
    const a = spawnSync(process.execPath, [CLI, 'approvals', 'answer', id, 'allow_once', '--workspace', ws.dir], { env: { ...process.env, ...env }, encoding: 'utf8' });
    assert.equal(a.status, 0, a.stderr);
    const r = await call;
    assert.equal((r.structuredContent as { ok: boolean }).ok, true);
    assert.doesNotMatch(err.text, /toolgate console:/);
    const bad = spawnSync(process.execPath, [CLI, '--workspace', ws.dir, '--console', 'maybe'], { env: { ...process.env, ...env }, encoding: 'utf8' });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--console must be off or a port/);
  } finally {
    await conn.close();
  }
  ws.cleanup();
  user.cleanup();
});

test('URL-mode elicitation: the client gets the console URL of the request, never the secret; the answer comes from the console', async () => {
  const ws = tempDir('tg-con-att-');
  const user = tempDir('tg-con-user-');
  const s = await start(ws.dir, user.dir, [], { elicitation: { url: {} } });
  const asked: Array<Record<string, unknown>> = [];
  s.client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push(req.params as Record<string, unknown>);
    return { action: 'accept' };
  });
  try {
    const call = s.client.callTool({ name: 'write_file', arguments: { path: 'u.txt', content: 'u\n' } }, undefined, { timeout: 120_000 });
    const p = await until(() => asked[0], 'the URL elicitation');
    assert.equal(p.mode, 'url');
    assert.match(String(p.url), new RegExp(`^http://127\\.0\\.0\\.1:${s.port}/r/${String(p.elicitationId)}$`));
    assert.ok(!JSON.stringify(p).includes(s.secret), 'no secret in the URL elicitation');
    assert.doesNotMatch(String(p.url), /[?&]s=/);
    // Accepting the URL is not an answer: the call still waits.
    const { cookie, csrf } = await signIn(s.port, s.secret);
    const st = JSON.parse((await request(s.port, { path: '/api/state', headers: { Cookie: cookie } })).body);
    assert.equal(st.pending[0].id, p.elicitationId);
    // The request page without the cookie asks for the secret.
    assert.match((await request(s.port, { path: `/r/${String(p.elicitationId)}` })).body, /needs the console secret/);
    const ok = await request(s.port, { method: 'POST', path: '/api/answer', headers: { Cookie: cookie, Origin: `http://127.0.0.1:${s.port}`, 'Content-Type': 'application/json', 'X-CSRF-Token': csrf }, body: JSON.stringify({ id: p.elicitationId, decision: 'allow_once' }) });
    assert.equal(ok.status, 200);
    assert.equal(((await call).structuredContent as { ok: boolean }).ok, true);
  } finally {
    await s.close();
  }
  ws.cleanup();
  user.cleanup();
});

test('a client with form elicitation keeps the form, and the request is also in the inbox: the first answer wins', async () => {
  const ws = tempDir('tg-con-att-');
  const user = tempDir('tg-con-user-');
  const s = await start(ws.dir, user.dir, [], { elicitation: { form: {} } });
  let release!: (v: unknown) => void;
  const held = new Promise((r) => { release = r; });
  const modes: unknown[] = [];
  s.client.setRequestHandler(ElicitRequestSchema, async (req) => {
    modes.push((req.params as { mode?: string }).mode ?? 'form');
    await held; // the person answers in the console instead
    return { action: 'accept', content: { decision: 'deny' } };
  });
  try {
    const call = s.client.callTool({ name: 'write_file', arguments: { path: 'f.txt', content: 'f\n' } }, undefined, { timeout: 120_000 });
    const { cookie, csrf } = await signIn(s.port, s.secret);
    const id = await until(async () => JSON.parse((await request(s.port, { path: '/api/state', headers: { Cookie: cookie } })).body).pending[0]?.id as string | undefined, 'a pending request');
    const ok = await request(s.port, { method: 'POST', path: '/api/answer', headers: { Cookie: cookie, Origin: `http://127.0.0.1:${s.port}`, 'Content-Type': 'application/json', 'X-CSRF-Token': csrf }, body: JSON.stringify({ id, decision: 'allow_once' }) });
    assert.equal(ok.status, 200);
    assert.equal(((await call).structuredContent as { ok: boolean }).ok, true, 'the console answered first');
    assert.deepEqual(modes, ['form']);
    release(null);
  } finally {
    await s.close();
  }
  ws.cleanup();
  user.cleanup();
});
