import assert from 'node:assert/strict';
import { test } from 'node:test';
import { statSync, writeFileSync } from 'node:fs';
import { Harness, policyFromYaml, tempDir } from '../../testing/helpers.js';
import { helperPidForTests, resetStarterForTests } from '../../exec/starter-use.js';

test('process_write to a process started with stdin (closed) is an IOError; to an exited one NotFound', async () => {
  const { dir, cleanup } = tempDir();
  const h = new Harness([dir], { policy: policyFromYaml('sandbox: { backend: none }\nrules:\n  - tool: "*"\n    decision: allow\n') });
  const id = ((await h.call('run_command', { command: 'cat; sleep 30', background: true, stdin: 'given' })).data as { id: string }).id;
  assert.equal((await h.call('process_write', { id, input: 'more' })).error?.code, 'IOError');
  const done = ((await h.call('run_command', { command: 'true', background: true })).data as { id: string }).id;
  await h.call('process_output', { id: done, wait_ms: 3000 });
  for (let i = 0; i < 50 && (await h.call('process_output', { id: done })).data && ((await h.call('process_output', { id: done })).data as { status: string }).status === 'running'; i++) await new Promise((r) => setTimeout(r, 50));
  assert.equal((await h.call('process_write', { id: done, input: 'x' })).error?.code, 'NotFound');
  await h.session.dispose(); h.close(); cleanup();
});

// A process that does not read its stdin: the pipe takes 64 KB, and a write of more used to hold
// the call until the call's time limit. It now answers within a second with what is still queued,
// which reaches the process as it reads, in order; what may wait for one process is capped.
for (const starter of ['off', 'always'] as const) {
  test(`process_write to a process that does not read answers with what is queued (starter ${starter})`, async (t) => {
    process.env.TOOLGATE_STARTER = starter;
    const { dir, cleanup } = tempDir();
    const h = new Harness([dir], { policy: policyFromYaml('sandbox: { backend: none }\nlimits: { timeout_ms: 20000 }\nrules:\n  - tool: "*"\n    decision: allow\n') });
    t.after(async () => { await h.session.dispose(); h.close(); cleanup(); delete process.env.TOOLGATE_STARTER; resetStarterForTests(); });
    if (starter === 'always') assert.ok(await helperPidForTests(), 'the starter is running');
    const MB = 1024 * 1024;
    const total = 8 * MB + 3;
    // Reads nothing until the file "go" exists, then takes exactly what it should be given.
    const cmd = `while [ ! -e go ]; do sleep 0.05; done; head -c ${total} > got; wc -c < got; tail -c 5 got`;
    const id = ((await h.call('run_command', { command: cmd, background: true })).data as { id: string }).id;
    const big = 'x'.repeat(MB);
    const t0 = Date.now();
    const r = await h.call('process_write', { id, input: big });
    assert.equal(r.ok, true, JSON.stringify(r.error));
    assert.ok(Date.now() - t0 < 5000, `answered after ${Date.now() - t0} ms`);
    const d = r.data as { bytes: number; queued_bytes: number };
    assert.equal(d.bytes, MB);
    assert.ok(d.queued_bytes > 0 && d.queued_bytes <= MB, `queued ${d.queued_bytes}`);
    assert.match(r.text ?? '', /not read/);
    // More may wait, up to the cap (8 MB); past it a call is refused and nothing of it is queued.
    for (let i = 1; i < 8; i++) assert.equal((await h.call('process_write', { id, input: big })).ok, true, `write ${i}`);
    const over = await h.call('process_write', { id, input: big });
    assert.equal(over.error?.code, 'IOError');
    assert.match(over.error!.message, /not read yet/);
    writeFileSync(`${dir}/go`, '');
    // Once it reads, the queue drains and the cap lets the last input in. Waited for by what the
    // process wrote (1 MB read: the pipe holds 64 KB, so the queue is well under the cap), not by
    // retrying the call every 100 ms: each refused call counts toward process_write's circuit
    // breaker, which three in a row (a slow start of the drain on a loaded machine) opened.
    const got = () => { try { return statSync(`${dir}/got`).size; } catch { return 0; } };
    for (const until = Date.now() + 15_000; got() < MB && Date.now() < until;) await new Promise((r) => setTimeout(r, 50));
    assert.ok(got() >= MB, `the process read ${got()} bytes`);
    const last = await h.call('process_write', { id, input: 'end' });
    assert.equal(last.ok, true, JSON.stringify(last.error));
    let out = { output: '', status: 'running', next_offset: 0 };
    for (const until = Date.now() + 15_000; out.status === 'running' && Date.now() < until;) {
      // From the last offset: wait_ms then waits for more output or the exit.
      out = (await h.call('process_output', { id, offset: out.next_offset, wait_ms: 500 })).data as typeof out;
    }
    out = (await h.call('process_output', { id })).data as typeof out;
    // Every byte queued reached it once, in the order given: 8 MB of x, then "end".
    assert.equal(out.output.trim(), `${total}\nxxend`, JSON.stringify(out));
  });
}
