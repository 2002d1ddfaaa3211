import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { pidsWhere } from '../testing/helpers.js';
import { HELPER_SOURCE } from './starter-program.js';

test('the starter leaves quietly when the server\'s end of its channel closes before it is ready (a failed send is not a crash)', async () => {
  for (let i = 0; i < 3; i++) {
    const c = spawn(process.execPath, ['-e', HELPER_SOURCE], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    let err = '';
    c.stderr!.on('data', (d: Buffer) => (err += d));
    c.disconnect();
    const code = await new Promise((r) => { c.on('exit', (n) => r(n)); setTimeout(() => r('still running after 10 s'), 10_000).unref(); });
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(code, 0, `exit code (stderr: ${err.slice(0, 300)})`);
    assert.equal(err, '', 'nothing on stderr');
  }
});

test('a server killed right after asking for a command (its pipes not yet acknowledged) leaves no starter and no command behind', { skip: process.platform !== 'linux' && 'needs /proc' }, async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tg-starter-'));
  try {
    const src = path.join(dir, 'starter.js');
    writeFileSync(src, HELPER_SOURCE);
    for (let i = 0; i < 3; i++) {
      const marker = String(430000 + Math.floor(Math.random() * 60000) + i);
      // A stand-in server: starts the starter, sends one command and exits at once, before the
      // starter's answer (which carries the command's output pipe) can be acknowledged.
      const server = `
        const { spawn } = require('node:child_process');
        const fs = require('node:fs');
        const c = spawn(process.execPath, ['-e', fs.readFileSync(${JSON.stringify(src)}, 'utf8')], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], serialization: 'json' });
        c.once('message', () => {
          fs.writeFileSync(${JSON.stringify(path.join(dir, 'pid'))}, String(c.pid));
          c.send({ t: 'cmd', id: 1, bin: '/bin/sh', args: ['-c', 'sleep ${marker}'], cwd: '/', env: { PATH: '/usr/bin:/bin' }, stdin: null });
          process.exit(0);
        });`;
      const s = spawn(process.execPath, ['-e', server], { stdio: 'ignore' });
      await new Promise((r) => s.on('exit', r));
      let left: number[] = [];
      for (let t = 0; t < 30; t++) {
        await new Promise((r) => setTimeout(r, 100));
        left = pidsWhere((c) => c.includes(marker)).concat(Number(readFileSync(path.join(dir, 'pid'), 'utf8')));
        left = left.filter((p) => { try { return readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]![0] !== 'Z'; } catch { return false; } });
        if (left.length === 0 && t >= 5) break;
      }
      for (const p of left) for (const target of [-p, p]) { try { process.kill(target, 'SIGKILL'); } catch { /* gone, or not a group */ } }
      assert.deepEqual(left, [], `left running after 3 s (round ${i + 1})`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
