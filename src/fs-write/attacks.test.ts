import assert from 'node:assert/strict';
import { existsSync, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { tempDir } from '../testing/helpers.js';
import { checkTarget, expectOf, stageFile, discard } from './atomic-write.js';
import { allowAll, markRead, sha } from './test-support.js';

/** A workspace with traps pointing at an outside directory holding a canary. */
function trapped() {
  const ws = allowAll();
  const out = tempDir('tg-outside-');
  const canary = `${out.dir}/canary.txt`;
  writeFileSync(canary, 'CANARY\n');
  const { dir } = ws;
  symlinkSync(canary, `${dir}/link.txt`);
  symlinkSync(out.dir, `${dir}/outdir`);
  writeFileSync(`${dir}/inner.txt`, 'inner\n');
  linkSync(canary, `${dir}/hard.txt`);
  mkdirSync(`${dir}/.git/hooks`, { recursive: true });
  writeFileSync(`${dir}/.git/hooks/pre-commit`, '#!/bin/sh\nexit 0\n');
  writeFileSync(`${dir}/.git/config`, '[core]\n');
  writeFileSync(`${dir}/.env`, 'TOKEN=x\n');
  mkdirSync(`${dir}/.vscode`);
  writeFileSync(`${dir}/.vscode/settings.json`, '{}\n');
  mkdirSync(`${dir}/.toolgate`, { recursive: true });
  writeFileSync(`${dir}/.toolgate/audit.jsonl`, '');
  const outsideBefore = readdirSync(out.dir).sort();
  return {
    ...ws, out: out.dir, canary,
    check() {
      assert.equal(readFileSync(canary, 'utf8'), 'CANARY\n', 'the outside canary changed');
      assert.deepEqual(readdirSync(out.dir).sort(), outsideBefore, 'something was created outside');
      assert.equal(readFileSync(`${dir}/.git/hooks/pre-commit`, 'utf8'), '#!/bin/sh\nexit 0\n');
      assert.equal(readFileSync(`${dir}/.git/config`, 'utf8'), '[core]\n');
      assert.equal(readFileSync(`${dir}/.env`, 'utf8'), 'TOKEN=x\n');
      assert.equal(readFileSync(`${dir}/.vscode/settings.json`, 'utf8'), '{}\n');
    },
    cleanup() { ws.done(); out.cleanup(); },
  };
}

const ESCAPES: Array<[string, string]> = [
  ['a symlinked target pointing out', 'link.txt'],
  ['a symlinked parent pointing out', 'outdir/canary.txt'],
  ['a new file under a symlinked dir pointing out', 'outdir/new.txt'],
  ['a new dir under a symlinked dir pointing out', 'outdir/sub/new.txt'],
  ['a ../ escape', '../canary.txt'],
  ['a ../ escape through a subdir', 'sub/../../canary.txt'],
  ['a git hook', '.git/hooks/pre-commit'],
  ['a new git hook', '.git/hooks/post-checkout'],
  ['the git config', '.git/config'],
  ['a secret', '.env'],
  ['a secret variant', 'config/.env.local'],
  ['editor settings', '.vscode/settings.json'],
  ['the state dir', '.toolgate/audit.jsonl'],
  ['a new file in the state dir', '.toolgate/x.txt'],
];

for (const [what, p] of ESCAPES) {
  test(`write_file, edit_file and multi_edit refuse ${what} (${p})`, async () => {
    const t = trapped();
    const abs = `${t.dir}/${p}`;
    if (existsSync(abs)) markRead(t.h, abs);
    const calls: Array<[string, Record<string, unknown>]> = [
      ['write_file', { path: p, content: 'PWNED\n', create_dirs: true }],
      ['write_file', { path: p, content: 'PWNED\n', expected_sha256: sha('CANARY\n') }],
      ['edit_file', { path: p, old_string: 'CANARY', new_string: 'PWNED' }],
      ['multi_edit', { path: p, edits: [{ old_string: 'CANARY', new_string: 'PWNED' }] }],
      ['write_file', { path: `${t.out}/canary.txt`, content: 'PWNED\n' }],
    ];
    for (const [tool, args] of calls) {
      const env = await t.h.call(tool, args);
      assert.equal(env.ok, false, `${tool} ${JSON.stringify(args)} was allowed`);
      assert.ok(['PathTraversalBlocked', 'PathDenied', 'NotFound'].includes(env.error!.code), `${tool}: ${env.error!.code} ${env.error!.message}`);
    }
    t.check();
    t.cleanup();
  });
}

test('a hard-linked file is refused even with expected_sha256 (it may be a file outside)', async () => {
  const t = trapped();
  markRead(t.h, `${t.dir}/hard.txt`);
  for (const args of [{ path: 'hard.txt', content: 'PWNED\n' }, { path: 'hard.txt', content: 'PWNED\n', expected_sha256: sha('CANARY\n') }]) {
    const env = await t.h.call('write_file', args);
    assert.equal(env.error?.code, 'PathDenied', JSON.stringify(env.error));
  }
  const env = await t.h.call('edit_file', { path: 'hard.txt', old_string: 'CANARY', new_string: 'PWNED' });
  assert.equal(env.error?.code, 'PathDenied');
  t.check();
  t.cleanup();
});

test('an inside symlink is written through to its real target, and the link stays a link', async () => {
  const t = trapped();
  symlinkSync(`${t.dir}/inner.txt`, `${t.dir}/alias.txt`);
  markRead(t.h, `${t.dir}/inner.txt`);
  const env = await t.h.call('edit_file', { path: 'alias.txt', old_string: 'inner', new_string: 'changed' });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  assert.equal(readFileSync(`${t.dir}/inner.txt`, 'utf8'), 'changed\n');
  assert.ok(lstatSync(`${t.dir}/alias.txt`).isSymbolicLink());
  t.check();
  t.cleanup();
});

test('the last check before the rename refuses a target swapped for a symlink, a changed file, a new file', async () => {
  const { dir, cleanup } = tempDir();
  const out = tempDir();
  const f = `${dir}/t.txt`;
  writeFileSync(f, 'old\n');
  const st = statSync(f);
  const staged = await stageFile(f, 't.txt', Buffer.from('new\n'), st);
  unlinkSync(f);
  symlinkSync(`${out.dir}/x`, f);
  await assert.rejects(checkTarget(f, 't.txt', expectOf(st), false), (e: { code: string }) => e.code === 'PathTraversalBlocked');
  unlinkSync(f);
  writeFileSync(f, 'someone else\n');
  await assert.rejects(checkTarget(f, 't.txt', expectOf(st), false), (e: { code: string }) => e.code === 'StaleRead');
  await assert.rejects(checkTarget(`${dir}/t.txt`, 't.txt', null, false), (e: { code: string }) => e.code === 'StaleRead');
  await discard(staged);
  assert.deepEqual(readdirSync(dir), ['t.txt']);
  assert.deepEqual(readdirSync(out.dir), []);
  cleanup();
  out.cleanup();
});
