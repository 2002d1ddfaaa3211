// lstatNames: the entries of an opened folder looked up by name, on Linux by stepping into the
// folder through its descriptor. Same answers as lstat by path; the working directory comes back;
// a folder swapped for a link to outside after it was opened is not followed.
import assert from 'node:assert/strict';
import { closeSync, constants, lstatSync, mkdirSync, mkdtempSync, openSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { lstatNames } from './dir-stat.js';

const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'tg-dirstat-')));
after(() => rmSync(base, { recursive: true, force: true }));
const linux = process.platform === 'linux';
const view = (s: ReturnType<typeof lstatSync> | undefined) => (s ? `${s.isSymbolicLink() ? 'l' : s.isDirectory() ? 'd' : 'f'}:${s.size}:${s.ino}` : '-');

function folder(name: string, files: number, fill: string): string {
  const d = path.join(base, name);
  mkdirSync(d, { recursive: true });
  for (let i = 0; i < files; i++) writeFileSync(path.join(d, `f${i}`), fill.repeat(i + 1));
  return d;
}

test('same answers as lstat by path: files, folders, links (not followed), missing and odd names; few and many names', () => {
  const d = folder('same', 30, 'ab');
  mkdirSync(path.join(d, 'sub'));
  symlinkSync('f3', path.join(d, 'link'));
  symlinkSync('/nonexistent', path.join(d, 'dangling'));
  const names = ['f0', 'sub', 'link', 'dangling', 'missing', ...Array.from({ length: 30 }, (_, i) => `f${i}`)];
  const want = names.map((n) => view(lstatSync(path.join(d, n), { throwIfNoEntry: false })));
  const fd = openSync(d, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    const dirPath = linux ? `/proc/self/fd/${fd}` : d;
    assert.deepEqual(lstatNames(dirPath, names).map(view), want, 'many names (the chdir path on Linux)');
    assert.deepEqual(lstatNames(dirPath, names.slice(0, 3)).map(view), want.slice(0, 3), 'few names (by path)');
    // Names a folder entry never has: no lookup outside the folder, either way.
    const odd = ['..', '.', '', '../same/f0', 'sub/../f1', ...Array.from({ length: 10 }, (_, i) => `f${i}`)];
    const got = lstatNames(dirPath, odd).map(view);
    assert.deepEqual(got.slice(0, 5), ['-', '-', '-', '-', '-']);
    assert.deepEqual(lstatNames(dirPath, odd.slice(0, 5)).map(view), ['-', '-', '-', '-', '-']);
  } finally {
    closeSync(fd);
  }
});

test('the working directory comes back, even when its own path changed meanwhile', () => {
  const d = folder('cwd-list', 20, 'x');
  const home = folder('cwd-home', 0, '');
  const before = process.cwd();
  process.chdir(home);
  try {
    renameSync(home, `${home}-moved`);
    const fd = openSync(d, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      const stats = lstatNames(linux ? `/proc/self/fd/${fd}` : d, Array.from({ length: 20 }, (_, i) => `f${i}`));
      assert.equal(stats.filter(Boolean).length, 20);
    } finally {
      closeSync(fd);
    }
    assert.equal(process.cwd(), `${home}-moved`, 'back in the folder it was in (now renamed), not in the listed one');
  } finally {
    process.chdir(before);
  }
});

test('a folder swapped for a link to outside after it was opened: its own entries are stat-ed, not the outside ones', { skip: linux ? false : 'needs /proc/self/fd (Linux)' }, () => {
  const inside = folder('swap/ws/dir', 12, 'i');
  const outside = folder('swap/outside', 12, 'OUTSIDE-');
  const fd = openSync(inside, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    renameSync(inside, `${inside}-old`);
    symlinkSync(outside, inside);
    const names = Array.from({ length: 12 }, (_, i) => `f${i}`);
    const sizes = lstatNames(`/proc/self/fd/${fd}`, names).map((s) => s?.size);
    assert.deepEqual(sizes, names.map((_, i) => i + 1), 'sizes of the opened folder\'s files, not of the outside ones');
    assert.deepEqual(lstatNames(`/proc/self/fd/${fd}`, names.slice(0, 2)).map((s) => s?.size), [1, 2]);
  } finally {
    closeSync(fd);
  }
});

test('a path that cannot be entered: the names are looked up through it, and the working directory is untouched', () => {
  const d = folder('not-a-dir', 1, 'x');
  const before = process.cwd();
  const names = Array.from({ length: 10 }, (_, i) => `n${i}`);
  assert.deepEqual(lstatNames(path.join(d, 'f0'), names), names.map(() => undefined));
  assert.equal(process.cwd(), before);
});
