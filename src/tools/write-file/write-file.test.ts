import assert from 'node:assert/strict';
import { chmodSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { allowAll, markRead, sha } from '../../fs-write/test-support.js';

test('write_file creates a new file without a read, and returns an all-added diff', async () => {
  const { h, dir, done } = allowAll();
  const env = await h.call('write_file', { path: 'new.txt', content: 'a\nb\n' });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  assert.equal(readFileSync(`${dir}/new.txt`, 'utf8'), 'a\nb\n');
  const d = env.data as Record<string, unknown>;
  assert.equal(d.created, true);
  assert.equal(d.sha256_before, null);
  assert.match(d.diff as string, /^--- \/dev\/null\n\+\+\+ b\/new\.txt\n@@ -0,0 \+1,2 @@\n\+a\n\+b\n$/);
  assert.deepEqual(env.artifacts.files_changed, ['new.txt']);
  // The write counts as a read: overwriting it next needs no read_file.
  const again = await h.call('write_file', { path: 'new.txt', content: 'c\n' });
  assert.equal(again.ok, true, JSON.stringify(again.error));
  assert.equal(readFileSync(`${dir}/new.txt`, 'utf8'), 'c\n');
  done();
});

test('write_file over an existing file needs a read and keeps mode, CRLF and the BOM', async () => {
  const { h, dir, done } = allowAll();
  const f = `${dir}/win.txt`;
  writeFileSync(f, '\uFEFFold\r\nlines\r\n');
  chmodSync(f, 0o755);
  let env = await h.call('write_file', { path: 'win.txt', content: 'new\nlines\n' });
  assert.equal(env.error?.code, 'ReadRequired');
  assert.equal(readFileSync(f, 'utf8'), '\uFEFFold\r\nlines\r\n');
  markRead(h, f);
  env = await h.call('write_file', { path: 'win.txt', content: 'new\nlines\n' });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  assert.equal(readFileSync(f, 'utf8'), '\uFEFFnew\r\nlines\r\n');
  assert.equal(statSync(f).mode & 0o777, 0o755);
  assert.equal((env.data as { sha256: string }).sha256, sha(readFileSync(f)));
  // No temporary files are left behind.
  assert.deepEqual(readdirSync(dir).filter((n) => n.includes('.tg-')), []);
  done();
});

test('write_file creates parents only with create_dirs; dry_run creates nothing', async () => {
  const { h, dir, done } = allowAll();
  let env = await h.call('write_file', { path: 'x/y/z.txt', content: 'hi' });
  assert.equal(env.error?.code, 'NotFound');
  assert.match(env.error!.message, /create_dirs/);
  env = await h.call('write_file', { path: 'x/y/z.txt', content: 'hi', create_dirs: true, dry_run: true });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  assert.equal(existsSync(`${dir}/x`), false);
  env = await h.call('write_file', { path: 'x/y/z.txt', content: 'hi', create_dirs: true });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  assert.equal(readFileSync(`${dir}/x/y/z.txt`, 'utf8'), 'hi');
  done();
});

test('write_file of identical content writes nothing and says so', async () => {
  const { h, dir, done } = allowAll();
  const f = `${dir}/same.txt`;
  writeFileSync(f, 'same\n');
  markRead(h, f);
  const ino = statSync(f).ino;
  const env = await h.call('write_file', { path: 'same.txt', content: 'same\n' });
  assert.equal(env.ok, true);
  assert.deepEqual(env.artifacts.files_changed, []);
  assert.equal(statSync(f).ino, ino);
  done();
});

test('write_file on a directory is refused', async () => {
  const { h, done } = allowAll();
  const env = await h.call('write_file', { path: '.', content: 'x' });
  assert.equal(env.ok, false);
  done();
});

test('write_file with expected_sha256 on a file that no longer exists fails with StaleRead, creates nothing', async () => {
  const { h, dir, done } = allowAll();
  const env = await h.call('write_file', { path: 'gone.txt', content: 'new\n', expected_sha256: sha('old\n') });
  assert.equal(env.error?.code, 'StaleRead', JSON.stringify(env.error));
  assert.deepEqual((env.error!.details as { changed: string[] }).changed, ['deleted']);
  assert.equal(existsSync(`${dir}/gone.txt`), false);
  // Deleted between the plan and the write (while the user was being asked): the same.
  writeFileSync(`${dir}/later.txt`, 'old\n');
  const { unlinkSync } = await import('node:fs');
  const { Harness, policyFromYaml } = await import('../../testing/helpers.js');
  const asking = new Harness([dir], { policy: policyFromYaml('rules: []\n') });
  asking.session.elicit = async () => { unlinkSync(`${dir}/later.txt`); return { action: 'accept', content: { decision: 'allow_once' } }; };
  const env2 = await asking.call('write_file', { path: 'later.txt', content: 'new\n', expected_sha256: sha('old\n') });
  assert.ok(['StaleRead', 'NotFound'].includes(env2.error?.code ?? ''), JSON.stringify(env2.error));
  assert.equal(existsSync(`${dir}/later.txt`), false);
  asking.close();
  done();
});

test('write_file of exactly what an unread file holds needs no read (a repeated write in a new session); any difference still does', async () => {
  const { h, dir, done } = allowAll();
  writeFileSync(`${dir}/same.txt`, 'hello\n');
  const same = await h.call('write_file', { path: 'same.txt', content: 'hello\n' });
  assert.equal(same.ok, true, JSON.stringify(same.error));
  assert.deepEqual(same.artifacts.files_changed, []);
  assert.match(same.text, /already has this content/);
  const other = await h.call('write_file', { path: 'same.txt', content: 'hello!\n' });
  assert.equal(other.error?.code, 'ReadRequired');
  assert.equal(readFileSync(`${dir}/same.txt`, 'utf8'), 'hello\n');
  done();
});
