import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Harness, policyFromYaml, tempDir } from '../../testing/helpers.js';

test('process_output pages by offset, bounded by the output limit, and keeps working after exit', async () => {
  const { dir, cleanup } = tempDir();
  const h = new Harness([dir], { policy: policyFromYaml('limits: { output_bytes: 1000 }\nsandbox: { backend: none }\nrules:\n  - tool: "*"\n    decision: allow\n') });
  const id = ((await h.call('run_command', { command: 'head -c 2500 /dev/zero | tr "\\0" a; echo; echo END', background: true })).data as { id: string }).id;
  let offset = 0;
  let text = '';
  for (let i = 0; i < 100; i++) {
    const d = (await h.call('process_output', { id, offset, wait_ms: 1000 })).data as { output: string; next_offset: number; status: string; more: boolean };
    assert.ok(Buffer.byteLength(d.output) <= 1000);
    text += d.output;
    offset = d.next_offset;
    if (d.status !== 'running' && !d.more) break;
  }
  assert.equal(text, `${'a'.repeat(2500)}\nEND\n`);
  const again = (await h.call('process_output', { id, offset: 0 })).data as { output: string; exit_code: number };
  assert.equal(again.exit_code, 0);
  assert.equal(again.output.length, 1000);
  await h.session.dispose(); h.close(); cleanup();
});
