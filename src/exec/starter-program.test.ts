import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
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
