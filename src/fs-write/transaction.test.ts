import assert from 'node:assert/strict';
import { chmodSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { tempDir } from '../testing/helpers.js';
import { commitAll, type FileOp } from './transaction.js';

function ops(dir: string): FileOp[] {
  const st = (n: string) => statSync(`${dir}/${n}`);
  return [
    { kind: 'write', abs: `${dir}/a.txt`, display: 'a.txt', data: Buffer.from('A new\n'), existing: st('a.txt'), original: readFileSync(`${dir}/a.txt`) },
    { kind: 'write', abs: `${dir}/b.txt`, display: 'b.txt', data: Buffer.from('B new\n'), existing: null, original: null },
    { kind: 'write', abs: `${dir}/c.txt`, display: 'c.txt', data: Buffer.from('C new\n'), existing: st('c.txt'), original: readFileSync(`${dir}/c.txt`) },
    { kind: 'remove', abs: `${dir}/d.txt`, display: 'd.txt', existing: st('d.txt') },
  ];
}

function setup() {
  const t = tempDir();
  writeFileSync(`${t.dir}/a.txt`, 'A old\n');
  chmodSync(`${t.dir}/a.txt`, 0o600);
  writeFileSync(`${t.dir}/c.txt`, 'C old\n');
  writeFileSync(`${t.dir}/d.txt`, 'D old\n');
  return t;
}

for (const failAt of [1, 2, 3]) {
  test(`a rename failing at commit step ${failAt + 1} rolls back the steps already done`, async () => {
    const { dir, cleanup } = setup();
    await assert.rejects(commitAll(ops(dir), {
      allowHardlinks: false,
      beforeStep: (i) => { if (i === failAt) throw Object.assign(new Error('disk on fire'), { code: 'EIO' }); },
    }), (e: Error) => /disk on fire/.test(e.message));
    assert.equal(readFileSync(`${dir}/a.txt`, 'utf8'), 'A old\n');
    assert.equal(statSync(`${dir}/a.txt`).mode & 0o777, 0o600);
    assert.equal(existsSync(`${dir}/b.txt`), false);
    assert.equal(readFileSync(`${dir}/c.txt`, 'utf8'), 'C old\n');
    assert.equal(readFileSync(`${dir}/d.txt`, 'utf8'), 'D old\n');
    assert.deepEqual(readdirSync(dir).sort(), ['a.txt', 'c.txt', 'd.txt'], 'temporary or moved-aside files left behind');
    cleanup();
  });
}

test('commitAll applies every step when nothing fails', async () => {
  const { dir, cleanup } = setup();
  await commitAll(ops(dir), { allowHardlinks: false });
  assert.equal(readFileSync(`${dir}/a.txt`, 'utf8'), 'A new\n');
  assert.equal(statSync(`${dir}/a.txt`).mode & 0o777, 0o600);
  assert.equal(readFileSync(`${dir}/b.txt`, 'utf8'), 'B new\n');
  assert.equal(existsSync(`${dir}/d.txt`), false);
  assert.deepEqual(readdirSync(dir).sort(), ['a.txt', 'b.txt', 'c.txt']);
  cleanup();
});

test('a target changed after staging stops the commit before any rename', async () => {
  const { dir, cleanup } = setup();
  const o = ops(dir);
  writeFileSync(`${dir}/c.txt`, 'C changed by someone else, longer\n');
  await assert.rejects(commitAll(o, { allowHardlinks: false }), (e: { code: string }) => e.code === 'StaleRead');
  assert.equal(readFileSync(`${dir}/a.txt`, 'utf8'), 'A old\n');
  assert.equal(existsSync(`${dir}/b.txt`), false);
  assert.deepEqual(readdirSync(dir).sort(), ['a.txt', 'c.txt', 'd.txt']);
  cleanup();
});
