// Review of process_write's queued input (helper-41): a closed stdin seen through the starter, an
// answer before the call's time limit, and a command line split over two calls (older than the queue).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';
import { helperPidForTests, resetStarterForTests } from '../../src/exec/starter-use.js';

const policy = (extra = '') => policyFromYaml(`sandbox: { backend: none }\n${extra}rules:\n  - tool: "*"\n    decision: allow\n`);

// run_command with `stdin` text closes stdin after the text. Without the starter a later
// process_write is refused at once (stdin.writableEnded). Through the starter the 'end' is still
// queued behind text the process has not read, so HelperChild.write queues after it: the call
// answers ok with queued_bytes after a second, and the input is later dropped ('stdin is closed').
for (const starter of ['off', 'always'] as const) {
  test(`process_write to a process whose stdin text is still unread is an IOError (starter ${starter})`, async (t) => {
    process.env.TOOLGATE_STARTER = starter;
    const { dir, cleanup } = tempDir('tg-r41-pw-');
    const h = new Harness([dir], { policy: policy() });
    t.after(async () => { await h.session.dispose(); h.close(); cleanup(); delete process.env.TOOLGATE_STARTER; resetStarterForTests(); });
    if (starter === 'always') assert.ok(await helperPidForTests(), 'the starter is running');
    // More than the socketpair takes (~200 KB), and a process that does not read for a while.
    const r = await h.call('run_command', { command: 'sleep 30; cat > /dev/null', background: true, stdin: 'y'.repeat(1024 * 1024) });
    const id = (r.data as { id: string }).id;
    const w = await h.call('process_write', { id, input: 'echo hi\n' });
    assert.equal(w.error?.code, 'IOError', `answered ${JSON.stringify(w.data ?? w.error)}: its stdin is closed, the input will never reach it`);
  });
}

// With limits.timeout_ms below WRITE_WAIT_MS the call is stopped ("Timeout ... was stopped") while
// its input is queued and later delivered whole: a client that retries doubles the input (to a
// shell: the command runs twice). The wait should end before the call's deadline and answer
// with queued_bytes.
test('process_write under a call limit shorter than WRITE_WAIT_MS answers with queued_bytes, not Timeout', async (t) => {
  process.env.TOOLGATE_STARTER = 'off';
  const { dir, cleanup } = tempDir('tg-r41-pw-');
  const h = new Harness([dir], { policy: policy('limits: { timeout_ms: 400 }\n') });
  t.after(async () => { await h.session.dispose(); h.close(); cleanup(); delete process.env.TOOLGATE_STARTER; });
  const r = await h.call('run_command', { command: 'sleep 30', background: true });
  const id = (r.data as { id: string }).id;
  const w = await h.call('process_write', { id, input: 'x'.repeat(1024 * 1024) });
  assert.equal(w.ok, true, `${JSON.stringify(w.error)}; queued meanwhile: the input is delivered anyway`);
  assert.ok((w.data as { queued_bytes: number }).queued_bytes > 0);
});

test('a denied command line split across two process_write calls to a shell is still refused (backend none)', async (t) => {
  process.env.TOOLGATE_STARTER = 'off';
  const { dir, cleanup } = tempDir('tg-r41-split-');
  mkdirSync(path.join(dir, 'priv'));
  writeFileSync(path.join(dir, 'priv/x'), 'PRIV_MARK\n');
  mkdirSync(path.join(dir, 'sub/.git'), { recursive: true });
  writeFileSync(path.join(dir, 'sub/.git/config'), '[core]\n');
  const h = new Harness([dir], { policy: policyFromYaml('mode: ci\nsandbox: { backend: none }\ncommands: { prefer_tools: false }\nrules:\n  - { tool: "*", path: "priv/**", decision: deny }\n  - { tool: "*", decision: allow }\n') });
  let id = '';
  t.after(async () => { if (id) await h.call('process_kill', { id }); await h.session.dispose(); h.close(); cleanup(); delete process.env.TOOLGATE_STARTER; });
  id = ((await h.call('run_command', { command: 'bash', background: true })).data as { id: string }).id;
  // Controls: whole lines are refused.
  assert.equal((await h.call('process_write', { id, input: 'cat priv/x\n' })).error?.code, 'ToolNotAllowed');
  assert.equal((await h.call('process_write', { id, input: 'rm -rf sub\n' })).error?.code, 'ToolNotAllowed');
  // The same lines in two pieces.
  // (And with the line continued by a backslash before its newline.)
  const pieces = [['cat pr', 'iv/x\n'], ['rm -rf ', 'sub\n'], ['cat pr\\\n', 'iv/x\n'], ['rm -rf \\\r\n', 'sub\n']];
  const codes: string[] = [];
  for (const [a, b] of pieces) {
    const ra = await h.call('process_write', { id, input: a! });
    const rb = ra.ok ? await h.call('process_write', { id, input: b! }) : ra;
    codes.push(`${ra.ok ? 'ok' : ra.error?.code}/${rb.ok ? 'ok' : rb.error?.code}`);
  }
  // Each first piece is refused as an unfinished line; whole lines still go through.
  assert.deepEqual(codes, ['InvalidArguments/InvalidArguments', 'InvalidArguments/InvalidArguments', 'InvalidArguments/InvalidArguments', 'InvalidArguments/InvalidArguments']);
  assert.equal((await h.call('process_write', { id, input: 'echo whole-line-ran\n' })).ok, true);
  await new Promise((r) => setTimeout(r, 500));
  const out = (await h.call('process_output', { id })).data as { output: string };
  assert.doesNotMatch(out.output, /PRIV_MARK/, `the denied file was read (${codes.join(', ')})`);
  assert.ok(existsSync(path.join(dir, 'sub/.git/config')), `the nested .git was deleted (${codes.join(', ')})`);
  assert.match(out.output, /whole-line-ran/);
});
