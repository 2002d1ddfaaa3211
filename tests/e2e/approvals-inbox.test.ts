// The approval inbox end to end (SPEC §8, §11): the built server under a stdio client WITHOUT
// elicitation; a person answers from another process with `toolgate approvals answer` while the
// call waits. allow_once, deny, allow_always across a restart, a late answer and its retry, and
// answers that must not be taken (twice, unknown id, another user's runtime dir).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { CLI, connectStdio, tempDir } from '../../src/testing/helpers.js';

const run = promisify(execFile);
type Env = { ok: boolean; error: { code: string; message: string; details?: Record<string, any> } | null; data: any };

function userDirs() {
  const t = tempDir('tg-inbox-user-');
  const env = { XDG_RUNTIME_DIR: path.join(t.dir, 'run'), XDG_STATE_HOME: path.join(t.dir, 'state'), TOOLGATE_NOTIFY: 'off' };
  return { env, cleanup: t.cleanup };
}

async function start(ws: string, env: Record<string, string>, extra: string[] = []) {
  const conn = await connectStdio(['--workspace', ws, ...extra], { env });
  const call = async (name: string, args: Record<string, unknown>, timeout = 60_000, onprogress?: (p: { message?: string }) => void) =>
    (await conn.client.callTool({ name, arguments: args }, undefined, { timeout, onprogress, resetTimeoutOnProgress: !!onprogress })).structuredContent as unknown as Env;
  return { ...conn, call };
}

async function cli(env: Record<string, string>, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, stdout: x.stdout, stderr: x.stderr };
  }
}

/** Polls `toolgate approvals list --json` until a request is pending, and returns it. */
async function pending(env: Record<string, string>, ws: string): Promise<Record<string, any>> {
  for (let i = 0; i < 100; i++) {
    const r = await cli(env, ['approvals', 'list', '--json', '--workspace', ws]);
    assert.equal(r.code, 0, r.stderr);
    const list = JSON.parse(r.stdout) as Record<string, any>[];
    if (list.length) return list[0]!;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error('no request became pending');
}

function audit(ws: string): Record<string, any>[] {
  return readFileSync(path.join(ws, '.toolgate', 'audit.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
}

test('allow_once from `toolgate approvals answer` while the call waits: the call succeeds and the file exists', async () => {
  const ws = tempDir('tg-inbox-');
  const u = userDirs();
  const s = await start(ws.dir, u.env);
  try {
    const progress: string[] = [];
    const call = s.call('write_file', { path: 'a.txt', content: 'approved\n' }, 60_000, (p) => progress.push(String(p.message)));
    const req = await pending(u.env, ws.dir);
    assert.deepEqual(Object.keys(req).filter((k) => ['id', 'server_pid', 'session_id', 'tool', 'risk', 'args', 'rule', 'grant', 'diff', 'created_at'].includes(k)).length, 10);
    assert.equal(req.tool, 'write_file');
    assert.equal(req.risk, 'medium');
    assert.deepEqual(req.args, { path: 'a.txt', content: 'approved\n', append: false, create_dirs: false, dry_run: false });
    assert.match(req.diff, /\+approved/);
    assert.match(req.rule, /default for medium risk/);
    assert.match(req.grant.join(), /write_file \(write\) on ".*a\.txt"/);
    assert.equal(existsSync(`${ws.dir}/a.txt`), false, 'nothing written before the answer');
    const ans = await cli(u.env, ['approvals', 'answer', req.id, 'allow_once', '--workspace', ws.dir]);
    assert.equal(ans.code, 0, ans.stderr);
    const env = await call;
    assert.equal(env.ok, true, JSON.stringify(env.error));
    assert.equal(readFileSync(`${ws.dir}/a.txt`, 'utf8'), 'approved\n');
    assert.ok(progress.some((m) => m.includes(`waiting for the user to approve (request ${req.id})`)), progress.join('|'));
    // Twice: refused, with a message.
    const again = await cli(u.env, ['approvals', 'answer', req.id, 'allow_once', '--workspace', ws.dir]);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /already answered/);
    // An id nobody issued.
    const unknown = await cli(u.env, ['approvals', 'answer', 'ffffff', 'allow_once', '--workspace', ws.dir]);
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.stderr, /no pending request/);
  } finally {
    await s.close();
  }
  const rec = audit(ws.dir).find((r) => r.tool === 'write_file')!;
  assert.deepEqual([rec.ok, rec.approval.granted, rec.approval.scope, rec.approval.source], [true, true, 'once', 'cli']);
  ws.cleanup();
  u.cleanup();
});

test('deny → ApprovalDenied, nothing written, audited as answered from the cli', async () => {
  const ws = tempDir('tg-inbox-');
  const u = userDirs();
  const s = await start(ws.dir, u.env);
  try {
    const call = s.call('write_file', { path: 'no.txt', content: 'x' });
    const req = await pending(u.env, ws.dir);
    assert.equal((await cli(u.env, ['approvals', 'answer', req.id, 'deny', '--workspace', ws.dir])).code, 0);
    const env = await call;
    assert.equal(env.error?.code, 'ApprovalDenied');
    assert.equal(env.error?.details?.approval_id, req.id);
    assert.equal(existsSync(`${ws.dir}/no.txt`), false);
  } finally {
    await s.close();
  }
  const rec = audit(ws.dir).find((r) => r.tool === 'write_file')!;
  assert.deepEqual([rec.ok, rec.error_code, rec.approval.granted, rec.approval.source], [false, 'ApprovalDenied', false, 'cli']);
  ws.cleanup();
  u.cleanup();
});

test('allow_always: stored in the user state (not the workspace); after a restart the identical call runs without asking; revoke undoes it', async () => {
  const ws = tempDir('tg-inbox-');
  const u = userDirs();
  let s = await start(ws.dir, u.env);
  const args = { path: 'always.txt', content: 'kept\n' };
  try {
    const call = s.call('write_file', args);
    const req = await pending(u.env, ws.dir);
    assert.equal((await cli(u.env, ['approvals', 'answer', req.id, 'allow_always', '--workspace', ws.dir])).code, 0);
    assert.equal((await call).ok, true);
  } finally {
    await s.close();
  }
  const listed = await cli(u.env, ['grants', 'list', '--json', '--workspace', ws.dir]);
  assert.equal(listed.code, 0, listed.stderr);
  const grants = JSON.parse(listed.stdout) as Record<string, any>[];
  assert.equal(grants.length, 1);
  assert.equal(grants[0]!.tool, 'write_file');
  assert.ok(grants[0]!.abs.endsWith('/always.txt'));
  assert.equal(readFileSync(path.join(ws.dir, '.toolgate', 'audit.jsonl'), 'utf8').includes('"scope":"always"'), true);
  assert.ok(!JSON.stringify(readFileSync(path.join(ws.dir, '.toolgate', 'audit.jsonl'), 'utf8')).includes(u.env.XDG_STATE_HOME), 'the store path is not in the audit');
  rmSync(`${ws.dir}/always.txt`);

  s = await start(ws.dir, u.env);
  try {
    // Asked, it would wait for minutes: a 15 s client timeout proves it was not.
    const env = await s.call('write_file', args, 15_000);
    assert.equal(env.ok, true, JSON.stringify(env.error));
    assert.equal(readFileSync(`${ws.dir}/always.txt`, 'utf8'), 'kept\n');
    const list = await cli(u.env, ['approvals', 'list', '--json', '--workspace', ws.dir]);
    assert.deepEqual(JSON.parse(list.stdout), []);
    // Another file is not covered.
    const other = s.call('write_file', { path: 'other.txt', content: 'x' });
    const req = await pending(u.env, ws.dir);
    assert.equal(req.args.path, 'other.txt');
    assert.equal((await cli(u.env, ['approvals', 'answer', req.id, 'deny', '--workspace', ws.dir])).code, 0);
    assert.equal((await other).error?.code, 'ApprovalDenied');
    // Revoked: asked again.
    const rv = await cli(u.env, ['grants', 'revoke', grants[0]!.id, '--workspace', ws.dir]);
    assert.equal(rv.code, 0, rv.stderr);
    rmSync(`${ws.dir}/always.txt`);
    const asked = s.call('write_file', args);
    const req2 = await pending(u.env, ws.dir);
    assert.equal(req2.args.path, 'always.txt');
    assert.equal((await cli(u.env, ['approvals', 'answer', req2.id, 'deny', '--workspace', ws.dir])).code, 0);
    assert.equal((await asked).error?.code, 'ApprovalDenied');
    assert.notEqual((await cli(u.env, ['grants', 'revoke', grants[0]!.id, '--workspace', ws.dir])).code, 0, 'revoked twice');
  } finally {
    await s.close();
  }
  ws.cleanup();
  u.cleanup();
});

test('a late answer (after the wait ended) applies once to a retry of the same call, never to other args', async () => {
  const ws = tempDir('tg-inbox-');
  const u = userDirs();
  const pol = tempDir('tg-inbox-pol-');
  writeFileSync(`${pol.dir}/p.yaml`, 'approvals: { timeout_ms: 500, retry_window_ms: 60000 }\n');
  const s = await start(ws.dir, u.env, ['--policy', `${pol.dir}/p.yaml`]);
  try {
    const env = await s.call('write_file', { path: 'late.txt', content: 'late\n' });
    assert.equal(env.error?.code, 'ApprovalRequired');
    const id = env.error!.details!.approval_id as string;
    assert.match(id, /^[0-9a-f]{6}$/);
    assert.match(env.error!.message, new RegExp(`ask the user to approve request ${id} in the toolgate console \\(http://127\\.0\\.0\\.1:\\d+/\\) or with \`toolgate approvals\`, then call again`));
    assert.ok(env.error!.details!.replay.rule && env.error!.details!.replay.command);
    assert.doesNotMatch(JSON.stringify(env), /login\?s=/, 'no console secret in a tool result');
    // Still listed (stopped waiting), and answerable once.
    const req = await pending(u.env, ws.dir);
    assert.equal(req.id, id);
    assert.equal(req.waiting, false);
    const ans = await cli(u.env, ['approvals', 'answer', id, 'allow_once', '--workspace', ws.dir]);
    assert.equal(ans.code, 0, ans.stderr);
    assert.match(ans.stdout, /applies once to its retry/);
    assert.notEqual((await cli(u.env, ['approvals', 'answer', id, 'allow_once', '--workspace', ws.dir])).code, 0, 'answered twice');
    // Other args: not covered by that answer.
    const other = await s.call('write_file', { path: 'late.txt', content: 'something else\n' });
    assert.equal(other.error?.code, 'ApprovalRequired');
    assert.equal(existsSync(`${ws.dir}/late.txt`), false);
    // The retry runs, once.
    const retry = await s.call('write_file', { path: 'late.txt', content: 'late\n' });
    assert.equal(retry.ok, true, JSON.stringify(retry.error));
    assert.equal(readFileSync(`${ws.dir}/late.txt`, 'utf8'), 'late\n');
    rmSync(`${ws.dir}/late.txt`);
    const third = await s.call('write_file', { path: 'late.txt', content: 'late\n' });
    assert.equal(third.error?.code, 'ApprovalRequired', 'a late answer is used once');
  } finally {
    await s.close();
  }
  ws.cleanup();
  u.cleanup();
  pol.cleanup();
});

test('ci mode waits for nobody: ApprovalRequired at once, with an approval_id a person can answer for a retry', async () => {
  const ws = tempDir('tg-inbox-');
  const u = userDirs();
  const s = await start(ws.dir, u.env, ['--mode', 'ci']);
  try {
    const t0 = Date.now();
    const env = await s.call('write_file', { path: 'ci.txt', content: 'ci\n' });
    assert.ok(Date.now() - t0 < 5000);
    assert.equal(env.error?.code, 'ApprovalRequired');
    const id = env.error!.details!.approval_id as string;
    assert.equal((await cli(u.env, ['approvals', 'answer', id, 'allow_once', '--workspace', ws.dir])).code, 0);
    assert.equal((await s.call('write_file', { path: 'ci.txt', content: 'ci\n' })).ok, true);
  } finally {
    await s.close();
  }
  ws.cleanup();
  u.cleanup();
});

test('only the user who runs the server can answer: another runtime dir finds no server; the socket and registry are private', async () => {
  const ws = tempDir('tg-inbox-');
  const u = userDirs();
  const s = await start(ws.dir, u.env);
  try {
    const call = s.call('write_file', { path: 'p.txt', content: 'x' });
    const req = await pending(u.env, ws.dir);
    const stranger = userDirs();
    const r = await cli(stranger.env, ['approvals', 'answer', req.id, 'allow_once', '--workspace', ws.dir]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /no running toolgate server/);
    const { statSync, readdirSync } = await import('node:fs');
    const rtDir = path.join(u.env.XDG_RUNTIME_DIR, 'toolgate');
    assert.equal(statSync(rtDir).mode & 0o777, 0o700);
    const sock = path.join(rtDir, 'sock', readdirSync(path.join(rtDir, 'sock'))[0]!);
    assert.equal(statSync(sock).mode & 0o777, 0o600);
    const reg = path.join(rtDir, 'servers', readdirSync(path.join(rtDir, 'servers'))[0]!);
    assert.equal(statSync(reg).mode & 0o777, 0o600);
    assert.doesNotMatch(readFileSync(reg, 'utf8'), /login\?s=|secret/, 'the registry holds no secret');
    // A bad decision is a usage error.
    const bad = await cli(u.env, ['approvals', 'answer', req.id, 'yes', '--workspace', ws.dir]);
    assert.equal(bad.code, 2);
    assert.equal((await cli(u.env, ['approvals', 'answer', req.id, 'deny', '--workspace', ws.dir])).code, 0);
    assert.equal((await call).error?.code, 'ApprovalDenied');
    stranger.cleanup();
  } finally {
    await s.close();
  }
  // The registry entry goes away with the server.
  await new Promise((r) => setTimeout(r, 300));
  const list = await cli(u.env, ['approvals', 'list', '--workspace', ws.dir]);
  assert.match(list.stderr, /no running toolgate server/);
  ws.cleanup();
  u.cleanup();
});

test('a client that gives up waiting (its own request timeout) can still be answered: the retry runs once', async () => {
  const ws = tempDir('tg-inbox-');
  const u = userDirs();
  const s = await start(ws.dir, u.env);
  try {
    await assert.rejects(s.call('write_file', { path: 'gaveup.txt', content: 'g\n' }, 1500), /timed out/i);
    const req = await pending(u.env, ws.dir);
    for (let i = 0; i < 50 && req.waiting; i++) {
      const r = await cli(u.env, ['approvals', 'list', '--json', '--workspace', ws.dir]);
      Object.assign(req, JSON.parse(r.stdout)[0]);
      if (req.waiting) await new Promise((res) => setTimeout(res, 100));
    }
    assert.equal(req.waiting, false, 'the cancelled call no longer waits');
    const ans = await cli(u.env, ['approvals', 'answer', req.id, 'allow_once', '--workspace', ws.dir]);
    assert.equal(ans.code, 0, ans.stderr);
    assert.equal(existsSync(`${ws.dir}/gaveup.txt`), false);
    const retry = await s.call('write_file', { path: 'gaveup.txt', content: 'g\n' }, 15_000);
    assert.equal(retry.ok, true, JSON.stringify(retry.error));
    assert.equal(readFileSync(`${ws.dir}/gaveup.txt`, 'utf8'), 'g\n');
  } finally {
    await s.close();
  }
  ws.cleanup();
  u.cleanup();
});

test('an answer is taken only by the process that holds the request: another server of the same workspace refuses it', async () => {
  const ws = tempDir('tg-inbox-');
  const u = userDirs();
  const a = await start(ws.dir, u.env);
  const b = await start(ws.dir, u.env);
  try {
    const call = a.call('write_file', { path: 'two.txt', content: '2\n' });
    const req = await pending(u.env, ws.dir);
    const { runningServers } = await import('../../src/approvals/registry.js');
    const { askSocket } = await import('../../src/approvals/socket-server.js');
    const servers = runningServers({ ...process.env, ...u.env });
    assert.equal(servers.length, 2);
    const other = servers.find((x) => x.pid !== req.server_pid)!;
    const wrong = await askSocket(other.socket, { op: 'answer', id: req.id, decision: 'allow_once' });
    assert.equal(wrong.ok, false);
    assert.equal(wrong.reason, 'unknown');
    assert.equal(existsSync(`${ws.dir}/two.txt`), false);
    const own = servers.find((x) => x.pid === req.server_pid)!;
    assert.equal((await askSocket(own.socket, { op: 'answer', id: req.id, decision: 'allow_once' })).ok, true);
    assert.equal((await call).ok, true);
  } finally {
    await a.close();
    await b.close();
  }
  ws.cleanup();
  u.cleanup();
});

const HAS_SCRIPT = existsSync('/usr/bin/script');

test('on a terminal, `toolgate approvals` shows the request (tool, risk, args, diff, grant) and takes one key', { skip: HAS_SCRIPT ? false : 'needs script(1) (util-linux) to give the CLI a terminal' }, async () => {
  const { spawn } = await import('node:child_process');
  const ws = tempDir('tg-inbox-');
  const u = userDirs();
  const s = await start(ws.dir, u.env);
  try {
    const call = s.call('write_file', { path: 'tty.txt', content: 'from the terminal\n' });
    call.catch(() => {});
    const req = await pending(u.env, ws.dir);
    const cmd = [process.execPath, CLI, 'approvals', '--workspace', ws.dir].map((a) => `'${a}'`).join(' ');
    const tty = spawn('script', ['-qfec', cmd, '/dev/null'], { env: { ...process.env, ...u.env, TERM: 'dumb' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    tty.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    for (let i = 0; i < 200 && !out.includes('[q] quit'); i++) await new Promise((r) => setTimeout(r, 50));
    assert.match(out, new RegExp(`request ${req.id} — write_file \\(medium risk\\)`));
    assert.match(out, /"content": "from the terminal\\n"/);
    assert.match(out, /\+from the terminal/);
    assert.match(out, /grant: write_file \(write\) on/);
    tty.stdin.write('x'); // not a key it knows: ignored
    await new Promise((r) => setTimeout(r, 300));
    tty.stdin.write('o');
    const code = await new Promise<number | null>((r) => {
      const timer = setTimeout(() => { tty.kill(); r(-1); }, 20_000);
      tty.on('exit', (c) => { clearTimeout(timer); r(c); });
    });
    assert.equal(code, 0, out);
    assert.match(out, new RegExp(`✓ request ${req.id}: allow_once`));
    assert.equal((await call).ok, true);
    assert.equal(readFileSync(`${ws.dir}/tty.txt`, 'utf8'), 'from the terminal\n');
  } finally {
    await s.close();
  }
  const rec = audit(ws.dir).find((r) => r.tool === 'write_file')!;
  assert.equal(rec.approval.source, 'cli');
  ws.cleanup();
  u.cleanup();
});
