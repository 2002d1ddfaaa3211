// Review of the starter process for commands (src/exec/starter.ts, starter-use.ts, run.ts): a
// command (the model) stopping the starter, flooding it, or getting the server to kill by a pid
// the starter already reaped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';
import { helperPidForTests, resetStarterForTests } from '../../src/exec/starter-use.js';

// Through the starter at any size of this process.
if (process.env.TOOLGATE_STARTER !== 'off') process.env.TOOLGATE_STARTER = 'always';
const skip = process.platform !== 'linux' ? 'the starter process is Linux only' : process.env.TOOLGATE_STARTER === 'off' ? 'TOOLGATE_STARTER=off' : false;
const policy = (backend: string) => policyFromYaml(`sandbox: { backend: ${backend} }\nrules:\n  - tool: run_command\n    decision: allow\n  - tool: process_write\n    decision: allow\n  - tool: process_output\n    decision: allow\n  - tool: process_kill\n    decision: allow\n`);
const alive = (pid: number) => { try { process.kill(pid, 0); return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8')); } catch { return false; } };
/** `p`, or 'hung' after `ms`. */
const within = <T>(p: Promise<T>, ms: number) => Promise.race([p, new Promise<'hung'>((r) => setTimeout(() => r('hung'), ms).unref())]);
type Env = { ok: boolean; data?: unknown; error?: { code: string; message: string } };

test('starter: a command that stops its starter (sandbox none) does not outlast its timeout; the stopped starter is replaced', { skip }, async (t) => {
  const { dir, cleanup } = tempDir('tg-review-starter-');
  const h = new Harness([dir], { policy: policy('none') });
  const starter = (await helperPidForTests())!;
  t.after(() => { try { process.kill(starter, 'SIGKILL'); } catch { /* gone */ } h.close(); cleanup(); resetStarterForTests(); });
  const r = await within(h.call('run_command', { command: 'sleep 0.3; kill -STOP $PPID; sleep 60', timeout_ms: 1000 }), 15_000);
  assert.notEqual(r, 'hung', 'run_command returned within its timeout and the starter\'s answer time');
  assert.equal((r as Env).error?.code, 'Timeout', JSON.stringify(r));
  assert.equal(alive(starter), false, 'the stopped starter was killed');
  const next = await h.call('run_command', { command: 'echo after' });
  assert.equal((next.data as { output: string }).output.trim(), 'after');
});

test('starter: process_kill of a background command whose starter is stopped ends the run (the session can close)', { skip }, async (t) => {
  const { dir, cleanup } = tempDir('tg-review-starter-');
  const h = new Harness([dir], { policy: policy('none') });
  const starter = (await helperPidForTests())!;
  t.after(() => { try { process.kill(starter, 'SIGKILL'); } catch { /* gone */ } h.close(); cleanup(); resetStarterForTests(); });
  const bg = await h.call('run_command', { command: 'sleep 0.3; kill -STOP $PPID; sleep 60', background: true });
  const id = (bg.data as { id: string }).id;
  const stopped = () => { try { return /^State:\s+T/m.test(readFileSync(`/proc/${starter}/status`, 'utf8')); } catch { return false; } };
  for (let i = 0; i < 100 && !stopped(); i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(stopped(), 'the command stopped its starter');
  const k = await within(h.call('process_kill', { id }), 15_000);
  assert.notEqual(k, 'hung');
  const out = await h.call('process_output', { id, wait_ms: 5000 });
  assert.equal((out.data as { status: string }).status, 'killed', JSON.stringify(out));
});

test('starter: a command that stops its starter before the starter reported it (sandbox none) does not run on untracked once the start failed', { skip }, async (t) => {
  const { dir, cleanup } = tempDir('tg-review-starter-');
  const h = new Harness([dir], { policy: policy('none') });
  const starter = (await helperPidForTests())!;
  t.after(() => { try { process.kill(starter, 'SIGKILL'); } catch { /* gone */ } h.close(); cleanup(); resetStarterForTests(); });
  // The starter sends 'spawned' a moment after the fork; bash stops it first often enough: retried.
  const marker = `tgrevstarter${process.pid}early`;
  let failed: Env | null = null;
  for (let i = 0; i < 3 && !failed; i++) {
    const r = await h.call('run_command', { command: `kill -STOP $PPID; exec -a ${marker} sleep 60`, timeout_ms: 20_000 });
    if ((r.error?.details as { exit_code?: number } | undefined)?.exit_code === 127) failed = r;
    else await h.call('run_command', { command: 'true' }); // a fresh starter
  }
  if (!failed) return t.skip('the starter reported the start before the command stopped it');
  assert.match(failed.error!.message, /could not be started/);
  const left = () => readdirSync('/proc').filter((e) => /^\d+$/.test(e)).filter((e) => { try { return readFileSync(`/proc/${e}/cmdline`, 'utf8').startsWith(marker); } catch { return false; } });
  for (let i = 0; i < 50 && left().length; i++) await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(left(), [], 'the command the stopped starter had started was killed with it');
});

test('starter: a 10 MB stdin (the most run_command takes) and a flood of process_write do not kill the starter, nor the other sessions\' commands it runs', { skip }, async (t) => {
  const { dir, cleanup } = tempDir('tg-review-starter-');
  const h = new Harness([dir], { policy: policy('none') });
  const other = new Harness([dir], { policy: policy('none') });
  t.after(() => { h.close(); other.close(); cleanup(); resetStarterForTests(); });
  const starter = (await helperPidForTests())!;
  const bystander = await other.call('run_command', { command: 'sleep 60', background: true });
  const bid = (bystander.data as { id: string }).id;
  // Multi-byte characters across every chunk boundary arrive whole.
  const stdin = 'a'.repeat(7_000_000) + '\u{1F600}é'.repeat(1_000_000);
  const r = await h.call('run_command', { command: 'wc -c', stdin });
  assert.equal((r.data as { output?: string } | undefined)?.output?.trim(), String(Buffer.byteLength(stdin)), JSON.stringify(r).slice(0, 600));
  const ctl = await h.call('run_command', { command: 'od -An -c | head -1', stdin: '\u0001'.repeat(3_000_000) });
  assert.equal(ctl.ok, true, JSON.stringify(ctl).slice(0, 600));
  // A process that never reads its stdin, and 30 writes of 1 MB at once: they wait in the server.
  const bg = await h.call('run_command', { command: 'sleep 60', background: true });
  const id = (bg.data as { id: string }).id;
  const big = 'x'.repeat(1024 * 1024);
  const writes = Array.from({ length: 30 }, () => h.call('process_write', { id, input: big }));
  await new Promise((res) => setTimeout(res, 1500));
  assert.equal(alive(starter), true, 'the starter is alive');
  const o = await other.call('process_output', { id: bid });
  assert.equal((o.data as { status: string }).status, 'running', JSON.stringify(o));
  await h.call('process_kill', { id });
  const ended = await within(Promise.all(writes), 10_000);
  assert.notEqual(ended, 'hung', 'the writes waiting for a killed process end');
  await other.call('process_kill', { id: bid });
});
