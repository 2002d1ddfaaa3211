import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { detectBwrap } from '../../exec/sandbox.js';
import { Harness, policyFromYaml, tempDir } from '../../testing/helpers.js';

// `auto` picks bubblewrap where it works and falls back to no sandbox elsewhere: both are right.
const bwrapWorks = (await detectBwrap()) !== null;

const allowAll = (extra = '') => policyFromYaml(`
rules:
  - tool: "*"
    decision: allow
${extra}`);

for (const backend of ['none', 'auto'] as const) {
  const pol = () => policyFromYaml(`sandbox: { backend: ${backend} }\nrules:\n  - tool: "*"\n    decision: allow\n`);

  test(`[${backend}] output cut by lines is saved whole (storage_ref, sha256); output shown whole leaves no file`, async (t) => {
    const { dir, cleanup } = tempDir();
    const h = new Harness([dir], { policy: pol() });
    t.after(() => { h.close(); cleanup(); });
    const spills = () => { try { return readdirSync(path.join(dir, '.toolgate/runs'), { recursive: true }).filter((f) => String(f).endsWith('.log')); } catch { return []; } };
    const small = await h.call('run_command', { command: 'echo hi' });
    assert.equal(small.ok, true, JSON.stringify(small.error));
    assert.equal((small.data as { storage_ref?: string }).storage_ref, undefined);
    assert.deepEqual(spills(), [], 'a command whose output was shown whole left a file');
    const env = await h.call('run_command', { command: 'seq 1 20000' });
    assert.equal(env.ok, true, JSON.stringify(env.error));
    const d = env.data as { truncated: boolean; storage_ref: string; sha256: string; total_bytes: number };
    const full = Array.from({ length: 20000 }, (_, i) => `${i + 1}\n`).join('');
    assert.equal(d.truncated, true);
    assert.equal(d.total_bytes, Buffer.byteLength(full));
    assert.equal(readFileSync(path.join(dir, d.storage_ref), 'utf8'), full);
    assert.equal(d.sha256, createHash('sha256').update(full).digest('hex'));
    assert.equal(spills().length, 1);
  });

  test(`[${backend}] echo runs and returns exit code, output, sandbox`, async () => {
    const { dir, cleanup } = tempDir();
    const h = new Harness([dir], { policy: pol() });
    const env = await h.call('run_command', { command: 'echo hi; echo err >&2' });
    assert.equal(env.ok, true, JSON.stringify(env.error));
    const d = env.data as Record<string, unknown>;
    assert.equal(d.exit_code, 0);
    assert.match(String(d.output), /hi\nerr/);
    assert.equal(d.sandbox, backend === 'auto' && bwrapWorks ? 'bwrap' : 'none');
    h.close(); cleanup();
  });

  test(`[${backend}] non-zero exit is ExitNonZero with the tail and data`, async () => {
    const { dir, cleanup } = tempDir();
    const h = new Harness([dir], { policy: pol() });
    const env = await h.call('run_command', { command: 'echo boom-line; exit 3' });
    assert.equal(env.ok, false);
    assert.equal(env.error?.code, 'ExitNonZero');
    assert.match(env.error!.message, /boom-line/);
    assert.equal((env.data as { exit_code: number }).exit_code, 3);
    h.close(); cleanup();
  });

  test(`[${backend}] stdin is closed unless given, and given stdin is read`, async () => {
    const { dir, cleanup } = tempDir();
    const h = new Harness([dir], { policy: pol() });
    const closed = await h.call('run_command', { command: 'cat; echo done' });
    assert.equal(closed.ok, true);
    assert.equal((closed.data as { output: string }).output, 'done\n');
    const given = await h.call('run_command', { command: 'tr a-z A-Z', stdin: 'shout' });
    assert.match((given.data as { output: string }).output, /SHOUT$/);
    h.close(); cleanup();
  });

  test(`[${backend}] cwd is resolved inside the workspace and refused outside`, async () => {
    const { dir, cleanup } = tempDir();
    const h = new Harness([dir], { policy: pol() });
    await h.call('run_command', { command: 'mkdir sub' });
    const env = await h.call('run_command', { command: 'pwd', cwd: 'sub' });
    assert.equal((env.data as { output: string }).output.trim(), `${dir}/sub`);
    const out = await h.call('run_command', { command: 'pwd', cwd: '..' });
    assert.equal(out.error?.code, 'PathTraversalBlocked');
    h.close(); cleanup();
  });
}

test('a write to a protected path through a redirect is denied at plan time', async () => {
  const { dir, cleanup } = tempDir();
  const h = new Harness([dir], { policy: allowAll() });
  const env = await h.call('run_command', { command: 'echo x > .git/hooks/pre-commit' });
  assert.equal(env.error?.code, 'ToolNotAllowed');
  assert.equal(existsSync(`${dir}/.git/hooks/pre-commit`), false);
  h.close(); cleanup();
});

test('reading a denied file is refused; eval is refused', async () => {
  const { dir, cleanup } = tempDir();
  writeFileSync(`${dir}/.env`, 'SECRET=1');
  const h = new Harness([dir], { policy: allowAll() });
  assert.equal((await h.call('run_command', { command: 'cat .env' })).error?.code, 'ToolNotAllowed');
  assert.equal((await h.call('run_command', { command: 'eval "echo hi"' })).error?.code, 'ToolNotAllowed');
  h.close(); cleanup();
});

test('~/.bashrc is not sourced even when stdin is a socket (bash would think rshd started it)', async () => {
  const { dir, cleanup } = tempDir();
  const { dir: home, cleanup: cleanHome } = tempDir('tg-home-');
  writeFileSync(`${home}/.bashrc`, `touch ${dir}/sourced-bashrc\n`);
  writeFileSync(`${home}/.bash_profile`, `touch ${dir}/sourced-profile\n`);
  const old = process.env.HOME;
  process.env.HOME = home;
  try {
    const h = new Harness([dir], { policy: policyFromYaml('sandbox: { backend: none }\nrules:\n  - tool: "*"\n    decision: allow\n') });
    assert.equal((await h.call('run_command', { command: 'cat', stdin: 'x' })).ok, true);
    const bg = await h.call('run_command', { command: 'read x; echo $x', background: true });
    await h.call('process_write', { id: (bg.data as { id: string }).id, input: 'y\n' });
    await h.call('process_output', { id: (bg.data as { id: string }).id, wait_ms: 3000 });
    await h.session.dispose();
    assert.equal(existsSync(`${dir}/sourced-bashrc`), false);
    assert.equal(existsSync(`${dir}/sourced-profile`), false);
    h.close();
  } finally {
    process.env.HOME = old;
    cleanup(); cleanHome();
  }
});

test('a line longer than Linux takes in one argument is refused before anything starts (it was an Internal "bug" from spawn E2BIG)', async (t) => {
  const { dir, cleanup } = tempDir('tg-e2big-');
  t.after(cleanup);
  const h = new Harness([dir], { policy: policyFromYaml('sandbox: { backend: none }\nrules:\n  - tool: run_command\n    decision: allow\n  - tool: process_list\n    decision: allow\n') });
  t.after(() => h.close());
  // 90,000 characters (within the schema's 100,000) of two bytes each: 180 KB in one argument.
  for (const background of [false, true]) {
    const env = await h.call('run_command', { command: `echo ${'é'.repeat(90_000)}`, background });
    assert.equal(env.error?.code, 'InvalidArguments', JSON.stringify(env.error).slice(0, 300));
    assert.match(env.error!.message, /bytes in UTF-8, and Linux takes at most 131071 bytes in one argument .*script/);
  }
  assert.deepEqual((await h.call('process_list', {})).data, { processes: [] });
  // Just under the cap runs.
  const ok = await h.call('run_command', { command: `printf %s ${'a'.repeat(99_000)} | wc -c` });
  assert.equal(ok.ok, true, JSON.stringify(ok.error));
  assert.match(String((ok.data as { output: string }).output), /99000/);
});
