import assert from 'node:assert/strict';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { allowAll, markRead, sha } from '../../fs-write/test-support.js';
import { Harness, tempDir } from '../../testing/helpers.js';

test('edit_file replaces a unique match, returns a diff, keeps the mode, and a second edit needs no new read', async () => {
  const { h, dir, done } = allowAll();
  const f = `${dir}/a.txt`;
  writeFileSync(f, 'one\ntwo\nthree\n');
  chmodSync(f, 0o640);
  markRead(h, f);
  const env = await h.call('edit_file', { path: 'a.txt', old_string: 'two', new_string: 'TWO' });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  assert.equal(readFileSync(f, 'utf8'), 'one\nTWO\nthree\n');
  assert.equal(statSync(f).mode & 0o777, 0o640);
  const d = env.data as Record<string, unknown>;
  assert.match(d.diff as string, /^--- a\/a\.txt\n\+\+\+ b\/a\.txt\n@@ -1,3 \+1,3 @@\n one\n-two\n\+TWO\n three\n/);
  assert.deepEqual(d.files_changed, ['a.txt']);
  assert.deepEqual(env.artifacts.files_changed, ['a.txt']);
  assert.equal(d.sha256, sha('one\nTWO\nthree\n'));
  assert.deepEqual(d.lines, [2]);
  const again = await h.call('edit_file', { path: 'a.txt', old_string: 'three', new_string: '3' });
  assert.equal(again.ok, true, JSON.stringify(again.error));
  assert.equal(readFileSync(f, 'utf8'), 'one\nTWO\n3\n');
  done();
});

test('edit_file without a read is ReadRequired; after an outside change it is StaleRead naming what changed', async () => {
  const { h, dir, done } = allowAll();
  const f = `${dir}/a.txt`;
  writeFileSync(f, 'alpha\n');
  let env = await h.call('edit_file', { path: 'a.txt', old_string: 'alpha', new_string: 'beta' });
  assert.equal(env.error?.code, 'ReadRequired');
  markRead(h, f);
  writeFileSync(f, 'alpha and more\n');
  env = await h.call('edit_file', { path: 'a.txt', old_string: 'alpha', new_string: 'beta' });
  assert.equal(env.error?.code, 'StaleRead');
  assert.ok((env.error?.details?.changed as string[]).includes('size'));
  assert.ok((env.error?.details?.changed as string[]).includes('sha256'));
  assert.equal(readFileSync(f, 'utf8'), 'alpha and more\n');
  // expected_sha256 stands in for a read.
  env = await h.call('edit_file', { path: 'a.txt', old_string: 'more', new_string: 'less', expected_sha256: sha('alpha and more\n') });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  env = await h.call('edit_file', { path: 'a.txt', old_string: 'less', new_string: 'x', expected_sha256: sha('something else') });
  assert.equal(env.error?.code, 'StaleRead');
  // Staleness is named before the match: old_string no longer there is still StaleRead, not NoMatch.
  env = await h.call('edit_file', { path: 'a.txt', old_string: 'gone', new_string: 'x', expected_sha256: sha('alpha and more\n') });
  assert.equal(env.error?.code, 'StaleRead');
  markRead(h, f);
  writeFileSync(f, 'rewritten\n');
  env = await h.call('edit_file', { path: 'a.txt', old_string: 'alpha', new_string: 'x' });
  assert.equal(env.error?.code, 'StaleRead');
  done();
});

test('AmbiguousMatch lists the line of every match; replace_all replaces them all', async () => {
  const { h, dir, done } = allowAll();
  const f = `${dir}/a.txt`;
  writeFileSync(f, 'x = 1\ny = 2\nx = 1\n\nx = 1\n');
  markRead(h, f);
  let env = await h.call('edit_file', { path: 'a.txt', old_string: 'x = 1', new_string: 'x = 9' });
  assert.equal(env.error?.code, 'AmbiguousMatch');
  assert.deepEqual(env.error?.details?.lines, [1, 3, 5]);
  assert.match(env.error!.message, /3 places in a.txt \(lines 1, 3, 5\)/);
  env = await h.call('edit_file', { path: 'a.txt', old_string: 'x = 1', new_string: 'x = 9', replace_all: true });
  assert.equal(env.ok, true);
  assert.equal((env.data as { replacements: number }).replacements, 3);
  assert.equal(readFileSync(f, 'utf8'), 'x = 9\ny = 2\nx = 9\n\nx = 9\n');
  done();
});

test('NoMatch points at the near-match: indentation, line, what differs', async () => {
  const { h, dir, done } = allowAll();
  const f = `${dir}/a.py`;
  writeFileSync(f, 'def f():\n\tif x:\n\t\treturn 1\n\treturn 2\n');
  markRead(h, f);
  let env = await h.call('edit_file', { path: 'a.py', old_string: '    if x:\n        return 1', new_string: 'pass' });
  assert.equal(env.error?.code, 'NoMatch');
  const closest = env.error?.details?.closest as { kind: string; line: number };
  assert.equal(closest.kind, 'whitespace');
  assert.equal(closest.line, 2);
  assert.match(env.error!.message, /lines 2-3 except for whitespace/);
  assert.match(env.error!.message, /tab/);
  env = await h.call('edit_file', { path: 'a.py', old_string: 'def f():\n\tif y:', new_string: 'z' });
  assert.equal(env.error?.code, 'NoMatch');
  assert.equal((env.error?.details?.closest as { kind: string }).kind, 'partial');
  assert.match(env.error!.message, /line 2/);
  env = await h.call('edit_file', { path: 'a.py', old_string: 'nothing like it at all', new_string: 'z' });
  assert.equal(env.error?.code, 'NoMatch');
  assert.equal(readFileSync(f, 'utf8'), 'def f():\n\tif x:\n\t\treturn 1\n\treturn 2\n');
  done();
});

test('a CRLF file stays CRLF when old_string and new_string use \\n', async () => {
  const { h, dir, done } = allowAll();
  const f = `${dir}/w.txt`;
  writeFileSync(f, 'a\r\nb\r\nc\r\n');
  markRead(h, f);
  const env = await h.call('edit_file', { path: 'w.txt', old_string: 'a\nb', new_string: 'A\nB\nB2' });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  assert.equal(readFileSync(f, 'utf8'), 'A\r\nB\r\nB2\r\nc\r\n');
  assert.equal((env.data as { line_endings: string }).line_endings, 'crlf');
  assert.doesNotMatch((env.data as { diff: string }).diff, /\r/);
  done();
});

test('dry_run returns the diff and touches nothing; a binary file is BinaryFile', async () => {
  const { h, dir, done } = allowAll();
  const f = `${dir}/a.txt`;
  writeFileSync(f, 'hello\n');
  const before = statSync(f).mtimeMs;
  markRead(h, f);
  const env = await h.call('edit_file', { path: 'a.txt', old_string: 'hello', new_string: 'bye', dry_run: true });
  assert.equal(env.ok, true);
  assert.match((env.data as { diff: string }).diff, /-hello\n\+bye/);
  assert.equal((env.data as { dry_run: boolean }).dry_run, true);
  assert.deepEqual(env.artifacts.files_changed, []);
  assert.equal(readFileSync(f, 'utf8'), 'hello\n');
  assert.equal(statSync(f).mtimeMs, before);
  writeFileSync(`${dir}/b.bin`, Buffer.from([0x68, 0, 0x69]));
  markRead(h, `${dir}/b.bin`);
  const bin = await h.call('edit_file', { path: 'b.bin', old_string: 'h', new_string: 'H' });
  assert.equal(bin.error?.code, 'BinaryFile');
  done();
});

test('a big diff is cut to the output limits and spilled whole', async () => {
  const { h, dir, done } = allowAll('limits: { output_lines: 20, output_bytes: 51200 }\n');
  const f = `${dir}/big.txt`;
  const text = Array.from({ length: 200 }, (_, i) => `line ${i}`).join('\n') + '\n';
  writeFileSync(f, text);
  markRead(h, f);
  const env = await h.call('edit_file', { path: 'big.txt', old_string: 'line', new_string: 'LINE', replace_all: true });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  const d = env.data as { diff: string; diff_truncated: boolean };
  assert.equal(d.diff_truncated, true);
  assert.ok(d.diff.split('\n').length < 30);
  assert.ok(env.artifacts.storage_ref);
  const full = readFileSync(`${dir}/${env.artifacts.storage_ref}`, 'utf8');
  assert.equal(full.split('\n').filter((l) => l.startsWith('+LINE')).length, 200);
  done();
});

test('read_file → edit_file: what read_file records is what edit_file checks', async () => {
  const { h, dir, done } = allowAll();
  writeFileSync(`${dir}/r.txt`, 'keep\nchange me\n');
  assert.equal((await h.call('read_file', { path: 'r.txt' })).ok, true);
  const env = await h.call('edit_file', { path: 'r.txt', old_string: 'change me', new_string: 'changed' });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  assert.equal(readFileSync(`${dir}/r.txt`, 'utf8'), 'keep\nchanged\n');
  // Changed behind the session's back after the read: stale.
  writeFileSync(`${dir}/r.txt`, 'keep\nchanged\nby someone\n');
  assert.equal((await h.call('edit_file', { path: 'r.txt', old_string: 'keep', new_string: 'k' })).error?.code, 'StaleRead');
  done();
});

test('concurrent edits of one file in one session are serialised: none is lost', async () => {
  const { h, dir, done } = allowAll();
  const f = `${dir}/c.txt`;
  writeFileSync(f, Array.from({ length: 20 }, (_, i) => `t${i}`).join('\n') + '\n');
  markRead(h, f);
  const envs = await Promise.all(Array.from({ length: 20 }, (_, i) => h.call('edit_file', { path: 'c.txt', old_string: `t${i}\n`, new_string: `T${i}\n` })));
  assert.deepEqual(envs.filter((e) => !e.ok).map((e) => e.error), []);
  assert.equal(readFileSync(f, 'utf8'), Array.from({ length: 20 }, (_, i) => `T${i}`).join('\n') + '\n');
  done();
});

test('a file changed while the user was being asked is not overwritten (StaleRead after the approval)', async () => {
  const { dir, cleanup } = tempDir();
  const h = new Harness([dir]);
  const f = `${dir}/a.txt`;
  writeFileSync(f, 'original\n');
  markRead(h, f);
  h.session.elicit = async () => {
    writeFileSync(f, 'original\nand a line the user added\n');
    return { action: 'accept', content: { decision: 'allow_once' } };
  };
  const env = await h.call('edit_file', { path: 'a.txt', old_string: 'original', new_string: 'replaced' });
  assert.equal(env.error?.code, 'StaleRead', JSON.stringify(env.error));
  assert.equal(readFileSync(f, 'utf8'), 'original\nand a line the user added\n');
  h.close();
  cleanup();
});

test('a huge no-match old_string against a large file of repeated lines: NoMatch, the line search skipped for size', async () => {
  const { h, dir, done } = allowAll();
  writeFileSync(`${dir}/big.txt`, 'a\n'.repeat(80_000)); // 160 KB
  markRead(h, `${dir}/big.txt`);
  const env = await h.call('edit_file', { path: 'big.txt', old_string: 'a\n'.repeat(40_000) + 'b', new_string: 'x' }); // 80 KB
  assert.equal(env.error?.code, 'NoMatch', JSON.stringify(env.error).slice(0, 300));
  const closest = (env.error!.details as { closest: { skipped?: string; hint: string } }).closest;
  assert.equal(closest.skipped, 'size');
  assert.match(closest.hint, /skipped for size/);
  assert.equal(readFileSync(`${dir}/big.txt`, 'utf8'), 'a\n'.repeat(80_000));
  done();
});

test('old_string and new_string over 1 MB are refused by the schema', async () => {
  const { h, dir, done } = allowAll();
  writeFileSync(`${dir}/s.txt`, 'small\n');
  markRead(h, `${dir}/s.txt`);
  const big = 'x'.repeat(1024 * 1024 + 1);
  assert.equal((await h.call('edit_file', { path: 's.txt', old_string: big, new_string: 'y' })).error?.code, 'InvalidArguments');
  assert.equal((await h.call('edit_file', { path: 's.txt', old_string: 'small', new_string: big })).error?.code, 'InvalidArguments');
  assert.equal((await h.call('multi_edit', { path: 's.txt', edits: [{ old_string: big, new_string: 'y' }] })).error?.code, 'InvalidArguments');
  done();
});
