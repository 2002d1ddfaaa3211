import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { detectBwrap } from '../../src/exec/sandbox.js';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';

const allow = (backend: string, extra = '') => policyFromYaml(`sandbox: { backend: ${backend} }\n${extra}\nrules:\n  - tool: "*"\n    decision: allow\n`);

/** Processes whose command line holds the marker (from /proc). */
function alive(marker: string): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const cmd = readFileSync(`/proc/${e}/cmdline`, 'utf8');
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      if (cmd.includes(marker) && !/\) Z /.test(stat)) out.push(Number(e));
    } catch { /* gone */ }
  }
  return out;
}

async function gone(marker: string): Promise<number[]> {
  for (let i = 0; i < 100 && alive(marker).length; i++) await new Promise((r) => setTimeout(r, 50));
  return alive(marker);
}

const hasBwrap = await detectBwrap();

for (const backend of ['none', 'auto']) {
  test(`[${backend}] secrets in the server environment never reach the command`, async () => {
    const { dir, cleanup } = tempDir();
    process.env.MY_API_TOKEN = 'tok-should-not-leak';
    process.env.AWS_SECRET_ACCESS_KEY = 'aws-should-not-leak';
    process.env.DB_PASSWORD_X = 'pw-should-not-leak';
    process.env.SOME_KEY = 'key-should-not-leak';
    try {
      const h = new Harness([dir], { policy: allow(backend, 'env: { allow: ["MY_*", "AWS_*", "SOME_KEY"] }') });
      const env = await h.call('run_command', { command: 'env; echo "[$MY_API_TOKEN$AWS_SECRET_ACCESS_KEY$SOME_KEY]"' });
      assert.equal(env.ok, true, JSON.stringify(env.error));
      const out = (env.data as { output: string }).output;
      assert.doesNotMatch(out, /should-not-leak/);
      assert.match(out, /^PATH=/m);
      assert.match(out, /\[\]/);
      h.close();
    } finally {
      delete process.env.MY_API_TOKEN; delete process.env.AWS_SECRET_ACCESS_KEY; delete process.env.DB_PASSWORD_X; delete process.env.SOME_KEY;
      cleanup();
    }
  });

  test(`[${backend}] a timeout kills the whole process group and returns data`, async () => {
    const { dir, cleanup } = tempDir();
    const marker = `tgmark${backend}${process.pid}t`;
    const h = new Harness([dir], { policy: allow(backend) });
    const env = await h.call('run_command', { command: `echo started; sleep 300 & sleep 301 ; : ${marker}`, timeout_ms: 1500 });
    // bash -c keeps the marker in its argv; the sleeps are its children in the same group.
    assert.equal(env.error?.code, 'Timeout');
    const d = env.data as { timed_out: boolean; output: string };
    assert.equal(d.timed_out, true);
    assert.match(d.output, /started/);
    assert.deepEqual(await gone(marker), []);
    h.close(); cleanup();
  });

  test(`[${backend}] a client-side cancel kills the command's processes`, async () => {
    const { dir, cleanup } = tempDir();
    const marker = `tgmark${backend}${process.pid}c`;
    const h = new Harness([dir], { policy: allow(backend) });
    const ctrl = new AbortController();
    const call = h.call('run_command', { command: `sleep 302 & sleep 303; : ${marker}` }, { signal: ctrl.signal });
    for (let i = 0; i < 100 && alive(marker).length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(alive(marker).length > 0, 'the command should be running');
    ctrl.abort();
    const env = await call;
    assert.equal(env.error?.code, 'Cancelled');
    assert.deepEqual(await gone(marker), []);
    h.close(); cleanup();
  });

  test(`[${backend}] an output bomb keeps memory bounded and returns head + tail + storage_ref`, async () => {
    const { dir, cleanup } = tempDir();
    const h = new Harness([dir], { policy: allow(backend) });
    const before = process.memoryUsage().rss;
    const env = await h.call('run_command', { command: 'echo FIRST; head -c 300000000 /dev/zero | tr "\\0" x; echo; echo LAST' });
    const grown = process.memoryUsage().rss - before;
    assert.equal(env.ok, true, JSON.stringify(env.error));
    const d = env.data as { output: string; truncated: boolean; total_bytes: number; storage_ref: string; sha256: string };
    assert.equal(d.truncated, true);
    assert.ok(d.total_bytes > 300_000_000);
    assert.match(d.output, /^FIRST/);
    assert.match(d.output, /LAST\n$/);
    assert.ok(Buffer.byteLength(d.output) < 120_000);
    assert.equal(env.artifacts.storage_ref, d.storage_ref);
    assert.ok(grown < 150 * 1024 * 1024, `rss grew by ${grown} bytes`);
    h.close(); cleanup();
  });

  test(`[${backend}] background: start, read by offset, write, kill, read after exit`, async () => {
    const { dir, cleanup } = tempDir();
    const h = new Harness([dir], { policy: allow(backend) });
    try {
    const start = await h.call('run_command', { command: 'echo ready; while read l; do echo "got:$l"; done', background: true });
    assert.equal(start.ok, true, JSON.stringify(start.error));
    const id = (start.data as { id: string }).id;
    const first = await h.call('process_output', { id, wait_ms: 5000 });
    assert.match((first.data as { output: string }).output, /ready/);
    const off = (first.data as { next_offset: number }).next_offset;
    assert.equal((await h.call('process_write', { id, input: 'hello\n' })).ok, true);
    let out = '';
    for (let i = 0; i < 20 && !out.includes('got:hello'); i++) out += (await h.call('process_output', { id, offset: off + out.length, wait_ms: 1000 }) as { data: { output: string } }).data.output;
    assert.match(out, /got:hello/);
    const list = await h.call('process_list', {});
    assert.equal((list.data as { processes: { id: string; status: string }[] }).processes.find((p) => p.id === id)?.status, 'running');
    const k = await h.call('process_kill', { id });
    assert.equal((k.data as { status: string }).status, 'killed');
    const after = await h.call('process_output', { id });
    assert.match((after.data as { output: string }).output, /ready/);
    assert.equal((await h.call('process_output', { id: 'p999' })).error?.code, 'NotFound');
    } finally { await h.session.dispose(); h.close(); cleanup(); }
  });
}

test('background processes are capped and killed when the session is disposed', async () => {
  const { dir, cleanup } = tempDir();
  const marker = `tgmarkdispose${process.pid}`;
  const h = new Harness([dir], { policy: policyFromYaml(`limits: { max_processes: 2 }\nsandbox: { backend: none }\nrules:\n  - tool: "*"\n    decision: allow\n`) });
  for (let i = 0; i < 2; i++) assert.equal((await h.call('run_command', { command: `sleep 310; : ${marker}`, background: true })).ok, true);
  const third = await h.call('run_command', { command: 'sleep 1', background: true });
  assert.equal(third.error?.code, 'ToolNotAllowed');
  assert.equal(alive(marker).length >= 2, true);
  await h.session.dispose();
  assert.deepEqual(await gone(marker), []);
  h.close(); cleanup();
});

test('another session cannot see or touch this session\'s processes', async () => {
  const { dir, cleanup } = tempDir();
  const pol = policyFromYaml('sandbox: { backend: none }\nrules:\n  - tool: "*"\n    decision: allow\n');
  const a = new Harness([dir], { policy: pol });
  const b = new Harness([dir], { policy: pol });
  const id = ((await a.call('run_command', { command: 'sleep 30', background: true })).data as { id: string }).id;
  assert.equal((await b.call('process_kill', { id })).error?.code, 'NotFound');
  assert.equal((await b.call('process_write', { id, input: 'x' })).error?.code, 'NotFound');
  await a.session.dispose();
  a.close(); b.close(); cleanup();
});

test('process_write to a shell is judged by the command policy', async () => {
  const { dir, cleanup } = tempDir();
  const pol = policyFromYaml(`mode: ci\nsandbox: { backend: none }\nrules:\n  - tool: run_command\n    decision: allow\n  - tool: "process_*"\n    decision: allow\n  - tool: run_command\n    command: ["touch"]\n    decision: deny\n`);
  const h = new Harness([dir], { policy: pol });
  const id = ((await h.call('run_command', { command: 'bash', background: true })).data as { id: string }).id;
  const w = await h.call('process_write', { id, input: 'echo ok; touch canary\n' });
  assert.equal(w.error?.code, 'ToolNotAllowed');
  assert.equal((await h.call('process_write', { id, input: 'eval x\n' })).error?.code, 'ToolNotAllowed');
  assert.equal((await h.call('process_write', { id, input: 'echo fine\n' })).ok, true);
  assert.equal(existsSync(`${dir}/canary`), false);
  await h.session.dispose();
  h.close(); cleanup();
});

test('process_write to an interpreter asks unless a rule allows it', async () => {
  const { dir, cleanup } = tempDir();
  const pol = policyFromYaml(`mode: ci\nsandbox: { backend: none }\nrules:\n  - tool: run_command\n    decision: allow\n  - tool: "process_output"\n    decision: allow\n`);
  const h = new Harness([dir], { policy: pol });
  const id = ((await h.call('run_command', { command: 'python3 -i', background: true })).data as { id: string }).id;
  assert.equal((await h.call('process_write', { id, input: 'open("canary","w")\n' })).error?.code, 'ApprovalRequired');
  await h.session.dispose();
  h.close(); cleanup();
});

test('bwrap: masked ~/.ssh, no network, protected paths read-only even via bash -c', { skip: !hasBwrap && 'bubblewrap is not available here' }, async () => {
  const { dir: home, cleanup: cleanHome } = tempDir('tg-home-');
  const { dir, cleanup } = tempDir();
  mkdirSync(`${home}/.ssh`);
  writeFileSync(`${home}/.ssh/id_rsa`, 'PRIVATE-KEY-MATERIAL');
  mkdirSync(`${dir}/.git/hooks`, { recursive: true });
  const oldHome = process.env.HOME;
  process.env.HOME = home;
  const server = createServer((s) => { s.end('pong'); });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  try {
    const h = new Harness([dir], { policy: allow('bwrap') });
    // The path is non-literal ($HOME), so only the sandbox can stop it.
    const ssh = await h.call('run_command', { command: 'cat "$HOME/.ssh/id_rsa"; ls -a "$HOME/.ssh"' });
    assert.doesNotMatch(JSON.stringify(ssh), /PRIVATE-KEY-MATERIAL|id_rsa\\n/);
    assert.equal((ssh.data as { sandbox: string }).sandbox, 'bwrap');
    // A path built at run time: only the sandbox can stop it.
    const net = await h.call('run_command', { command: `p=/dev/tcp/127.0.0.1/${port}; cat < $p` });
    assert.equal(net.ok, false);
    assert.equal(net.error?.code, 'ExitNonZero', JSON.stringify(net.error));
    assert.doesNotMatch(JSON.stringify(net.data), /pong/);
    const hook = await h.call('run_command', { command: 'd=.git/hooks; bash -c "echo evil > $d/pre-commit"' });
    assert.equal(hook.ok, false);
    assert.equal(existsSync(`${dir}/.git/hooks/pre-commit`), false);
    const created = await h.call('run_command', { command: 'd=.vscode; mkdir -p $d && echo x > $d/tasks.json' });
    assert.equal(created.ok, false);
    assert.equal(existsSync(`${dir}/.vscode/tasks.json`), false);
    // Stand-ins stay while sandboxes run and for a short idle time after (src/exec/sandbox.ts), then go.
    for (let i = 0; i < 100 && existsSync(`${dir}/.vscode`); i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(existsSync(`${dir}/.vscode`), false, 'the stand-in mount point is cleaned up');
    const ok = await h.call('run_command', { command: 'echo inside > ok.txt && cat ok.txt && touch /tmp/x && ls /tmp' });
    assert.equal(ok.ok, true, JSON.stringify(ok.error));
    assert.equal(readFileSync(`${dir}/ok.txt`, 'utf8'), 'inside\n');
    h.close();
  } finally {
    process.env.HOME = oldHome;
    server.close();
    cleanup(); cleanHome();
  }
});

test('bwrap: a rule with network: true lets that command reach the network', { skip: !hasBwrap && 'bubblewrap is not available here' }, async () => {
  const { dir, cleanup } = tempDir();
  const server = createServer((s) => { s.end('pong'); });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  try {
    const h = new Harness([dir], { policy: policyFromYaml(`sandbox: { backend: bwrap }\nrules:\n  - tool: run_command\n    command: ["cat"]\n    decision: allow\n    network: true\n`) });
    const net = await h.call('run_command', { command: `cat < /dev/tcp/127.0.0.1/${port}` });
    assert.equal(net.ok, true, JSON.stringify(net.error));
    assert.match((net.data as { output: string }).output, /pong/);
    h.close();
  } finally {
    server.close();
    cleanup();
  }
});

test('without a network rule, bash /dev/tcp redirections are refused at plan time', async () => {
  const { dir, cleanup } = tempDir();
  const h = new Harness([dir], { policy: allow('none') });
  const env = await h.call('run_command', { command: 'cat < /dev/tcp/127.0.0.1/9' });
  assert.equal(env.error?.code, 'ToolNotAllowed');
  h.close(); cleanup();
});
