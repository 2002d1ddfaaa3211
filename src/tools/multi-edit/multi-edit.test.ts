import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { allowAll, markRead } from '../../fs-write/test-support.js';

const SRC = 'import a from "./a";\nimport b from "./b";\n\na.run();\nb.run();\n';

test('multi_edit applies edits in order, in one write', async () => {
  const { h, dir, done } = allowAll();
  const f = `${dir}/m.ts`;
  writeFileSync(f, SRC);
  markRead(h, f);
  const env = await h.call('multi_edit', { path: 'm.ts', edits: [
    { old_string: '"./a"', new_string: '"./a.js"' },
    { old_string: '"./b"', new_string: '"./b.js"' },
    { old_string: '.run()', new_string: '.start()', replace_all: true },
  ] });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  assert.equal(readFileSync(f, 'utf8'), 'import a from "./a.js";\nimport b from "./b.js";\n\na.start();\nb.start();\n');
  assert.deepEqual((env.data as { edits: { replacements: number }[] }).edits.map((e) => e.replacements), [1, 1, 2]);
  done();
});

test('multi_edit is all or nothing: a failing third edit leaves the file untouched', async () => {
  const { h, dir, done } = allowAll();
  const f = `${dir}/m.ts`;
  writeFileSync(f, SRC);
  markRead(h, f);
  const env = await h.call('multi_edit', { path: 'm.ts', edits: [
    { old_string: '"./a"', new_string: '"./a.js"' },
    { old_string: 'a.run();', new_string: 'a.go();' },
    { old_string: 'c.run();', new_string: 'c.go();' },
  ] });
  assert.equal(env.error?.code, 'NoMatch');
  assert.equal(env.error?.details?.edit_index, 2);
  assert.match(env.error!.message, /^edit 3:/);
  assert.equal(readFileSync(f, 'utf8'), SRC);
  done();
});

test('multi_edit refuses an edit that overlaps text an earlier edit wrote', async () => {
  const { h, dir, done } = allowAll();
  const f = `${dir}/m.ts`;
  writeFileSync(f, SRC);
  markRead(h, f);
  const env = await h.call('multi_edit', { path: 'm.ts', edits: [
    { old_string: 'a.run();', new_string: 'a.run(); // first' },
    { old_string: '; // first', new_string: '; // second' },
  ] });
  assert.equal(env.error?.code, 'InvalidArguments');
  assert.match(env.error!.message, /overlaps/);
  assert.equal(readFileSync(f, 'utf8'), SRC);
  // Edits next to each other (not overlapping) are fine.
  const ok = await h.call('multi_edit', { path: 'm.ts', edits: [
    { old_string: 'a.run();', new_string: 'a.go();' },
    { old_string: '\nb.run();', new_string: '\nb.go();' },
  ] });
  assert.equal(ok.ok, true, JSON.stringify(ok.error));
  assert.equal(readFileSync(f, 'utf8'), 'import a from "./a";\nimport b from "./b";\n\na.go();\nb.go();\n');
  done();
});

test('multi_edit ambiguity names the edit', async () => {
  const { h, dir, done } = allowAll();
  const f = `${dir}/m.ts`;
  writeFileSync(f, SRC);
  markRead(h, f);
  const env = await h.call('multi_edit', { path: 'm.ts', edits: [{ old_string: 'import', new_string: 'export' }] });
  assert.equal(env.error?.code, 'AmbiguousMatch');
  assert.deepEqual(env.error?.details?.lines, [1, 2]);
  done();
});

test('many replace_all replacements then an overlapping edit: refused quickly, names the edit', async () => {
  const { h, dir, done } = allowAll();
  writeFileSync(`${dir}/m.txt`, 'ax\n'.repeat(100_000));
  markRead(h, `${dir}/m.txt`);
  const env = await h.call('multi_edit', { path: 'm.txt', edits: [
    { old_string: 'a', new_string: 'b', replace_all: true },
    { old_string: 'x', new_string: 'y', replace_all: true },
    { old_string: 'by', new_string: 'c', replace_all: true },
  ] });
  assert.equal(env.error?.code, 'InvalidArguments', JSON.stringify(env.error));
  assert.equal((env.error!.details as { edit_index: number }).edit_index, 2);
  const ok = await h.call('multi_edit', { path: 'm.txt', edits: [
    { old_string: 'a', new_string: 'b', replace_all: true },
    { old_string: 'x', new_string: 'y', replace_all: true },
  ] });
  assert.equal(ok.ok, true, JSON.stringify(ok.error));
  assert.equal(readFileSync(`${dir}/m.txt`, 'utf8'), 'by\n'.repeat(100_000));
  done();
});
