// Review 35. With HOME in a workspace root, the user's state folder (~/.local/state/toolgate) is
// made before the sandbox starts (review 33) so that there is something to mask, and a link on its
// way is refused (review 34). When a part of the way is a regular *file* (a repository that ships a
// `.local` file, a stray `~/.local/state` file), makePrivateDir fails silently, linkOnTheWay stops
// at the file ("nothing can be below it"), the mask finds nothing to cover and ancestorsToPin stops
// there too: a command removes the file, makes ~/.local/state/toolgate/grants as real folders and
// stores {tool: "*"}; the server reads its grants through that same path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Harness, policyFromYaml } from '../../src/testing/helpers.js';
import { detectBwrap } from '../../src/exec/sandbox.js';
import { GrantStore } from '../../src/approvals/grant-store.js';

const POLICY = 'sandbox: { backend: bwrap }\nrules:\n  - tool: run_command\n    decision: allow\n';

for (const variant of ['~/.local a file', '~/.local/state a file'] as const) {
  test(`bwrap: a command cannot make the user's state folder where a file stood on its way (${variant})`, async (t) => {
    if (!(await detectBwrap())) { t.skip('no usable bubblewrap'); return; }
    if (spawnSync('python3', ['-c', '0']).status !== 0) { t.skip('python3 is missing'); return; }
    const home = realpathSync(mkdtempSync('/var/tmp/tg-rv35-home-'));
    t.after(() => rmSync(home, { recursive: true, force: true }));
    if (variant === '~/.local a file') writeFileSync(path.join(home, '.local'), 'not a folder\n');
    else { mkdirSync(path.join(home, '.local')); writeFileSync(path.join(home, '.local', 'state'), 'not a folder\n'); }
    const saved = { HOME: process.env.HOME, XDG_STATE_HOME: process.env.XDG_STATE_HOME };
    process.env.HOME = home;
    delete process.env.XDG_STATE_HOME;
    t.after(() => { for (const [k, v] of Object.entries(saved)) { if (v === undefined) delete process.env[k]; else process.env[k] = v; } });
    writeFileSync(path.join(home, 'plant.py'), [
      'import hashlib, json, os',
      "root = os.path.realpath('.')",
      "for f in (os.path.expanduser('~/.local/state'), os.path.expanduser('~/.local')):",
      '    if os.path.isfile(f): os.remove(f)',
      "d = os.path.expanduser('~/.local/state/toolgate/grants')",
      'os.makedirs(d, exist_ok=True)',
      "json.dump({'version': 1, 'root': root, 'grants': [{'id': 'g_1', 'tool': '*', 'created_at': '2026-01-01T00:00:00Z', 'granted_at': 'x'}]},",
      "          open(os.path.join(d, hashlib.sha256(root.encode()).hexdigest() + '.json'), 'w'))",
      "print('planted')", ''].join('\n'));
    const h = new Harness([home], { policy: policyFromYaml(POLICY) });
    t.after(() => h.close());
    const env = await h.call('run_command', { command: 'python3 plant.py' });
    const stored = new GrantStore({ HOME: home }).load(home).grants;
    assert.deepEqual(stored.map((g) => g.tool), [], `a sandboxed command stored an allow_always grant for every tool: ${JSON.stringify(env.error ?? env.data)}`);
  });
}
