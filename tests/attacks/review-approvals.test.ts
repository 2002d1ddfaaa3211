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
      ['* x', 'touch pwned3'], // an unquoted glob as the program
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
