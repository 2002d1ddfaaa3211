import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { tempDir } from '../../testing/helpers.js';
import { blockedOnFifo, watchFifoOpens } from './rg-watch.js';

const canFifo = process.platform === 'linux' && spawnSync('mkfifo', ['--version']).status === 0;

test('blockedOnFifo tells a process waiting to open a FIFO from one that only sleeps; the watch fires once, for the first', { skip: canFifo ? false : 'needs Linux and mkfifo' }, async (t) => {
  const d = tempDir('tg-rg-watch-');
  t.after(d.cleanup);
  const fifo = path.join(d.dir, '.gitignore');
  assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
  const waiting = spawn('cat', [fifo], { stdio: 'ignore' });
  const sleeping = spawn('sleep', ['30'], { stdio: 'ignore' });
  t.after(() => { waiting.kill('SIGKILL'); sleeping.kill('SIGKILL'); });
  let fired = 0;
  const watch = watchFifoOpens(waiting.pid, () => { fired++; });
  let quiet = 0;
  const quietWatch = watchFifoOpens(sleeping.pid, () => { quiet++; });
  t.after(() => { watch.stop(); quietWatch.stop(); });
  await new Promise((r) => setTimeout(r, 700));
  assert.equal(blockedOnFifo(waiting.pid!), true, 'cat opening a FIFO with no writer');
  assert.equal(blockedOnFifo(sleeping.pid!), false, 'control: sleep');
  assert.equal(fired, 1, 'the watch fires once');
  assert.equal(watch.blocked, true);
  assert.equal(quietWatch.blocked, false);
  assert.equal(quiet, 0, 'control: no alarm for a sleeping process');
  assert.equal(blockedOnFifo(2 ** 22 + 12345), false, 'a process that does not exist');
});
