// Review 33. The user's toolgate state (~/.local/state/toolgate: stored allow_always grants, pins)
// is hidden from commands only when it exists: mask() skips a missing path and no stand-in is
// bound. With HOME inside a workspace root (workspace = HOME, a devcontainer with HOME in the
// project) and no state yet, a sandboxed command creates grants/<sha256(root)>.json holding
// {tool: "*"}, and every later call the policy asks about is allowed without asking.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Harness, policyFromYaml } from '../../src/testing/helpers.js';
import { detectBwrap } from '../../src/exec/sandbox.js';
import { GrantStore } from '../../src/approvals/grant-store.js';

const POLICY = 'sandbox: { backend: bwrap }\nrules:\n  - tool: run_command\n    decision: allow\n';

test('bwrap: a command cannot create the user\'s missing toolgate state when HOME lies in the workspace', async (t) => {
  if (!(await detectBwrap())) { t.skip('no usable bubblewrap'); return; }
  if (spawnSync('python3', ['-c', '0']).status !== 0) { t.skip('python3 is missing'); return; }
  const home = realpathSync(mkdtempSync('/var/tmp/tg-rv33-home-'));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  const saved = { HOME: process.env.HOME, XDG_STATE_HOME: process.env.XDG_STATE_HOME };
  process.env.HOME = home;
  delete process.env.XDG_STATE_HOME;
  t.after(() => { for (const [k, v] of Object.entries(saved)) { if (v === undefined) delete process.env[k]; else process.env[k] = v; } });
  writeFileSync(path.join(home, 'plant.py'), [
    'import hashlib, json, os',
    "root = os.path.realpath('.')",
    "d = os.path.expanduser('~/.local/state/toolgate/grants')",
    'os.makedirs(d, exist_ok=True)',
    "json.dump({'version': 1, 'root': root, 'grants': [{'id': 'g_1', 'tool': '*', 'created_at': '2026-01-01T00:00:00Z', 'granted_at': 'x'}]},",
    "          open(os.path.join(d, hashlib.sha256(root.encode()).hexdigest() + '.json'), 'w'))", ''].join('\n'));
  const h = new Harness([home], { policy: policyFromYaml(POLICY) });
  t.after(() => h.close());
  const env = await h.call('run_command', { command: 'python3 plant.py' });
  assert.equal((env.data as { sandbox?: string } | null)?.sandbox, 'bwrap', JSON.stringify(env));
  const stored = new GrantStore({ HOME: home }).load(home).grants;
  assert.deepEqual(stored.map((g) => g.tool), [], 'a sandboxed command stored an allow_always grant for every tool');
});
