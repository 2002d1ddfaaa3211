// run_command's stdin is text, whatever it says: the text "keep" (the internal marker for "leave
// stdin open for process_write") is written and stdin closed like any other, with and without
// the starter process, in the foreground and in the background.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';
import { resetStarterForTests } from '../../src/exec/starter-use.js';

const POLICY = 'sandbox: { backend: none }\nrules:\n  - { tool: run_command, decision: allow }\n  - { tool: process_output, decision: allow }\n';
type Ran = { output: string; exit_code: number | null; timed_out: boolean; id?: string };

for (const starter of ['off', 'always'] as const) {
  test(`stdin "keep" is text (starter ${starter}): written, then closed`, async (t) => {
    process.env.TOOLGATE_STARTER = starter;
    const d = tempDir('tg-stdin-keep-');
    const h = new Harness([d.dir], { policy: policyFromYaml(POLICY) });
    t.after(() => { h.close(); d.cleanup(); delete process.env.TOOLGATE_STARTER; resetStarterForTests(); });
    const fg = await h.call('run_command', { command: 'tr a-z A-Z', stdin: 'keep', timeout_ms: 5000 });
    const r = fg.data as Ran;
    assert.equal(r.timed_out, false, 'stdin was left open: tr waited for more');
    assert.equal(r.output, 'KEEP');
    assert.equal(r.exit_code, 0);
    const bg = (await h.call('run_command', { command: 'tr a-z A-Z', stdin: 'keep', background: true })).data as Ran;
    // It ends once it has read its stdin text; with stdin left open it would run on (tr waits for more).
    let out = { output: '', status: 'running', next_offset: 0 };
    const until = Date.now() + 5000;
    while (out.status === 'running' && Date.now() < until) {
      // From the last offset: wait_ms then waits for more output or the exit.
      out = (await h.call('process_output', { id: bg.id, offset: out.next_offset, wait_ms: 1000 })).data as typeof out;
    }
    assert.equal(out.status, 'exited', 'the background run ended once its stdin text was read');
    const all = (await h.call('process_output', { id: bg.id })).data as typeof out;
    assert.equal(all.output, 'KEEP');
  });
}
