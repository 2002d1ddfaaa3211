// Review 33. Since review 32 every folder above a read-only path is pinned and each read-only bind
// is checked; the check (pin-check.ts) compares every entry with every line of the mount table in
// bash: O(entries × mounts). A command that makes 600 empty nested `.git` folders (mkdir in a
// script: a nested .git that does not exist is no stand-in) makes every later command of the
// workspace take ~15 s before it starts (1000: ~40 s, past common time-outs); bwrap's own mounts
// are ~2 s of it. A workspace holding a few hundred checkouts pays the same without any attack.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Harness, policyFromYaml } from '../../src/testing/helpers.js';
import { detectBwrap } from '../../src/exec/sandbox.js';

const POLICY = 'sandbox: { backend: bwrap }\nrules:\n  - tool: run_command\n    decision: allow\n';

test('bwrap: 600 nested .git folders made by a command do not make each later command take seconds', { timeout: 120_000 }, async (t) => {
  if (!(await detectBwrap())) { t.skip('no usable bubblewrap'); return; }
  const ws = mkdtempSync('/var/tmp/tg-rv33-pins-');
  t.after(() => rmSync(ws, { recursive: true, force: true }));
  writeFileSync(path.join(ws, 'mk.sh'), 'for i in $(seq 1 600); do mkdir -p "g$((i % 10))/r$i/.git"; done\n');
  const h = new Harness([ws], { policy: policyFromYaml(POLICY) });
  t.after(() => h.close());
  const made = await h.call('run_command', { command: 'bash mk.sh' });
  assert.equal(made.ok, true, JSON.stringify(made));
  const start = Date.now();
  const env = await h.call('run_command', { command: 'echo hi' });
  const ms = Date.now() - start;
  assert.equal(env.ok, true, JSON.stringify(env));
  assert.ok(ms < 5000, `echo hi took ${ms} ms`);
});
