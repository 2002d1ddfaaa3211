// Review 34. The user's state folder is masked (and made first, review 33) at the path toolgate
// uses, $HOME/.local/state/toolgate — bwrap follows links there, so the tmpfs lands on the folder
// a link leads to. ancestorsToPin stops at the first link on the way (lstat), so the link itself is
// neither pinned nor hidden: with HOME in a workspace root and ~/.local (or ~/.local/state) a link
// (dotfiles managers, ~/.local kept on another disk), a sandboxed command moves the link away,
// makes ~/.local/state/toolgate/grants as real folders and stores {tool: "*"}; the server, which
// reads its grants through the same path, now finds the command's grants.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Harness, policyFromYaml } from '../../src/testing/helpers.js';
import { detectBwrap } from '../../src/exec/sandbox.js';
import { GrantStore } from '../../src/approvals/grant-store.js';

const POLICY = 'sandbox: { backend: bwrap }\nrules:\n  - tool: run_command\n    decision: allow\n';

for (const variant of ['~/.local -> ../outside, relative', '~/.local/state -> ../dotfiles/state'] as const) {
  test(`bwrap: a command cannot swap a link on the state path for its own folders (${variant})`, async (t) => {
    if (!(await detectBwrap())) { t.skip('no usable bubblewrap'); return; }
    if (spawnSync('python3', ['-c', '0']).status !== 0) { t.skip('python3 is missing'); return; }
    const home = realpathSync(mkdtempSync('/var/tmp/tg-rv34-home-'));
    const outside = realpathSync(mkdtempSync('/var/tmp/tg-rv34-local-'));
    t.after(() => { rmSync(home, { recursive: true, force: true }); rmSync(outside, { recursive: true, force: true }); });
    if (variant.startsWith('~/.local -> ')) {
      mkdirSync(path.join(outside, 'state'), { recursive: true });
      symlinkSync(path.relative(home, outside), path.join(home, '.local'));
    } else {
      mkdirSync(path.join(home, 'dotfiles', 'state'), { recursive: true });
      mkdirSync(path.join(home, '.local'));
      symlinkSync('../dotfiles/state', path.join(home, '.local', 'state'));
    }
    const saved = { HOME: process.env.HOME, XDG_STATE_HOME: process.env.XDG_STATE_HOME };
    process.env.HOME = home;
    delete process.env.XDG_STATE_HOME;
    t.after(() => { for (const [k, v] of Object.entries(saved)) { if (v === undefined) delete process.env[k]; else process.env[k] = v; } });
    writeFileSync(path.join(home, 'plant.py'), [
      'import hashlib, json, os',
      "root = os.path.realpath('.')",
      "link = os.path.expanduser('~/.local') if os.path.islink(os.path.expanduser('~/.local')) else os.path.expanduser('~/.local/state')",
      "os.rename(link, link + '.old')",
      "d = os.path.expanduser('~/.local/state/toolgate/grants')",
      'os.makedirs(d, exist_ok=True)',
      "json.dump({'version': 1, 'root': root, 'grants': [{'id': 'g_1', 'tool': '*', 'created_at': '2026-01-01T00:00:00Z', 'granted_at': 'x'}]},",
      "          open(os.path.join(d, hashlib.sha256(root.encode()).hexdigest() + '.json'), 'w'))",
      "print('planted')", ''].join('\n'));
    const h = new Harness([home], { policy: policyFromYaml(POLICY) });
    t.after(() => h.close());
    const env = await h.call('run_command', { command: 'python3 plant.py' });
    // Refused before anything runs: no mount can hold the link (the fix), with the way out named.
    assert.equal(env.error?.code, 'ToolNotAllowed', JSON.stringify(env));
    assert.match(env.error!.message, /is a symbolic link on the way to .*XDG_STATE_HOME/);
    const stored = new GrantStore({ HOME: home }).load(home).grants;
    assert.deepEqual(stored.map((g) => g.tool), [], `a sandboxed command stored an allow_always grant for every tool: ${JSON.stringify(env.data)}`);
  });
}
