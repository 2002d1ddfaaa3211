import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Harness, policyFromYaml, tempDir } from '../../testing/helpers.js';

const pol = () => policyFromYaml('sandbox: { backend: none }\nrules:\n  - tool: "*"\n    decision: allow\n');

test('process_list shows only background runs of this session, with their status', async () => {
  const { dir, cleanup } = tempDir();
  const h = new Harness([dir], { policy: pol() });
  assert.deepEqual((await h.call('process_list', {})).data, { processes: [] });
  await h.call('run_command', { command: 'echo foreground' });
  const id = ((await h.call('run_command', { command: 'exit 4', background: true })).data as { id: string }).id;
  await h.call('process_output', { id, wait_ms: 5000 });
  for (let i = 0; i < 50; i++) {
    const p = ((await h.call('process_list', {})).data as { processes: { id: string; status: string; exit_code: number | null }[] }).processes;
    if (p[0]?.status === 'exited') { assert.equal(p.length, 1); assert.equal(p[0].id, id); assert.equal(p[0].exit_code, 4); break; }
    await new Promise((r) => setTimeout(r, 50));
    assert.notEqual(i, 49, 'the process never showed as exited');
  }
  await h.session.dispose(); h.close(); cleanup();
});

test('process_list asks by default (medium risk), like every process tool', async () => {
  const { dir, cleanup } = tempDir();
  const h = new Harness([dir], { policy: policyFromYaml('mode: ci\n') });
  assert.equal((await h.call('process_list', {})).error?.code, 'ApprovalRequired');
  h.close(); cleanup();
});
