import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ProcessTable } from '../../exec/processes.js';
import { Harness, policyFromYaml, tempDir } from '../../testing/helpers.js';

const ALLOW = 'sandbox: { backend: none }\nrules:\n  - tool: "*"\n    decision: allow\n';

test('foreground commands in flight when their session is disposed leave no process table or exit listener behind', async () => {
  const { dir, cleanup } = tempDir();
  const h = new Harness([dir], { policy: policyFromYaml(ALLOW) });
  try {
    const before = process.listenerCount('exit');
    const calls = Array.from({ length: 3 }, () => h.call('run_command', { command: 'sleep 5' }));
    // Until the three are running (a fixed 500 ms was too short on a loaded machine: the first one starts the starter).
    for (let waited = 0; waited < 10_000 && !(h.session.resources.has('toolgate/processes') && ProcessTable.of(h.session).runningCount() === 3); waited += 50) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(h.session.resources.has('toolgate/processes'), 'the runs are in the session\'s table');
    await h.session.dispose();
    const envs = await Promise.all(calls);
    assert.ok(envs.every((e) => !e.ok), 'the disposed session stopped them');
    assert.deepEqual([...h.session.resources.keys()], [], 'no table made again after the session ended');
    assert.equal(process.listenerCount('exit'), before);
  } finally {
    h.close();
    cleanup();
  }
});

test('a cancel that arrives while the command is being started stops it', async () => {
  const { dir, cleanup } = tempDir();
  const h = new Harness([dir], { policy: policyFromYaml(ALLOW) });
  const ctrl = new AbortController();
  const add = ProcessTable.prototype.add;
  // The cancel lands once the process exists and before the call waits on it.
  ProcessTable.prototype.add = function (this: ProcessTable, ...a: Parameters<typeof add>) {
    add.apply(this, a);
    ctrl.abort(new Error('cancelled by the client'));
  };
  try {
    const env = await h.call('run_command', { command: 'sleep 1; echo survived > marker', timeout_ms: 5000 }, { signal: ctrl.signal });
    ProcessTable.prototype.add = add;
    assert.equal(env.error?.code, 'Cancelled');
    await new Promise((r) => setTimeout(r, 1800));
    assert.equal(existsSync(path.join(dir, 'marker')), false, 'the command was stopped, not left to finish');
    assert.deepEqual(ProcessTable.of(h.session).list().map((p) => p.id), []);
  } finally {
    ProcessTable.prototype.add = add;
    h.close();
    cleanup();
  }
});
