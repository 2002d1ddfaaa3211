// Review of src/exec/inherited-fds.ts (the server closes, at start, what it inherited without
// close-on-exec). Each test starts the built CLI with something open at a high descriptor and looks
// from outside: a command's /proc/PID/fd, an upstream server's report, the audit log.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fork, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CLI, tempDir } from '../../src/testing/helpers.js';
import { backgroundSleep, client, fdsOf, linkOf, show } from './fds-fixture.js';

const skip = process.platform !== 'linux' && 'Linux /proc';
function fixture(prefix: string, policyExtra = '') {
  const d = tempDir(prefix);
  const ws = path.join(d.dir, 'ws');
  mkdirSync(ws);
  const secret = path.join(d.dir, 'parent-secret.txt');
  writeFileSync(secret, 'the parent\'s file\n');
  const pol = path.join(d.dir, 'policy.yaml');
  writeFileSync(pol, `version: 1\nsandbox: { backend: none }\nrules:\n  - { tool: run_command, decision: allow }\n${policyExtra}`);
  const flags = ['--workspace', ws, '--policy', pol, '--state-dir', path.join(d.dir, 'state')];
  return { ...d, ws, secret, pol, flags };
}

// `toolgate call` builds the same runtime and runs the same commands as the server, but never went
// through serve(): a descriptor its shell left open reached the command (the shell's file printed).
test('toolgate call: a descriptor its shell left open does not reach the command', { skip, timeout: 30_000 }, (t) => {
  const f = fixture('tg-rfds-call-');
  t.after(f.cleanup);
  const args = JSON.stringify({ command: 'cat <&50 || echo closed' });
  const r = spawnSync('/bin/bash', ['-c', 'exec 50<"$1"; shift; exec "$@"', 'bash', f.secret, process.execPath, CLI, 'call', 'run_command', ...f.flags, '--args', args], {
    encoding: 'utf8', env: { ...process.env, TOOLGATE_LOG_LEVEL: 'error' }, timeout: 25_000,
  });
  const env = JSON.parse(r.stdout) as { ok: boolean; data?: { output?: string } };
  assert.ok(env.ok, r.stdout + r.stderr);
  assert.doesNotMatch(env.data?.output ?? '', /the parent's file/, 'the command read the file the shell of `toolgate call` had open at fd 50');
  assert.match(env.data?.output ?? '', /closed/);
});

// The other commands that start processes (upstream MCP servers): `tools` (through setup) and
// `upstream list` (its own probe). The upstream here writes the descriptors it holds, then exits.
for (const sub of [['tools'], ['upstream', 'list']]) {
  test(`toolgate ${sub.join(' ')}: a descriptor its shell left open does not reach an upstream server`, { skip, timeout: 30_000 }, (t) => {
    const d = tempDir('tg-rfds-up-');
    t.after(d.cleanup);
    const report = path.join(d.dir, 'upstream-fds.txt');
    const script = path.join(d.dir, 'upstream.cjs');
    writeFileSync(script, `require('fs').writeFileSync(${JSON.stringify(report)}, require('fs').readdirSync('/proc/self/fd').map((f) => f + ' ' + (() => { try { return require('fs').readlinkSync('/proc/self/fd/' + f); } catch { return ''; } })()).join('\\n'));\n`);
    const f = fixture('tg-rfds-up2-', `upstreams:\n  probe:\n    command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(script)}]\n`);
    t.after(f.cleanup);
    spawnSync('/bin/bash', ['-c', 'exec 50<"$1"; shift; exec "$@"', 'bash', f.secret, process.execPath, CLI, ...sub, ...f.flags], {
      encoding: 'utf8', env: { ...process.env, TOOLGATE_LOG_LEVEL: 'error' }, timeout: 25_000,
    });
    assert.ok(existsSync(report), 'the upstream server did not start');
    const held = readFileSync(report, 'utf8');
    assert.ok(!held.includes(f.secret), `the upstream server holds the file the shell had open at fd 50:\n${held}`);
  });
}

// V8 opens its own logs (--perf-basic-prof's /tmp/perf-PID.map, --prof's isolate-…-v8.log) before
// any script runs, without close-on-exec, and keeps writing to them. Closed at start, the number
// went to the next file the server opened — the audit log — and V8's symbol lines landed in it:
// `toolgate audit verify` failed on line 1.
test('NODE_OPTIONS=--perf-basic-prof: V8\'s perf map is kept and nothing of it reaches the audit log', { skip, timeout: 60_000 }, async (t) => {
  const f = fixture('tg-rfds-perf-');
  t.after(f.cleanup);
  const srv = spawn(process.execPath, [CLI, ...f.flags, '--console', 'off'], {
    cwd: f.dir, // --prof's log goes to the working directory
    stdio: ['pipe', 'pipe', 'ignore'],
    env: { ...process.env, TOOLGATE_LOG_LEVEL: 'error', TOOLGATE_STARTER: 'off', NODE_OPTIONS: '--perf-basic-prof' },
  });
  const map = `/tmp/perf-${srv.pid}.map`;
  t.after(() => { srv.kill('SIGKILL'); rmSync(map, { force: true }); });
  const req = await client(srv);
  assert.ok(fdsOf(srv.pid!).some((fd) => linkOf(srv.pid!, fd) === map), `V8's perf map was closed: ${show(srv.pid!)}`);
  // Enough calls for V8 to compile (and log) more code.
  for (let i = 0; i < 60; i++) await req('tools/call', { name: 'run_command', arguments: { command: `echo call${i}` } });
  const audit = readFileSync(path.join(f.dir, 'state', 'audit.jsonl'), 'utf8').split('\n').filter(Boolean);
  const foreign = audit.filter((l) => !l.startsWith('{'));
  assert.deepEqual(foreign.slice(0, 5), [], `${foreign.length} lines of the audit log are not records`);
  const v = spawnSync(process.execPath, [CLI, 'audit', 'verify', path.join(f.dir, 'state', 'audit.jsonl')], { encoding: 'utf8' });
  assert.equal(v.status, 0, v.stdout + v.stderr);
});

// A Node parent's IPC channel is kept (the commit's choice). At fd 3 (fork) Node marks it
// close-on-exec at start: no command gets it, and it still works.
test('forked by a Node parent: the IPC channel stays connected and no command gets it', { skip, timeout: 30_000 }, async (t) => {
  const f = fixture('tg-rfds-fork-');
  t.after(f.cleanup);
  const srv = fork(CLI, [...f.flags, '--console', 'off'], {
    stdio: ['pipe', 'pipe', 'ignore', 'ipc'],
    env: { ...process.env, TOOLGATE_LOG_LEVEL: 'error', TOOLGATE_STARTER: 'always' },
  });
  t.after(() => srv.kill('SIGKILL'));
  let disconnected = false;
  srv.on('disconnect', () => { disconnected = true; });
  const req = await client(srv);
  for (const mark of [`32.${process.pid}1`, `32.${process.pid}2`]) {
    const pid = await backgroundSleep(t, req, mark);
    assert.deepEqual(fdsOf(pid), [0, 1, 2], `the command holds more than its stdio: ${show(pid)}`);
  }
  assert.ok(srv.connected && !disconnected, 'the parent\'s IPC channel was closed');
});

// Above fd 16 Node leaves an inherited descriptor as it is: a channel there (`stdio: [..., 'ipc']`
// at a high index) is kept without close-on-exec, and every command, the starter, rg and upstream
// servers inherited the parent's channel (a command could send the parent messages in the server's
// name, or read its own). Now a child started directly gets /dev/null over that number, the starter
// closes it, and an upstream server is started through /bin/sh, which closes it before the exec.
for (const starter of ['off', 'always'] as const) {
  test(`spawned with its IPC channel at a high descriptor: no command or upstream server gets the channel (starter ${starter})`, { skip, timeout: 30_000 }, async (t) => {
    const d = tempDir('tg-rfds-ipc-up-');
    t.after(d.cleanup);
    const report = path.join(d.dir, 'upstream-fds.txt');
    const script = path.join(d.dir, 'upstream.cjs');
    // Reports what it holds, then serves nothing (the connect fails; the server carries on without it).
    writeFileSync(script, `const fs = require('fs'); fs.writeFileSync(${JSON.stringify(report)}, fs.readdirSync('/proc/self/fd').map((f) => { try { return f + ' ' + fs.readlinkSync('/proc/self/fd/' + f); } catch { return f; } }).join('\\n'));\n`);
    const f = fixture('tg-rfds-ipc-', `upstreams:\n  probe:\n    command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(script)}]\n`);
    t.after(f.cleanup);
    const CH = 23;
    const srv = spawn(process.execPath, [CLI, ...f.flags, '--console', 'off'], {
      stdio: ['pipe', 'pipe', 'ignore', ...Array<'ignore'>(CH - 3).fill('ignore'), 'ipc'],
      env: { ...process.env, TOOLGATE_LOG_LEVEL: 'error', TOOLGATE_STARTER: starter },
    });
    t.after(() => srv.kill('SIGKILL'));
    const channel = linkOf(srv.pid!, CH);
    assert.match(channel, /^socket:/, `the server's channel at fd ${CH}: ${show(srv.pid!)}`);
    const req = await client(srv);
    // Commands until one came from the starter (with 'always'): the first ones of a server start
    // directly while the starter is getting ready.
    let viaStarter = 0;
    for (let i = 1; i <= 6 && !(starter === 'always' && viaStarter); i++) {
      const pid = await backgroundSleep(t, req, `34.${process.pid}${i}`);
      const held = fdsOf(pid).map((fd) => linkOf(pid, fd));
      assert.ok(!held.includes(channel), `the command holds the parent's IPC channel: ${show(pid)}`);
      const ppid = Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
      if (ppid === srv.pid) {
        // Started directly: anything past stdio is the cover, never another descriptor of the server's.
        for (const fd of fdsOf(pid).filter((n) => n > 2)) assert.deepEqual([fd, linkOf(pid, fd)], [CH, '/dev/null'], show(pid));
      } else {
        viaStarter++;
        assert.deepEqual(fdsOf(pid), [0, 1, 2], `started by the starter, it holds more than its stdio: ${show(pid)}`);
      }
      if (starter === 'always' && !viaStarter) await new Promise((r) => setTimeout(r, 200));
    }
    if (starter === 'always') assert.ok(viaStarter > 0, 'no command came from the starter');
    await req('tools/list', {});
    for (let i = 0; i < 100 && !existsSync(report); i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(existsSync(report), 'the upstream server did not start');
    assert.ok(!readFileSync(report, 'utf8').includes(channel), `the upstream server holds the parent's IPC channel:\n${readFileSync(report, 'utf8')}`);
    assert.ok(srv.connected, 'the parent\'s IPC channel was closed');
  });
}
