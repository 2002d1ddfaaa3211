// Review attacks on the approval inbox, grants and console (SPEC §8, §11): the model cannot
// approve itself, and a person's answer covers no more than what they were shown.
// Each table lists attempts that must be refused; controls show the real path still works.
import assert from 'node:assert/strict';
import http from 'node:http';
import { test } from 'node:test';
import { Inbox, MAX_ENTRIES, type NewRequest } from '../../src/approvals/inbox.js';
import { GrantStore } from '../../src/approvals/grant-store.js';
import { CallLog } from '../../src/console/calls.js';
import { startConsole } from '../../src/console/server.js';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';
import { chromiumForTests } from '../../src/testing/chromium.js';

type Res = { status: number; body: string; headers: http.IncomingHttpHeaders };

function request(port: number, o: { method?: string; path: string; headers?: Record<string, string | undefined>; body?: string }): Promise<Res> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries({ Host: `127.0.0.1:${port}`, ...(o.headers ?? {}) })) if (v !== undefined) headers[k] = v;
    const r = http.request({ host: '127.0.0.1', port, method: o.method ?? 'GET', path: o.path, headers, setHost: false }, (res) => {
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

const req = (session = 's'): NewRequest => ({
  session_id: session, tool: 'write_file', risk: 'medium', args: { path: 'a' }, rule: 'r', grant: [], grant_rule: '', diff: null, summary: 'x',
});

// --- Grants: an allow_session / allow_always grant is no broader than the command approved ---

test('a command grant from a crafted word ("*", a word with spaces) is literal: it covers no other command', async () => {
  const { dir, cleanup } = tempDir('tg-rev-grant-');
  try {
    // [approved command, a different command the grant must NOT cover]
    const table: Array<[string, string]> = [
      ["'* *'", 'touch pwned1'], // a quoted word "* *" used to become the pattern "* *": any 2-word command
      ["'*'", 'touch pwned2'], // a quoted "*" as the program: the pattern "*", any command
      ["git 'x *'", 'git x push'], // the sub-command word "x *" split into "x" + wildcard
      ["'touch -- *' y", 'touch -- evil y'],
    ];
    for (const [approved, other] of table) {
      const h = new Harness([dir], { policy: policyFromYaml('rules:\n  - { tool: run_command, decision: ask }\nsandbox: { backend: none }\n') });
      let asked = 0;
      h.session.elicit = async () => { asked++; return { action: 'accept', content: { decision: 'allow_session' } }; };
      await h.call('run_command', { command: approved });
      assert.equal(asked, 1, `${approved}: asked once`);
      assert.ok(h.session.grants.length > 0, `${approved}: a session grant was kept`);
      h.session.elicit = async () => { asked++; return { action: 'decline' }; };
      const env = await h.call('run_command', { command: other });
      assert.equal(asked, 2, `${approved} → ${other}: must be asked again (grant ${JSON.stringify(h.session.grants.map((g) => g.command))})`);
      assert.equal(env.error?.code, 'ApprovalDenied');
      h.close();
    }
    // An unquoted glob as the program (`* x`): known only when it runs, so refused outright, never
    // asked (no grant can come of it).
    {
      const h = new Harness([dir], { policy: policyFromYaml('rules:\n  - { tool: run_command, decision: ask }\nsandbox: { backend: none }\n') });
      let asked = 0;
      h.session.elicit = async () => { asked++; return { action: 'accept', content: { decision: 'allow_session' } }; };
      const env = await h.call('run_command', { command: '* x' });
      assert.equal(env.error?.code, 'ToolNotAllowed');
      assert.equal(asked, 0);
      assert.equal(h.session.grants.length, 0);
      h.close();
    }
    // Control: an ordinary prefix grant still covers the same script with more arguments.
    const h = new Harness([dir], { policy: policyFromYaml('rules:\n  - { tool: run_command, decision: ask }\nsandbox: { backend: none }\n') });
    let asked = 0;
    h.session.elicit = async () => { asked++; return { action: 'accept', content: { decision: 'allow_session' } }; };
    await h.call('run_command', { command: 'echo hi' });
    await h.call('run_command', { command: 'echo hi there' });
    assert.equal(asked, 1, 'the grant "echo hi" covers "echo hi there"');
    await h.call('run_command', { command: 'echo bye' });
    assert.equal(asked, 2, '"echo bye" is asked about');
    h.close();
  } finally {
    cleanup();
  }
});

// --- The inbox: bounded, and a late answer applies only to the same call of the same session ---

test('a model flooding approval requests cannot grow the inbox without bound; a full inbox refuses at once', async () => {
  const ib = new Inbox(600_000);
  const waiting = Array.from({ length: MAX_ENTRIES }, (_, i) => ib.open(req(), 'write_file', { path: `w${i}` }));
  assert.ok(waiting.every(Boolean));
  assert.equal(ib.open(req(), 'write_file', { path: 'one-more' }), undefined, 'all waiting: the next is refused');
  assert.equal(ib.pending().length, MAX_ENTRIES);
  // Requests that stopped waiting (ci mode, timeouts) make room, oldest first.
  ib.expire(waiting[0]!.id);
  ib.expire(waiting[1]!.id);
  assert.ok(ib.open(req(), 'write_file', { path: 'n1' }));
  assert.ok(ib.open(req(), 'write_file', { path: 'n2' }));
  assert.equal(ib.open(req(), 'write_file', { path: 'n3' }), undefined);
  assert.equal(ib.pending().length, MAX_ENTRIES);
  assert.equal(ib.answer(waiting[0]!.id, 'allow_once', 'cli').ok, false, 'an evicted request cannot be answered');
  assert.equal(ib.answer(waiting[2]!.id, 'allow_once', 'cli').ok, true, 'a kept one still can');

  // Through the pipeline: a call that would wait in a full inbox is refused at once, not queued.
  const { dir, cleanup } = tempDir('tg-rev-flood-');
  try {
    const h = new Harness([dir], { policy: policyFromYaml('rules:\n  - { tool: write_file, decision: ask }\napprovals: { timeout_ms: 60000 }\n') });
    const full = new Inbox(600_000);
    for (let i = 0; i < MAX_ENTRIES; i++) full.open(req(), 'write_file', { path: `w${i}` });
    h.rt.opts.approvals = { inbox: full };
    const t0 = Date.now();
    const env = await h.call('write_file', { path: 'x.txt', content: 'x' });
    assert.equal(env.error?.code, 'ApprovalRequired');
    assert.match(env.error!.message, /inbox is full/);
    assert.ok(Date.now() - t0 < 10_000, 'refused at once');
    h.close();
  } finally {
    cleanup();
  }
});

test('a late answer applies once, to the same tool+args of the SAME session only', () => {
  const ib = new Inbox(600_000);
  const e = ib.open(req('A'), 'write_file', { path: 'a', content: 'x' })!;
  ib.expire(e.id);
  assert.deepEqual(ib.answer(e.id, 'allow_session', 'console'), { ok: true, applied: 'retry' });
  assert.deepEqual(ib.answer(e.id, 'allow_once', 'cli'), { ok: false, reason: 'answered', message: `request ${e.id} was already answered` });
  const refused: Array<[string, string, unknown]> = [
    ['B', 'write_file', { path: 'a', content: 'x' }], // another session (other roots: another file)
    ['', 'write_file', { path: 'a', content: 'x' }],
    ['A', 'write_file', { path: 'a', content: 'y' }], // other args
    ['A', 'write_file', { path: 'a', content: 'x', dry_run: false }],
    ['A', 'edit_file', { path: 'a', content: 'x' }],
  ];
  for (const [session, tool, args] of refused) assert.equal(ib.takeLate(tool, args, session), undefined, `${session} ${tool} ${JSON.stringify(args)}`);
  assert.equal(ib.takeLate('write_file', { content: 'x', path: 'a' }, 'A')?.source, 'console', 'control: the same call of A');
  assert.equal(ib.takeLate('write_file', { content: 'x', path: 'a' }, 'A'), undefined, 'once');
});

test('ci mode: nothing waits; the late answer is used by the retry of the same session, once', async () => {
  const { dir, cleanup } = tempDir('tg-rev-ci-');
  try {
    const h = new Harness([dir], { policy: policyFromYaml('mode: ci\nrules:\n  - { tool: write_file, decision: ask }\n') });
    const inbox = new Inbox(600_000);
    h.rt.opts.approvals = { inbox };
    const first = await h.call('write_file', { path: 'x.txt', content: 'x' });
    assert.equal(first.error?.code, 'ApprovalRequired');
    const id = (first.error as { details?: { approval_id?: string } }).details?.approval_id;
    assert.ok(id);
    assert.equal(inbox.answer(id, 'allow_once', 'cli').ok, true);
    assert.equal((await h.call('write_file', { path: 'x.txt', content: 'other' })).error?.code, 'ApprovalRequired', 'other args: not approved');
    const retry = await h.call('write_file', { path: 'x.txt', content: 'x' });
    assert.equal(retry.ok, true, JSON.stringify(retry.error));
    const again = await h.call('write_file', { path: 'x.txt', content: 'x', expected_sha256: (retry.data as { sha256: string }).sha256 });
    assert.equal(again.error?.code, 'ApprovalRequired', 'used once');
    h.close();
  } finally {
    cleanup();
  }
});

// --- The console over HTTP: everything that is not the person's own session is refused ---

async function consoleWith(inbox: Inbox) {
  const { dir, cleanup } = tempDir('tg-rev-con-');
  const grants = new GrantStore({ ...process.env, XDG_STATE_HOME: dir });
  const con = await startConsole({ inbox, grants, calls: new CallLog(), roots: () => [dir], auditFiles: () => [], onCallEvent: () => () => {} });
  return { con, dir, cleanup: async () => { await con.close(); cleanup(); } };
}

async function signIn(port: number, login: string) {
  const r = await request(port, { path: new URL(login).pathname + new URL(login).search });
  assert.equal(r.status, 303);
  const cookie = String(r.headers['set-cookie']).split(';')[0]!;
  const st = await request(port, { path: '/api/state', headers: { Cookie: cookie } });
  assert.equal(st.status, 200);
  return { cookie, csrf: JSON.parse(st.body).csrf as string };
}

test('console HTTP: foreign Host/Origin, no or foreign cookie/CSRF, spent secrets, odd methods, traversal, odd bodies are refused; the request still waits', async () => {
  const inbox = new Inbox(600_000);
  const e = inbox.open(req(), 'write_file', { path: 'a' })!;
  const { con, cleanup } = await consoleWith(inbox);
  const port = con.port;
  try {
    const login = con.loginUrl();
    const me = await signIn(port, login);
    const other = await signIn(port, con.loginUrl());
    const answer = (headers: Record<string, string | undefined>, body = JSON.stringify({ id: e.id, decision: 'allow_once' }), method = 'POST', p = '/api/answer') =>
      request(port, { method, path: p, body, headers: { Cookie: me.cookie, Origin: `http://127.0.0.1:${port}`, 'Content-Type': 'application/json', 'X-CSRF-Token': me.csrf, ...headers } });
    const table: Array<[string, () => Promise<Res>, number[]]> = [
      ['Host 127.0.0.1:PORT.evil', () => answer({ Host: `127.0.0.1:${port}.evil` }), [421]],
      ['Host evil.example (DNS rebinding)', () => answer({ Host: 'evil.example' }), [421]],
      ['Host missing', () => answer({ Host: undefined }), [421, 400]],
      ['Host [::1]:PORT', () => answer({ Host: `[::1]:${port}` }), [421]],
      ['Host 0.0.0.0:PORT', () => answer({ Host: `0.0.0.0:${port}` }), [421]],
      ['Host without port', () => answer({ Host: '127.0.0.1' }), [421]],
      ['Host other port', () => answer({ Host: `127.0.0.1:${port + 1}` }), [421]],
      ['Origin null', () => answer({ Origin: 'null' }), [403]],
      ['Origin other port', () => answer({ Origin: `http://127.0.0.1:${port + 1}` }), [403]],
      ['Origin evil', () => answer({ Origin: 'http://evil.example' }), [403]],
      ['Origin https same host', () => answer({ Origin: `https://127.0.0.1:${port}` }), [403]],
      ['Origin missing', () => answer({ Origin: undefined }), [403]],
      ['Sec-Fetch-Site cross-site', () => answer({ 'Sec-Fetch-Site': 'cross-site' }), [403]],
      ['Sec-Fetch-Site same-site', () => answer({ 'Sec-Fetch-Site': 'same-site' }), [403]],
      ['no cookie', () => answer({ Cookie: undefined }), [401]],
      ['cookie value under another port\'s name', () => answer({ Cookie: me.cookie.replace(`toolgate_${port}`, `toolgate_${port + 1}`) }), [401]],
      ['cookie = the secret', () => answer({ Cookie: `toolgate_${port}=${new URL(login).searchParams.get('s')}` }), [401]],
      ['CSRF missing', () => answer({ 'X-CSRF-Token': undefined }), [403]],
      ['CSRF wrong', () => answer({ 'X-CSRF-Token': 'x'.repeat(32) }), [403]],
      ['CSRF of another console session', () => answer({ 'X-CSRF-Token': other.csrf }), [403]],
      ['text/plain body', () => answer({ 'Content-Type': 'text/plain' }), [415]],
      ['form body', () => answer({ 'Content-Type': 'application/x-www-form-urlencoded' }, `id=${e.id}&decision=allow_once`), [415]],
      ['GET with the answer in the query', () => request(port, { path: `/api/answer?id=${e.id}&decision=allow_once`, headers: { Cookie: me.cookie } }), [405]],
      ['HEAD', () => answer({}, '', 'HEAD'), [405]],
      ['OPTIONS', () => answer({}, '', 'OPTIONS'), [405]],
      ['PUT', () => answer({}, undefined, 'PUT'), [405]],
      ['__proto__ decision', () => answer({}, `{"id":"${e.id}","__proto__":{"decision":"allow_once"}}`), [400]],
      ['decision as array', () => answer({}, JSON.stringify({ id: e.id, decision: ['allow_once'] })), [400]],
      ['body null', () => answer({}, 'null'), [400]],
      ['body array', () => answer({}, '[]'), [400]],
      ['body too large', () => answer({}, JSON.stringify({ id: e.id, decision: 'allow_once', pad: 'x'.repeat(64 * 1024) })).catch(() => ({ status: 413, body: '', headers: {} })), [400, 413]],
      ['state without cookie', () => request(port, { path: '/api/state' }), [401]],
      ['SSE without cookie', () => request(port, { path: '/api/events' }), [401]],
      ['traversal /../api/state', () => request(port, { path: '/../api/state' }), [401]],
      ['traversal %2e%2e', () => request(port, { path: '/%2e%2e/%2e%2e/etc/passwd' }), [404]],
      ['traversal app.js/..', () => request(port, { path: '/app.js/../../etc/passwd' }), [404]],
      ['spent secret', () => request(port, { path: new URL(login).pathname + new URL(login).search }), [403]],
      ['guessed secret', () => request(port, { path: '/login?s=' + 'A'.repeat(32) }), [403]],
      ['POST login without Origin', () => request(port, { method: 'POST', path: '/login', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 's=x' }), [403]],
      ['revoke an unknown root', () => answer({}, JSON.stringify({ root: '/', id: 'g' }), 'POST', '/api/revoke'), [404]],
    ];
    const wrong: string[] = [];
    for (const [what, attempt, statuses] of table) {
      const r = await attempt();
      if (!statuses.includes(r.status)) wrong.push(`${what}: ${r.status} ${r.body.slice(0, 100)}`);
      if (/root:|"pending"|"csrf"/.test(r.body)) wrong.push(`${what}: leaked ${r.body.slice(0, 100)}`);
    }
    assert.deepEqual(wrong, []);
    assert.deepEqual(inbox.pending().map((p) => p.id), [e.id], 'still waiting');
    // Every response forbids framing (clickjacking).
    const page = await request(port, { path: '/' });
    assert.equal(page.headers['x-frame-options'], 'DENY');
    assert.match(String(page.headers['content-security-policy']), /frame-ancestors 'none'/);
    // Control: the person's own answer is taken, once.
    assert.equal((await answer({})).status, 200);
    assert.equal((await answer({})).status, 409);
    assert.deepEqual(await e.answered, { id: e.id, decision: 'allow_once', source: 'console' });
  } finally {
    await cleanup();
  }
});

// --- The console in a real browser: model-chosen text is text, and cannot reorder what is shown ---

const BROWSER = await chromiumForTests();
const CHROMIUM = BROWSER.path;

test('console in chromium: markup, javascript: URLs, newlines and bidi controls in args/summary/diff/rule are shown escaped, never run', { skip: BROWSER.skip }, async () => {
  const { chromium } = await import('playwright-core');
  const inbox = new Inbox(600_000);
  const evilPath = 'ok\u202Etxt.exe</pre><script>window.__pwn=1</script><img src=x onerror="window.__pwn=2">';
  inbox.open({
    session_id: 's<b>1</b>', tool: 'write_file', risk: 'medium', args: { path: evilPath, content: '</textarea><a href="javascript:window.__pwn=3">click</a>\u2028x' },
    rule: 'rules[0]\nAllowed by the user\u2066', grant: [`write_file on "${evilPath}"`], grant_rule: '', summary: `write ${evilPath}\n[approved already]`,
    diff: `--- a/${evilPath}\n+++ b/${evilPath}\n@@ -0,0 +1 @@\n+<script>window.__pwn=4</script>\u202Egnp.sh\n`,
  }, 'write_file', { path: evilPath });
  const { con, cleanup } = await consoleWith(inbox);
  const browser = await chromium.launch({ executablePath: CHROMIUM!, headless: true, args: ['--no-sandbox'] });
  try {
    const page = await (await browser.newContext()).newPage();
    const dialogs: string[] = [];
    page.on('dialog', (d) => { dialogs.push(d.message()); void d.dismiss(); });
    await page.goto(con.loginUrl());
    await page.waitForSelector('#pending .card');
    const seen = await page.evaluate(`({
      pwn: window.__pwn,
      injected: document.querySelectorAll('#pending script, #pending img, #pending a, #pending textarea, #pending b:not(.kv b)').length,
      text: document.querySelector('#pending .card').innerText,
    })`) as { pwn?: number; injected: number; text: string };
    assert.equal(seen.pwn, undefined, 'no injected script ran');
    assert.equal(seen.injected, 0, 'no element was made from model text');
    assert.deepEqual(dialogs, []);
    assert.ok(seen.text.includes('<script>window.__pwn=1</script>'), 'the markup is shown as text');
    assert.doesNotMatch(seen.text, /[\u202a-\u202e\u2066-\u2069\u2028\u2029]/, 'no bidi or line-separator character reaches the page');
    assert.ok(seen.text.includes('ok\\u202etxt.exe'), 'the override is shown as an escape');
    assert.ok(seen.text.includes('\\u2066'), 'in the rule too');
  } finally {
    await browser.close();
    await cleanup();
  }
});
