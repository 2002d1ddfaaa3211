import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { allowAll } from '../../fs-write/test-support.js';
import { Harness, policyFromYaml, tempDir } from '../../testing/helpers.js';

const A = Array.from({ length: 30 }, (_, i) => `a${i + 1}`).join('\n') + '\n';

function snapshot(dir: string, names: string[]) {
  return names.map((n) => (existsSync(`${dir}/${n}`) ? [n, readFileSync(`${dir}/${n}`, 'utf8'), statSync(`${dir}/${n}`).ino] : [n, null, null]));
}

test('apply_patch modifies, adds (with new dirs), deletes and renames in one call', async () => {
  const { h, dir, done } = allowAll();
  writeFileSync(`${dir}/a.txt`, A);
  writeFileSync(`${dir}/c.txt`, 'gone\n');
  writeFileSync(`${dir}/d.txt`, 'keep\nold\n');
  const patch = [
    'diff --git a/a.txt b/a.txt', '--- a/a.txt', '+++ b/a.txt',
    '@@ -2,3 +2,3 @@', ' a2', '-a3', '+A3', ' a4',
    '@@ -20,3 +20,4 @@', ' a20', ' a21', '+a21.5', ' a22',
    '--- /dev/null', '+++ b/new/dir/b.txt', '@@ -0,0 +1,2 @@', '+b1', '+b2',
    'diff --git a/c.txt b/c.txt', 'deleted file mode 100644', '--- a/c.txt', '+++ /dev/null', '@@ -1 +0,0 @@', '-gone',
    'diff --git a/d.txt b/e.txt', 'similarity index 50%', 'rename from d.txt', 'rename to e.txt', '--- a/d.txt', '+++ b/e.txt',
    '@@ -1,2 +1,2 @@', ' keep', '-old', '+new', '',
  ].join('\n');
  const env = await h.call('apply_patch', { patch });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  assert.equal(readFileSync(`${dir}/a.txt`, 'utf8'), A.replace('a3\n', 'A3\n').replace('a21\n', 'a21\na21.5\n'));
  assert.equal(readFileSync(`${dir}/new/dir/b.txt`, 'utf8'), 'b1\nb2\n');
  assert.equal(existsSync(`${dir}/c.txt`), false);
  assert.equal(existsSync(`${dir}/d.txt`), false);
  assert.equal(readFileSync(`${dir}/e.txt`, 'utf8'), 'keep\nnew\n');
  const d = env.data as { files: { op: string; path: string; from: string | null }[]; diff: string; files_changed: string[] };
  assert.deepEqual(d.files.map((f) => [f.op, f.path, f.from]), [['modify', 'a.txt', null], ['add', 'new/dir/b.txt', null], ['delete', 'c.txt', null], ['rename', 'e.txt', 'd.txt']]);
  assert.deepEqual(d.files_changed.sort(), ['a.txt', 'c.txt', 'd.txt', 'e.txt', 'new/dir/b.txt']);
  assert.match(d.diff, /\+\+\+ b\/new\/dir\/b\.txt/);
  assert.match(d.diff, /--- a\/c\.txt\n\+\+\+ \/dev\/null/);
  assert.deepEqual(readdirSync(dir).filter((n) => n.includes('.tg-')), []);
  done();
});

test('apply_patch is all or nothing: the third hunk of the second file fails → no file changed', async () => {
  const { h, dir, done } = allowAll();
  writeFileSync(`${dir}/one.txt`, A);
  writeFileSync(`${dir}/two.txt`, A);
  const before = snapshot(dir, ['one.txt', 'two.txt', 'three.txt']);
  const patch = [
    '--- a/one.txt', '+++ b/one.txt', '@@ -1,2 +1,2 @@', '-a1', '+A1', ' a2',
    '--- a/two.txt', '+++ b/two.txt',
    '@@ -1,2 +1,2 @@', '-a1', '+A1', ' a2',
    '@@ -10,2 +10,2 @@', '-a10', '+A10', ' a11',
    '@@ -20,2 +20,2 @@', '-a20', '+A20', ' NOT-IN-THE-FILE',
    '--- /dev/null', '+++ b/three.txt', '@@ -0,0 +1 @@', '+three', '',
  ].join('\n');
  const env = await h.call('apply_patch', { patch });
  assert.equal(env.error?.code, 'PatchFailed');
  assert.equal(env.error?.details?.path, 'two.txt');
  assert.equal(env.error?.details?.hunk, 3);
  assert.match(env.error!.message, /Hunk 3 of two\.txt/);
  assert.deepEqual(snapshot(dir, ['one.txt', 'two.txt', 'three.txt']), before);
  done();
});

test('a hunk may drift a few lines from its header, but its content must match exactly', async () => {
  const { h, dir, done } = allowAll();
  writeFileSync(`${dir}/a.txt`, 'x1\nx2\nx3\nx4\nx5\n' + A);
  const patch = '--- a/a.txt\n+++ b/a.txt\n@@ -10,3 +10,3 @@\n a10\n-a11\n+A11\n a12\n';
  const env = await h.call('apply_patch', { patch });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  assert.deepEqual((env.data as { files: { offsets: number[] }[] }).files[0]!.offsets, [5]);
  assert.match(readFileSync(`${dir}/a.txt`, 'utf8'), /a10\nA11\na12\n/);
  const fuzzy = await h.call('apply_patch', { patch: '--- a/a.txt\n+++ b/a.txt\n@@ -20,3 +20,3 @@\n a15 \n-a16\n+A16\n a17\n' });
  assert.equal(fuzzy.error?.code, 'PatchFailed');
  done();
});

test('an LF patch applies to a CRLF file, which stays CRLF; dry_run changes nothing', async () => {
  const { h, dir, done } = allowAll();
  writeFileSync(`${dir}/w.txt`, 'a\r\nb\r\nc\r\n');
  const patch = '--- a/w.txt\n+++ b/w.txt\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n+B2\n c\n';
  const dry = await h.call('apply_patch', { patch, dry_run: true });
  assert.equal(dry.ok, true, JSON.stringify(dry.error));
  assert.match((dry.data as { diff: string }).diff, /-b\n\+B\n\+B2/);
  assert.equal(readFileSync(`${dir}/w.txt`, 'utf8'), 'a\r\nb\r\nc\r\n');
  assert.deepEqual(dry.artifacts.files_changed, []);
  const env = await h.call('apply_patch', { patch });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  assert.equal(readFileSync(`${dir}/w.txt`, 'utf8'), 'a\r\nB\r\nB2\r\nc\r\n');
  done();
});

test('apply_patch refuses adding over an existing file, a partial delete, and junk', async () => {
  const { h, dir, done } = allowAll();
  writeFileSync(`${dir}/x.txt`, 'x\ny\n');
  let env = await h.call('apply_patch', { patch: '--- /dev/null\n+++ b/x.txt\n@@ -0,0 +1 @@\n+new\n' });
  assert.equal(env.error?.code, 'AlreadyExists');
  env = await h.call('apply_patch', { patch: '--- a/x.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n' });
  assert.equal(env.error?.code, 'PatchFailed');
  env = await h.call('apply_patch', { patch: 'please change x to z' });
  assert.equal(env.error?.code, 'PatchFailed');
  env = await h.call('apply_patch', { patch: '--- a/x.txt\n+++ b/x.txt\n@@ -1,3 +1,3 @@\n-x\n+z\n' });
  assert.equal(env.error?.code, 'PatchFailed');
  assert.equal(readFileSync(`${dir}/x.txt`, 'utf8'), 'x\ny\n');
  done();
});

test('every path of a patch passes the gate: one protected, escaping or symlinked path refuses the whole patch', async () => {
  const { h, dir, done } = allowAll();
  const out = tempDir('tg-outside-');
  writeFileSync(`${out.dir}/canary.txt`, 'CANARY\n');
  symlinkSync(out.dir, `${dir}/outdir`);
  mkdirSync(`${dir}/.git/hooks`, { recursive: true });
  writeFileSync(`${dir}/.git/hooks/pre-commit`, 'exit 0\n');
  writeFileSync(`${dir}/ok.txt`, 'ok\n');
  writeFileSync(`${dir}/other.txt`, 'other\n');
  const okPart = '--- a/ok.txt\n+++ b/ok.txt\n@@ -1 +1 @@\n-ok\n+changed\n';
  const bad = [
    '--- /dev/null\n+++ b/.git/hooks/post-checkout\n@@ -0,0 +1 @@\n+evil\n',
    '--- a/.git/hooks/pre-commit\n+++ b/.git/hooks/pre-commit\n@@ -1 +1 @@\n-exit 0\n+evil\n',
    '--- a/outdir/canary.txt\n+++ b/outdir/canary.txt\n@@ -1 +1 @@\n-CANARY\n+PWNED\n',
    '--- /dev/null\n+++ b/outdir/new.txt\n@@ -0,0 +1 @@\n+evil\n',
    '--- /dev/null\n+++ b/../escape.txt\n@@ -0,0 +1 @@\n+evil\n',
    '--- /dev/null\n+++ b/.env\n@@ -0,0 +1 @@\n+TOKEN=1\n',
    'diff --git a/other.txt b/.toolgate/x\nrename from other.txt\nrename to .toolgate/x\n',
    `--- /dev/null\n+++ ${out.dir}/abs.txt\n@@ -0,0 +1 @@\n+evil\n`,
  ];
  for (const b of bad) {
    const env = await h.call('apply_patch', { patch: okPart + b });
    assert.equal(env.ok, false, b);
    if (process.env.SHOW) console.error(env.error!.code, env.error!.message);
    assert.ok(['PathDenied', 'PathTraversalBlocked'].includes(env.error!.code), `${env.error!.code}: ${b}`);
  }
  assert.equal(readFileSync(`${dir}/ok.txt`, 'utf8'), 'ok\n');
  assert.equal(readFileSync(`${dir}/other.txt`, 'utf8'), 'other\n');
  assert.equal(readFileSync(`${out.dir}/canary.txt`, 'utf8'), 'CANARY\n');
  assert.deepEqual(readdirSync(out.dir), ['canary.txt']);
  assert.deepEqual(readdirSync(`${dir}/.git/hooks`), ['pre-commit']);
  assert.equal(existsSync(`${dir}/.env`), false);
  done();
  out.cleanup();
});

test('the gate judges each path of a patch: an allow rule for src/ does not cover docs/', async () => {
  const { dir, cleanup } = tempDir();
  mkdirSync(`${dir}/src`);
  mkdirSync(`${dir}/docs`);
  writeFileSync(`${dir}/src/a.txt`, 'a\n');
  writeFileSync(`${dir}/docs/b.txt`, 'b\n');
  const h = new Harness([dir], { policy: policyFromYaml('rules:\n  - tool: apply_patch\n    path: "src/**"\n    decision: allow\n') });
  const srcOnly = '--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1 +1 @@\n-a\n+A\n';
  let env = await h.call('apply_patch', { patch: srcOnly });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  env = await h.call('apply_patch', { patch: '--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1 +1 @@\n-A\n+AA\n--- a/docs/b.txt\n+++ b/docs/b.txt\n@@ -1 +1 @@\n-b\n+B\n' });
  assert.equal(env.error?.code, 'ApprovalRequired');
  assert.equal(readFileSync(`${dir}/src/a.txt`, 'utf8'), 'A\n');
  assert.equal(readFileSync(`${dir}/docs/b.txt`, 'utf8'), 'b\n');
  h.close();
  cleanup();
});

test('a 60 KB hunk that matches nowhere in an 80 KB file of repeated lines: PatchFailed, the search stopped', async () => {
  const { h, dir, done } = allowAll();
  writeFileSync(`${dir}/a.txt`, 'a\n'.repeat(40_000));
  const H = 20_000;
  const patch = `--- a/a.txt\n+++ b/a.txt\n@@ -1,${H + 1} +1,${H + 1} @@\n` + ' a\n'.repeat(H) + '-b\n+c\n';
  const env = await h.call('apply_patch', { patch });
  assert.equal(env.error?.code, 'PatchFailed', JSON.stringify(env.error).slice(0, 300));
  assert.equal((env.error!.details as { search_stopped?: boolean }).search_stopped, true);
  assert.equal(readFileSync(`${dir}/a.txt`, 'utf8'), 'a\n'.repeat(40_000));
  done();
});
