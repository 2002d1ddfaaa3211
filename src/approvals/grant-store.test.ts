import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { tempDir } from '../testing/helpers.js';
import { GrantStore, grantFileFor } from './grant-store.js';

function setup() {
  const t = tempDir('tg-grants-');
  const ws = path.join(t.dir, 'ws');
  mkdirSync(ws);
  const env = { XDG_STATE_HOME: path.join(t.dir, 'state'), HOME: t.dir };
  const warnings: string[] = [];
  return { ...t, ws, env, warnings, store: new GrantStore(env, (m) => warnings.push(m)) };
}

test('grants are stored in the user state keyed by the root, 0600 in a 0700 folder, and read back', () => {
  const s = setup();
  const added = s.store.add(s.ws, [{ tool: 'write_file', abs: `${s.ws}/a.txt`, access: 'write', path: 'a.txt', granted_at: 'now' }]);
  assert.equal(added.length, 1);
  const file = grantFileFor(s.ws, s.env);
  assert.ok(file.startsWith(path.join(s.env.XDG_STATE_HOME, 'toolgate', 'grants')));
  assert.ok(!file.startsWith(s.ws), 'never inside the workspace');
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.equal(statSync(path.dirname(file)).mode & 0o777, 0o700);
  assert.equal(JSON.parse(readFileSync(file, 'utf8')).root, s.ws);
  assert.equal(new GrantStore(s.env).load(s.ws).grants[0]!.tool, 'write_file');
  // The same grant twice is stored once.
  assert.equal(s.store.add(s.ws, [{ tool: 'write_file', abs: `${s.ws}/a.txt`, access: 'write', path: 'a.txt', granted_at: 'later' }]).length, 0);
  assert.equal(s.store.load(s.ws).grants.length, 1);
  // Another root has none.
  const other = path.join(s.dir, 'other');
  mkdirSync(other);
  assert.deepEqual(s.store.load(other).grants, []);
  s.cleanup();
});

test('revoke removes one grant by id; an unknown id is false', () => {
  const s = setup();
  const [a, b] = s.store.add(s.ws, [{ tool: 'run_command', command: ['npm', 'test'], granted_at: 'x' }, { tool: 'fetch_url', domain: 'example.com', granted_at: 'x' }]);
  assert.equal(s.store.revoke(s.ws, 'g_nope'), false);
  assert.equal(s.store.revoke(s.ws, a!.id), true);
  assert.deepEqual(s.store.load(s.ws).grants.map((g) => g.id), [b!.id]);
  s.cleanup();
});

test('a corrupt or ill-shaped grants file fails closed: no grant applies, a warning, and it is not overwritten', () => {
  for (const bad of ['{not json', '[]', '{"version":2,"grants":[]}', '{"version":1,"grants":[{"tool":"write_file"}]}', '{"version":1,"grants":[{"id":"g","tool":"x","created_at":"t","command":"npm test"}]}']) {
    const s = setup();
    const file = grantFileFor(s.ws, s.env);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, bad);
    const r = s.store.load(s.ws);
    assert.deepEqual(r.grants, [], bad);
    assert.match(r.warning ?? '', /cannot be read/);
    assert.equal(s.warnings.length, 1);
    assert.throws(() => s.store.add(s.ws, [{ tool: 'write_file', granted_at: 'x' }]));
    assert.equal(readFileSync(file, 'utf8'), bad, 'left as it was');
    s.cleanup();
  }
});
