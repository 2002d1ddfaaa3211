import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Harness, policyFromYaml, tempDir } from '../../testing/helpers.js';

test('process_kill stops the group, is idempotent, and refuses unknown ids', async () => {
  const { dir, cleanup } = tempDir();
  const h = new Harness([dir], { policy: policyFromYaml('sandbox: { backend: none }\nrules:\n  - tool: "*"\n    decision: allow\n') });
  const id = ((await h.call('run_command', { command: 'sleep 60 & sleep 61', background: true })).data as { id: string }).id;
  const k1 = await h.call('process_kill', { id });
  assert.deepEqual({ status: (k1.data as { status: string }).status, signal: (k1.data as { signal: string }).signal }, { status: 'killed', signal: 'SIGKILL' });
  assert.equal((await h.call('process_kill', { id })).ok, true);
  assert.equal((await h.call('process_kill', { id: 'nope' })).error?.code, 'NotFound');
  await h.session.dispose(); h.close(); cleanup();
});
