// A descriptor the server inherited without close-on-exec (a client's, a shell's) must not reach
// the commands it runs: the built server, started with an extra open file at fd 50, closes it at
// start (src/exec/inherited-fds.ts). Checked from outside: the server's /proc/PID/fd, and the
// descriptors of a command it started, directly and through the starter process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CLI, tempDir } from '../../src/testing/helpers.js';
import { backgroundSleep, client, fdsOf, linkOf, show } from './fds-fixture.js';

const skip = process.platform !== 'linux' && 'Linux /proc';

for (const starter of ['off', 'always'] as const) {
  test(`a descriptor the server inherited is closed at start and never reaches a command (starter ${starter})`, { skip, timeout: 30_000 }, async (t) => {
    const d = tempDir('tg-fds-');
    t.after(d.cleanup);
    const ws = path.join(d.dir, 'ws');
    const secret = path.join(d.dir, 'parent-secret.txt');
    writeFileSync(secret, 'the parent\'s file\n');
    const pol = path.join(d.dir, 'policy.yaml');
    writeFileSync(pol, 'version: 1\nsandbox: { backend: none }\nrules:\n  - { tool: run_command, decision: allow }\n');
    mkdirSync(ws);
    // fd 50 of the server: a file its parent (a shell here) left open, without close-on-exec (Node
    // itself marks its lowest inherited descriptors close-on-exec at start: fd 9 would prove nothing).
    // (Node's own spawn passes extra stdio entries with close-on-exec set in the child.)
    const srv = spawn('/bin/bash', ['-c', 'exec 50<"$1"; shift; exec "$@"', 'bash', secret, process.execPath, CLI, '--workspace', ws, '--policy', pol, '--state-dir', path.join(d.dir, 'state'), '--console', 'off'], {
      stdio: ['pipe', 'pipe', 'ignore'],
      env: { ...process.env, TOOLGATE_LOG_LEVEL: 'error', TOOLGATE_STARTER: starter },
    });
    t.after(() => srv.kill('SIGKILL'));
    const req = await client(srv);
    assert.ok(!fdsOf(srv.pid!).some((fd) => linkOf(srv.pid!, fd) === secret), `the server still holds the inherited file: ${show(srv.pid!)}`);
    // Two commands, the second through the starter when it is on (the first launches it): both checked.
    // Marks of this run only (a command left by another run must not be taken for this one's).
    for (const mark of [`31.${process.pid}1`, `31.${process.pid}2`]) {
      const pid = await backgroundSleep(t, req, mark);
      const fds = fdsOf(pid);
      assert.ok(!fds.some((fd) => linkOf(pid, fd) === secret), `the command holds the server's inherited file: ${show(pid)}`);
      assert.deepEqual(fds, [0, 1, 2], `the command holds more than its stdio: ${show(pid)}`);
    }
  });
}
