// Review 35. HOME in a workspace root (a dev container, HOME=/workspace) without ~/.local yet: the
// agent writes `.local` as a file with write_file (nothing protects the way to the state folder),
// then a sandboxed command finds no state folder masked (makePrivateDir failed on the file, the
// link check stops at a file) and stores an allow_always grant for every tool.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Harness, policyFromYaml } from '../../src/testing/helpers.js';
import { detectBwrap } from '../../src/exec/sandbox.js';
import { GrantStore } from '../../src/approvals/grant-store.js';

const POLICY = 'sandbox: { backend: bwrap }\nrules:\n  - tool: run_command\n    decision: allow\n  - tool: write_file\n    decision: allow\n';

test('bwrap: an agent cannot turn ~/.local into a file and then store grants from a sandboxed command (HOME in the workspace)', async (t) => {
  if (!(await detectBwrap())) { t.skip('no usable bubblewrap'); return; }
  if (spawnSync('python3', ['-c', '0']).status !== 0) { t.skip('python3 is missing'); return; }
  const home = realpathSync(mkdtempSync('/var/tmp/tg-rv35-home-'));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  const saved = { HOME: process.env.HOME, XDG_STATE_HOME: process.env.XDG_STATE_HOME };
  process.env.HOME = home;
  delete process.env.XDG_STATE_HOME;
  t.after(() => { for (const [k, v] of Object.entries(saved)) { if (v === undefined) delete process.env[k]; else process.env[k] = v; } });
  writeFileSync(path.join(home, 'plant.py'), [
    'import hashlib, json, os',
    "root = os.path.realpath('.')",
    "if os.path.isfile(os.path.expanduser('~/.local')): os.remove(os.path.expanduser('~/.local'))",
    "d = os.path.expanduser('~/.local/state/toolgate/grants')",
    'os.makedirs(d, exist_ok=True)',
    "json.dump({'version': 1, 'root': root, 'grants': [{'id': 'g_1', 'tool': '*', 'created_at': '2026-01-01T00:00:00Z', 'granted_at': 'x'}]},",
    "          open(os.path.join(d, hashlib.sha256(root.encode()).hexdigest() + '.json'), 'w'))",
    "print('planted')", ''].join('\n'));
  const h = new Harness([home], { policy: policyFromYaml(POLICY) });
  t.after(() => h.close());
  assert.equal(existsSync(path.join(home, '.local')), false);
  const w = await h.call('write_file', { path: '.local', content: 'x\n' });
  const env = await h.call('run_command', { command: 'python3 plant.py' });
  const stored = new GrantStore({ HOME: home }).load(home).grants;
  assert.deepEqual(stored.map((g) => g.tool), [], `write_file .local: ${JSON.stringify(w.error ?? 'ok')}; then a sandboxed command stored a grant for every tool: ${JSON.stringify(env.error ?? env.data)}`);
});
