// The user's toolgate state (stored grants, pins) and runtime dir (approval sockets, the console
// secret) must be out of every tool's reach, even when a workspace root contains them — e.g. a
// workspace that is the whole home folder.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { compilePolicy } from '../../src/policy/compile.js';
import { policySchema } from '../../src/policy/schema.js';
import { Harness, tempDir } from '../../src/testing/helpers.js';
import { userPrivatePaths, userStateDir, runtimeDir } from '../../src/user-state.js';

test('user state and runtime dirs follow XDG_STATE_HOME / XDG_RUNTIME_DIR', () => {
  assert.equal(userStateDir({ XDG_STATE_HOME: '/x/state', HOME: '/h' }), '/x/state/toolgate');
  assert.equal(userStateDir({ HOME: '/h' }), '/h/.local/state/toolgate');
  assert.equal(userStateDir({ XDG_STATE_HOME: 'relative', HOME: '/h' }), '/h/.local/state/toolgate', 'a relative XDG path is ignored (spec)');
  assert.equal(runtimeDir({ XDG_RUNTIME_DIR: '/run/user/7' }), '/run/user/7/toolgate');
  assert.deepEqual(userPrivatePaths({ XDG_STATE_HOME: '/s', XDG_RUNTIME_DIR: '/r' }), ['/s/toolgate', '/r/toolgate']);
});

test('no tool reads, lists, searches or writes the user state inside a workspace', async () => {
  const { dir, cleanup } = tempDir();
  const state = path.join(dir, '.local', 'state', 'toolgate');
  const run = path.join(dir, 'run', 'toolgate');
  mkdirSync(path.join(state, 'grants'), { recursive: true });
  mkdirSync(run, { recursive: true });
  writeFileSync(path.join(state, 'grants', 'g.json'), 'GRANT-CANARY');
  writeFileSync(path.join(run, 'console.secret'), 'SECRET-CANARY');
  writeFileSync(path.join(dir, 'ok.txt'), 'fine');
  const policy = compilePolicy(policySchema.parse({ rules: [{ tool: '*', decision: 'allow' }] }), { origin: 't', deniedAbs: [state, run] });
  const h = new Harness([dir], { policy, stateDir: path.join(dir, 'tg-state') });
  try {
    for (const p of ['.local/state/toolgate/grants/g.json', 'run/toolgate/console.secret', `${state}/grants/g.json`]) {
      const r = await h.call('read_file', { path: p });
      assert.equal(r.ok, false, p);
      assert.equal(r.error?.code, 'PathDenied', p);
    }
    const w = await h.call('write_file', { path: '.local/state/toolgate/grants/new.json', content: '[]', create_dirs: true });
    assert.equal(w.ok, false);
    const g = await h.call('grep', { pattern: 'CANARY', path: '.', output_mode: 'content' });
    assert.doesNotMatch(JSON.stringify(g), /GRANT-CANARY|SECRET-CANARY/);
    const gl = await h.call('glob', { pattern: '**/*', path: '.' });
    assert.doesNotMatch(JSON.stringify(gl.data), /g\.json|console\.secret/);
    const ls = await h.call('list_dir', { path: 'run' });
    assert.doesNotMatch(JSON.stringify(ls.data), /"toolgate"/);
    assert.equal((await h.call('read_file', { path: 'ok.txt' })).ok, true, 'the control still works');
  } finally {
    h.close();
    cleanup();
  }
});
