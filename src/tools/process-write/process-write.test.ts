import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Harness, policyFromYaml, tempDir } from '../../testing/helpers.js';

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
