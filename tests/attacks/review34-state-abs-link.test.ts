// Review 34 (breakage). deniedAbs (the user's state folder) is masked at its literal path too; bwrap
// resolves a mount point's absolute links in its own staging root, so ~/.local as an absolute link
// (~/.local on another disk) makes every sandboxed command fail: "Can't mkdir parents for …".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { detectBwrap } from '../../src/exec/sandbox.js';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { Harness, policyFromYaml } from '../../src/testing/helpers.js';
const POLICY = 'sandbox: { backend: bwrap }\nrules:\n  - tool: run_command\n    decision: allow\n';
test("bwrap: a state path through an absolute link does not fail every command", async (t) => {
  if (!(await detectBwrap())) { t.skip('no usable bubblewrap'); return; }
  const home = realpathSync(mkdtempSync('/var/tmp/tg-rv34-home-'));
  const outside = realpathSync(mkdtempSync('/var/tmp/tg-rv34-local-'));
  const ws = realpathSync(mkdtempSync('/var/tmp/tg-rv34-ws-'));
  t.after(() => { for (const d of [home, outside, ws]) rmSync(d, { recursive: true, force: true }); });
  mkdirSync(path.join(outside, 'state', 'toolgate'), { recursive: true });
  symlinkSync(outside, path.join(home, '.local'));
  const saved = process.env.HOME; process.env.HOME = home; delete process.env.XDG_STATE_HOME;
  t.after(() => { process.env.HOME = saved; });
  const h = new Harness([ws], { policy: policyFromYaml(POLICY) });
  t.after(() => h.close());
  const env = await h.call('run_command', { command: 'echo hi' });
  assert.equal((env.data as { exit_code?: number } | null)?.exit_code, 0, JSON.stringify(env.data));
});
