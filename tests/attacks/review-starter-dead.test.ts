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

// Review 27 (Info): a background run handed to a starter that had died was answered "Started",
// and process_output then showed exit 127 ("could not be started"). The answer now waits for the
// start (one message from the starter) and says when it failed.
test('a background run whose start failed is not answered "Started"', { skip: !linux }, async (t) => {
  const keep = setInterval(() => {}, 1000);
  const { dir, cleanup } = tempDir('tg-deadbg-');
  const h = new Harness([dir], { policy: policyFromYaml('sandbox: { backend: none }\nrules:\n  - tool: run_command\n    decision: allow\n') });
  t.after(() => { clearInterval(keep); h.close(); cleanup(); resetStarterForTests(); });
  const lies: string[] = [];
  let refused = 0;
  for (let trial = 0; trial < 12; trial++) {
    resetStarterForTests();
    await h.call('run_command', { command: 'true' });
    const pid = await helperPidForTests();
    const call = h.call('run_command', { command: 'echo hi', background: true });
    process.kill(pid!, 'SIGKILL');
    const env = await call;
    if (!env.ok) {
      assert.equal(env.error?.code, 'IOError', JSON.stringify(env.error));
      assert.match(env.error!.message, /could not be started in the background/);
      refused++;
      continue;
    }
    // "Started": then it did start, and ran.
    const id = (env.data as { id: string }).id;
    let out = (await h.call('process_output', { id, wait_ms: 5000 })).data as { output: string; exit_code: number | null; status: string };
    for (let i = 0; i < 20 && out.status === 'running'; i++) out = (await h.call('process_output', { id, wait_ms: 5000 })).data as typeof out;
    if (out.exit_code !== 0 || !/hi/.test(out.output)) lies.push(`trial ${trial}: exit ${out.exit_code}: ${out.output.trim()}`);
  }
  assert.deepEqual(lies, [], '"Started" answered for runs that never started');
  t.diagnostic(`starts refused as failed: ${refused} of 12`);
});
