// Commands started by the starter process (src/exec/starter.ts, run.ts): what a command run
// through it may not do differently from one the server starts itself — escape a kill, outlive
// the starter, read the channel, lose output or stdin — and what the user is told when it fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Harness, pidsWhere, policyFromYaml, tempDir } from '../../src/testing/helpers.js';
import { detectBwrap } from '../../src/exec/sandbox.js';
import { helperPidForTests, resetStarterForTests } from '../../src/exec/starter-use.js';
import { STARTER_TITLE } from '../../src/exec/starter.js';

// Through the starter at any size of this process (from HELPER_MIN_RSS up otherwise).
if (process.env.TOOLGATE_STARTER !== 'off') process.env.TOOLGATE_STARTER = 'always';
const skip = process.platform !== 'linux' ? 'the starter process is Linux only' : process.env.TOOLGATE_STARTER === 'off' ? 'TOOLGATE_STARTER=off' : false;
const bwrap = skip ? null : await detectBwrap();
const backends = ['none', ...(bwrap ? ['bwrap'] : [])] as const;

const policy = (backend: string) => policyFromYaml(`sandbox: { backend: ${backend} }\nrules:\n  - tool: run_command\n    decision: allow\n  - tool: process_write\n    decision: allow\n  - tool: process_output\n    decision: allow\n  - tool: process_kill\n    decision: allow\n`);
const alive = (pid: number) => { try { process.kill(pid, 0); return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8')); } catch { return false; } };
const parentOf = (pid: number) => Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
async function until(what: () => boolean, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) { if (what()) return true; await new Promise((r) => setTimeout(r, 20)); }
  return what();
}
type Ran = { output: string; exit_code: number | null; signal: string | null; total_bytes: number; id?: string };
const data = (env: { ok: boolean; data?: unknown; error?: unknown }) => { assert.equal(env.ok, true, JSON.stringify(env.error)); return env.data as Ran; };
/** Pids whose command line starts with `marker` (argv[0] set by `exec -a`). */
const pidsWith = (marker: string) => pidsWhere((c) => c.startsWith(marker));

for (const backend of backends) {
  test(`starter (${backend}): the command is the starter's child, sees only its own pipes, and its output, exit code and stdin come back whole`, { skip }, async (t) => {
    const { dir, cleanup } = tempDir('tg-starter-');
    const h = new Harness([dir], { policy: policy(backend) });
    t.after(() => { h.close(); cleanup(); });
    const starter = await helperPidForTests();
    assert.ok(starter && starter > 0, 'the starter is running');
    // One process (find), no pipeline: a shell's own pipes come and go while it runs one. Beyond 0–2
    // (and find's handle on the folder it lists) nothing of the server's or the starter's may be
    // open: not the starter's IPC channel (a socket), not another command's pipes.
    // (A script: the policy refuses /proc/self named in a command line without a sandbox.)
    writeFileSync(path.join(dir, 'fds.sh'), 'find /proc/self/fd -mindepth 1 -printf "%f %l\\n"; cat /proc/$PPID/cmdline\n');
    const fds = data(await h.call('run_command', { command: 'sh fds.sh' }));
    const open = fds.output.split('\n').map((l) => /^(\d+) (.*)$/.exec(l)).filter((m): m is RegExpExecArray => !!m && Number(m[1]) > 2 && !m[2]!.startsWith('/proc/'));
    assert.deepEqual(open.filter((m) => /^socket:/.test(m[2]!)).map((m) => m[0]), [], `descriptors open in the command: ${fds.output}`);
    if (backend === 'none') assert.match(fds.output, new RegExp(STARTER_TITLE), 'started by the starter');
    // 3 MB of output on stdout and stderr: every byte arrives, and the exit code.
    const big = data(await h.call('run_command', { command: 'head -c 1500000 /dev/zero | tr "\\0" a; head -c 1500000 /dev/zero | tr "\\0" b >&2' }));
    assert.equal(big.total_bytes, 3_000_000);
    const failed = await h.call('run_command', { command: 'echo out; echo err >&2; exit 7' });
    assert.deepEqual([failed.error?.code, (failed.error?.details as { exit_code?: number })?.exit_code], ['ExitNonZero', 7]);
    assert.match(failed.error?.message ?? '', /out\n?err|err\n?out/);
    const fed = data(await h.call('run_command', { command: 'tr a-z A-Z', stdin: 'keep\nhello' }));
    assert.equal(fed.output, 'KEEP\nHELLO', 'stdin text, even one that reads "keep", is written and closed');
    const none = data(await h.call('run_command', { command: 'cat; echo done' }));
    assert.equal(none.output.trim(), 'done', 'no stdin: cat reads end of file at once');
  });

  test(`starter (${backend}): a background shell takes input through the starter, and process_kill takes its whole tree, setsid children included`, { skip }, async (t) => {
    const { dir, cleanup } = tempDir('tg-starter-');
    const h = new Harness([dir], { policy: policy(backend) });
    t.after(() => { h.close(); cleanup(); });
    const marker = `tgstarter${process.pid}x${backend}`;
    const bg = data(await h.call('run_command', { command: 'bash', background: true }));
    const w = await h.call('process_write', { id: bg.id, input: `echo ready-$((6*7))\n(exec -a ${marker}a sleep 300) &\nsetsid bash -c "exec -a ${marker}b sleep 300" &\n` });
    assert.equal(w.ok, true, JSON.stringify(w.error));
    assert.ok(await until(() => pidsWith(marker).length >= 2), 'both sleepers started');
    const out = await h.call('process_output', { id: bg.id, wait_ms: 2000 });
    assert.match(JSON.stringify(out.data), /ready-42/, JSON.stringify(out));
    const k = await h.call('process_kill', { id: bg.id });
    assert.equal(k.ok, true, JSON.stringify(k.error));
    assert.ok(await until(() => pidsWith(marker).length === 0), `left running: ${pidsWith(marker).map((p) => `${p} ${readFileSync(`/proc/${p}/cmdline`, "utf8")} ppid ${parentOf(p)}`).join("; ")}`);
  });
}

test('starter: when the starter dies, what it started dies with it, the runs end as killed, and the next command still runs', { skip }, async (t) => {
  const { dir, cleanup } = tempDir('tg-starter-');
  const h = new Harness([dir], { policy: policy('none') });
  t.after(() => { h.close(); cleanup(); resetStarterForTests(); });
  const starter = (await helperPidForTests())!;
  const marker = `tgstarterdie${process.pid}`;
  const bg = data(await h.call('run_command', { command: `(exec -a ${marker} sleep 300) & wait`, background: true }));
  assert.ok(await until(() => pidsWith(marker).length === 1));
  const sleeper = pidsWith(marker)[0]!;
  assert.notEqual(parentOf(sleeper), process.pid);
  process.kill(starter, 'SIGKILL');
  assert.ok(await until(() => !alive(sleeper)), 'the command\'s tree was killed with its starter');
  const out = await h.call('process_output', { id: bg.id, wait_ms: 3000 });
  assert.match(JSON.stringify(out.data), /the command was ended/, JSON.stringify(out));
  const next = data(await h.call('run_command', { command: 'echo after' }));
  assert.equal(next.output.trim(), 'after');
});

test('starter: a stopped starter does not hold a command forever; the start fails with a reason, and the next command runs', { skip }, async (t) => {
  const { dir, cleanup } = tempDir('tg-starter-');
  const h = new Harness([dir], { policy: policy('none') });
  t.after(() => { h.close(); cleanup(); resetStarterForTests(); });
  const starter = (await helperPidForTests())!;
  process.kill(starter, 'SIGSTOP');
  const r = await h.call('run_command', { command: 'echo never' });
  assert.equal(r.error?.code, 'ExitNonZero');
  assert.match(r.error?.message ?? '', /exit code 127[^]*could not be started: the starter process .* did not answer/);
  assert.ok(await until(() => !alive(starter)), 'the wedged starter was killed');
  const next = data(await h.call('run_command', { command: 'echo after' }));
  assert.equal(next.output.trim(), 'after');
});
