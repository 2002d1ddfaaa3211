// Review 27 (helper-75): a starter that dies after launch() chose it (viaStarter) and before the
// run was handed to it (Helper.startCommand: under bwrap launch() awaits the sandbox's masks in
// between). Helper.send dropped the message, die() had failed the runs it knew, and the answer
// timer ended in unresponsive(), which returns at once for a dead helper: Running.spawned never
// settled and the call hung for good (its timeout_ms and a cancel are armed after the start).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';
import { helperPidForTests, readyHelper, resetStarterForTests } from '../../src/exec/starter-use.js';
import { Running } from '../../src/exec/run.js';
import { OutputCapture } from '../../src/exec/capture.js';
import { detectBwrap } from '../../src/exec/sandbox.js';

delete process.env.TOOLGATE_STARTER; // the default: through the starter at any size
const linux = process.platform === 'linux';
const within = <T>(p: Promise<T>, ms: number) => {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p.then(() => true), new Promise<boolean>((r) => { timer = setTimeout(() => r(false), ms); })]).finally(() => clearTimeout(timer));
};

test('a run handed to a starter that died since it was chosen ends (EHELPER), it does not wait for ever', { skip: !linux }, async (t) => {
  const keep = setInterval(() => {}, 1000);
  t.after(() => { clearInterval(keep); resetStarterForTests(); });
  await helperPidForTests();
  const h = readyHelper();
  assert.ok(h, 'the starter is ready');
  process.kill(h.proc.pid!, 'SIGKILL');
  await new Promise((r) => h.proc.once('exit', r));
  assert.equal(h.dead, true);
  const capture = new OutputCapture(1 << 16, 1 << 16, 1 << 20, async () => '/tmp/tg-review-dead-unused.log');
  const run = new Running({
    file: '/bin/echo', args: ['hi'], cwd: '/tmp', env: { PATH: '/usr/bin:/bin' }, via: h,
    capture,
  });
  // HELPER_ANSWER_MS × HELPER_ANSWER_LOOKS = 9 s is the longest any answer is waited for.
  assert.equal(await within(run.spawned, 12_000), true, 'Running.spawned settled');
  assert.equal(await within(run.done, 1_000), true, 'Running.done settled');
  // Not started: a shell's "could not start" (127), with the starter's words in the output.
  assert.equal((await run.done).exit_code, 127);
  assert.match(capture.finish().text, /could not be started: the starter process \(toolgate-starter\) exited before the start/);
});

test('end to end (sandbox bwrap): a call made as the starter is killed returns', { skip: !linux }, async (t) => {
  if (!(await detectBwrap())) { t.skip('no usable bubblewrap'); return; }
  const keep = setInterval(() => {}, 1000);
  const { dir, cleanup } = tempDir('tg-deadh-');
  for (let i = 0; i < 200; i++) writeFileSync(`${dir}/f${i}.txt`, 'x');
  const h = new Harness([dir], { policy: policyFromYaml('sandbox: { backend: bwrap }\nrules:\n  - tool: run_command\n    decision: allow\n') });
  t.after(() => { clearInterval(keep); h.close(); cleanup(); resetStarterForTests(); });
  const hung: number[] = [];
  // The kill lands between viaStarter() and the start in some of the trials (measured: 2–4 of 6).
  for (let trial = 0; trial < 8 && hung.length === 0; trial++) {
    resetStarterForTests();
    await h.call('run_command', { command: 'true' });
    const pid = await helperPidForTests();
    await h.call('run_command', { command: 'true' });
    process.kill(pid!, 'SIGKILL');
    if (!(await within(h.call('run_command', { command: 'echo hi', timeout_ms: 2000 }), 12_000))) hung.push(trial);
  }
  assert.deepEqual(hung, [], 'calls (timeout_ms 2000) that had not returned after 12 s');
});
