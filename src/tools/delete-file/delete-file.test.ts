import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { allowAll } from '../../fs-write/test-support.js';
import { Harness, tempDir } from '../../testing/helpers.js';

test('delete_file asks by default (high risk): a client that cannot answer gets ApprovalRequired', async () => {
  const { dir, cleanup } = tempDir();
  writeFileSync(`${dir}/a.txt`, 'a\n');
  const h = new Harness([dir]);
  const env = await h.call('delete_file', { path: 'a.txt' });
  assert.equal(env.error?.code, 'ApprovalRequired');
  assert.equal(existsSync(`${dir}/a.txt`), true);
  h.close();
  cleanup();
});

test('delete_file deletes a file and returns the removed content as a diff; dry_run deletes nothing', async () => {
  const { h, dir, done } = allowAll();
  writeFileSync(`${dir}/a.txt`, 'one\ntwo\n');
  const dry = await h.call('delete_file', { path: 'a.txt', dry_run: true });
  assert.equal(dry.ok, true, JSON.stringify(dry.error));
  assert.equal(existsSync(`${dir}/a.txt`), true);
  const env = await h.call('delete_file', { path: 'a.txt' });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  assert.equal(existsSync(`${dir}/a.txt`), false);
  assert.match((env.data as { diff: string }).diff, /--- a\/a\.txt\n\+\+\+ \/dev\/null\n@@ -1,2 \+0,0 @@\n-one\n-two/);
  assert.deepEqual(env.artifacts.files_changed, ['a.txt']);
  assert.equal((await h.call('delete_file', { path: 'a.txt' })).error?.code, 'NotFound');
  done();
});

test('a directory needs recursive; the root is never deleted', async () => {
  const { h, dir, done } = allowAll();
  mkdirSync(`${dir}/d/e`, { recursive: true });
  writeFileSync(`${dir}/d/e/f.txt`, 'f');
  writeFileSync(`${dir}/d/g.txt`, 'g');
  let env = await h.call('delete_file', { path: 'd' });
  assert.equal(env.error?.code, 'InvalidArguments');
  assert.match(env.error!.message, /recursive: true/);
  assert.equal(existsSync(`${dir}/d/e/f.txt`), true);
  for (const p of ['.', '', dir, 'd/..']) {
    env = await h.call('delete_file', { path: p, recursive: true });
    assert.equal(env.ok, false, p);
  }
  env = await h.call('delete_file', { path: 'd', recursive: true });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  assert.equal(existsSync(`${dir}/d`), false);
  assert.deepEqual((env.data as { deleted: string[] }).deleted, ['d/e/f.txt', 'd/e', 'd/g.txt', 'd']);
  done();
});

test('a recursive delete deletes links, never what they point at', async () => {
  const { h, dir, done } = allowAll();
  const out = tempDir('tg-outside-');
  writeFileSync(`${out.dir}/canary.txt`, 'CANARY\n');
  mkdirSync(`${dir}/d`);
  symlinkSync(out.dir, `${dir}/d/outdir`);
  symlinkSync(`${out.dir}/canary.txt`, `${dir}/d/outfile`);
  const env = await h.call('delete_file', { path: 'd', recursive: true });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  assert.equal(existsSync(`${dir}/d`), false);
  assert.equal(readFileSync(`${out.dir}/canary.txt`, 'utf8'), 'CANARY\n');
  assert.deepEqual(readdirSync(out.dir), ['canary.txt']);
  done();
  out.cleanup();
});

test('delete_file on a link deletes the link, even one pointing out; a symlinked dir is not walked', async () => {
  const { h, dir, done } = allowAll();
  const out = tempDir('tg-outside-');
  writeFileSync(`${out.dir}/canary.txt`, 'CANARY\n');
  writeFileSync(`${dir}/inner.txt`, 'inner\n');
  symlinkSync(`${out.dir}/canary.txt`, `${dir}/out-link`);
  symlinkSync(`${dir}/inner.txt`, `${dir}/in-link`);
  symlinkSync(out.dir, `${dir}/out-dir`);
  for (const p of ['out-link', 'in-link', 'out-dir']) {
    const env = await h.call('delete_file', { path: p, recursive: true });
    assert.equal(env.ok, true, `${p}: ${JSON.stringify(env.error)}`);
    assert.equal(existsSync(`${dir}/${p}`) || (() => { try { lstatSync(`${dir}/${p}`); return true; } catch { return false; } })(), false, p);
  }
  assert.equal(readFileSync(`${dir}/inner.txt`, 'utf8'), 'inner\n');
  assert.equal(readFileSync(`${out.dir}/canary.txt`, 'utf8'), 'CANARY\n');
  // Through a symlinked dir pointing out: refused.
  symlinkSync(out.dir, `${dir}/out-dir2`);
  const env = await h.call('delete_file', { path: 'out-dir2/canary.txt' });
  assert.equal(env.error?.code, 'PathTraversalBlocked');
  assert.equal(readFileSync(`${out.dir}/canary.txt`, 'utf8'), 'CANARY\n');
  done();
  out.cleanup();
});

test('protected and secret paths are never deleted, alone or inside a recursive delete', async () => {
  const { h, dir, done } = allowAll();
  mkdirSync(`${dir}/proj/.git/hooks`, { recursive: true });
  writeFileSync(`${dir}/proj/.git/hooks/pre-commit`, 'x');
  writeFileSync(`${dir}/proj/a.txt`, 'a');
  mkdirSync(`${dir}/app`);
  writeFileSync(`${dir}/app/.env`, 'TOKEN=1');
  writeFileSync(`${dir}/app/b.txt`, 'b');
  mkdirSync(`${dir}/.toolgate`, { recursive: true });
  writeFileSync(`${dir}/.toolgate/keep`, 'k');
  symlinkSync(`${dir}/app/.env`, `${dir}/env-link`);
  for (const [p, recursive] of [['proj', true], ['proj/.git', true], ['proj/.git/hooks/pre-commit', false], ['app', true], ['app/.env', false], ['.toolgate', true], ['.toolgate/keep', false], ['../', true]] as const) {
    const env = await h.call('delete_file', { path: p, recursive });
    assert.equal(env.ok, false, p);
    assert.ok(['PathDenied', 'PathTraversalBlocked', 'InvalidArguments'].includes(env.error!.code), `${p}: ${env.error!.code}`);
  }
  assert.equal(existsSync(`${dir}/proj/a.txt`), true, 'nothing deleted when one entry is protected');
  assert.equal(existsSync(`${dir}/app/b.txt`), true);
  assert.equal(existsSync(`${dir}/app/.env`), true);
  assert.equal(existsSync(`${dir}/.toolgate/keep`), true);
  done();
});
