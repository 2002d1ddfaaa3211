// Review 30 (helper-78, High, older than this round): bwrapArgs passed no --cap-drop, and bwrap
// started by root keeps the caller's capabilities inside (CapEff 000001fffeffffff): a command
// could unmount /dev/null, remount / read-write and write the host. A command now has none.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';
import { detectBwrap } from '../../src/exec/sandbox.js';

test('bwrap: a command has no capability, whoever runs the server (root included)', async (t) => {
  if (!(await detectBwrap())) { t.skip('no usable bubblewrap'); return; }
  const { dir, cleanup } = tempDir('tg-rv30-');
  t.after(cleanup);
  const h = new Harness([dir], { policy: policyFromYaml('sandbox: { backend: bwrap }\nrules:\n  - tool: run_command\n    decision: allow\n') });
  t.after(() => h.close());
  const env = await h.call('run_command', { command: 'grep -E "^Cap(Eff|Prm|Bnd):" /proc/self/status' });
  const out = String((env.data as { output?: string } | null)?.output ?? '');
  assert.match(out, /CapEff:\s+0+\n/, out);
  assert.match(out, /CapPrm:\s+0+\n/, out);
  // And what that allowed as root: a read-write remount of / is refused.
  const rw = await h.call('run_command', { command: 'mount -o remount,rw,bind / 2>&1; echo "rc=$?"' });
  assert.doesNotMatch(String((rw.data as { output?: string } | null)?.output ?? ''), /rc=0/);
});
