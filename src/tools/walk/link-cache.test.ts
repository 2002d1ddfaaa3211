import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { tempDir } from '../../testing/helpers.js';
import { LinkCache } from './link-cache.js';

const none = () => false;
const far = () => Date.now() + 60_000;
const list = (c: LinkCache, dir: string, prune: (n: string) => boolean = none) => c.list(dir, { prune, deadline: far() }).links.sort();
/** File-system timestamps move in clock ticks (a few ms): wait past one so a change shows in ctime. */
const tick = () => new Promise((r) => setTimeout(r, 30));

function tree() {
  const t = tempDir('tg-linkcache-');
  const ws = path.join(t.dir, 'ws');
  for (const d of ['a/b/c', 'a/d', '.hid', 'e']) mkdirSync(path.join(ws, d), { recursive: true });
  writeFileSync(path.join(ws, 'a/b/f.h'), '');
  symlinkSync('f.h', path.join(ws, 'a/b/l1.h'));
  symlinkSync('/etc/passwd', path.join(ws, 'a/out'));
  symlinkSync('../a', path.join(ws, 'e/dirlink'));
  symlinkSync('x', path.join(ws, '.hid/l2'));
  symlinkSync('nowhere', path.join(ws, 'a/b/c/dangling'));
  return { ...t, ws };
}

test('lists every symbolic link, never following one, as find -type l does; prune skips folders by name', (t) => {
  const f = tree();
  t.after(f.cleanup);
  const c = new LinkCache();
  const got = list(c, f.ws);
  assert.deepEqual(got, ['.hid/l2', 'a/b/c/dangling', 'a/b/l1.h', 'a/out', 'e/dirlink']);
  const find = spawnSync('find', ['.', '-mindepth', '1', '-type', 'l'], { cwd: f.ws, encoding: 'utf8' });
  if (find.status === 0) assert.deepEqual(got, find.stdout.split('\n').filter(Boolean).map((p) => p.slice(2)).sort(), 'same as find');
  assert.deepEqual(list(c, f.ws, (n) => n.startsWith('.')), ['a/b/c/dangling', 'a/b/l1.h', 'a/out', 'e/dirlink']);
  assert.deepEqual(list(c, path.join(f.ws, 'a')), ['b/c/dangling', 'b/l1.h', 'out']);
  assert.deepEqual(list(c, path.join(f.ws, 'e/dirlink')), [], 'a start that is a link lists nothing');
  assert.deepEqual(list(c, path.join(f.ws, 'nope')), []);
});

test('a folder changed in any way is read again; an unchanged, settled one is not', async (t) => {
  const f = tree();
  t.after(f.cleanup);
  const c = new LinkCache(0); // trust a folder as soon as its ctime is in the past
  await tick();
  list(c, f.ws);
  assert.equal(c.lastReads, 7, 'first call reads every folder');
  await tick();
  list(c, f.ws);
  assert.equal(c.lastReads, 0, 'nothing changed: nothing read');

  symlinkSync('f.h', path.join(f.ws, 'a/b/new.h'));
  assert.ok(list(c, f.ws).includes('a/b/new.h'), 'a new link is seen at once');
  assert.equal(c.lastReads, 1);
  await tick();
  unlinkSync(path.join(f.ws, 'a/b/l1.h'));
  assert.ok(!list(c, f.ws).includes('a/b/l1.h'), 'a removed link is gone at once');
  await tick();
  mkdirSync(path.join(f.ws, 'a/d/sub'));
  symlinkSync('x', path.join(f.ws, 'a/d/sub/deep'));
  assert.ok(list(c, f.ws).includes('a/d/sub/deep'), 'a link in a new folder is seen');
  await tick();
  // A folder swapped for a link to elsewhere: not entered, listed as the link it now is.
  renameSync(path.join(f.ws, 'a/b'), path.join(f.dir, 'b-aside'));
  symlinkSync(path.join(f.dir, 'b-aside'), path.join(f.ws, 'a/b'));
  const swapped = list(c, f.ws);
  assert.ok(swapped.includes('a/b'), 'the swapped-in link is listed');
  assert.ok(!swapped.some((p) => p.startsWith('a/b/')), 'nothing is listed through it');
  await tick();
  // Back again: its links are there once more (the folder is read again: the parent changed).
  unlinkSync(path.join(f.ws, 'a/b'));
  renameSync(path.join(f.dir, 'b-aside'), path.join(f.ws, 'a/b'));
  assert.ok(list(c, f.ws).includes('a/b/new.h'));
  await tick();
  // A folder replaced by another folder of the same name (new inode): read again.
  rmSync(path.join(f.ws, 'a/d'), { recursive: true });
  mkdirSync(path.join(f.ws, 'a/d'));
  symlinkSync('y', path.join(f.ws, 'a/d/other'));
  assert.ok(list(c, f.ws).includes('a/d/other'));
  assert.ok(!list(c, f.ws).includes('a/d/sub/deep'));
});

test('a folder changed moments ago is not trusted from its record: read again on every call', (t) => {
  const f = tree();
  t.after(f.cleanup);
  const c = new LinkCache(); // default: 2 s
  list(c, f.ws);
  list(c, f.ws);
  assert.equal(c.lastReads, 7, 'every folder was made just now: all read again');
});

test('time limit and cancellation stop the walk and say so', (t) => {
  const f = tree();
  t.after(f.cleanup);
  for (let i = 0; i < 300; i++) mkdirSync(path.join(f.ws, 'many', String(i)), { recursive: true });
  const c = new LinkCache();
  assert.equal(c.list(f.ws, { prune: none, deadline: Date.now() - 1 }).timedOut, true);
  const ctrl = new AbortController();
  ctrl.abort();
  assert.equal(c.list(f.ws, { prune: none, deadline: far(), signal: ctrl.signal }).aborted, true);
});

test('ignoreFilesIn: the ignore files a folder holds, in precedence order, only for the list() call that saw it', (t) => {
  const f = tree();
  t.after(f.cleanup);
  writeFileSync(path.join(f.ws, 'a/.rgignore'), 'x\n');
  writeFileSync(path.join(f.ws, 'a/.gitignore'), 'x\n');
  mkdirSync(path.join(f.ws, 'a/b/.ignore'));
  const c = new LinkCache();
  const first = c.list(f.ws, { prune: none, deadline: far() });
  assert.deepEqual(c.ignoreFilesIn(path.join(f.ws, 'a'), first.generation), ['.gitignore', '.rgignore']);
  assert.deepEqual(c.ignoreFilesIn(path.join(f.ws, 'a/b'), first.generation), ['.ignore'], 'any type: the reader decides');
  assert.deepEqual(c.ignoreFilesIn(path.join(f.ws, 'e'), first.generation), []);
  assert.equal(c.ignoreFilesIn(path.join(f.ws, 'nope'), first.generation), undefined, 'never seen');
  // A later list() from a sub-folder: its folders are current, the rest and the old call's number are not.
  const second = c.list(path.join(f.ws, 'e'), { prune: none, deadline: far() });
  assert.deepEqual(c.ignoreFilesIn(path.join(f.ws, 'e'), second.generation), []);
  assert.equal(c.ignoreFilesIn(path.join(f.ws, 'a'), second.generation), undefined, 'not confirmed by this call');
  assert.equal(c.ignoreFilesIn(path.join(f.ws, 'e'), first.generation), undefined, 'an older call');
  // Pruned folders are not confirmed either.
  const third = c.list(f.ws, { prune: (n) => n === 'a', deadline: far() });
  assert.equal(c.ignoreFilesIn(path.join(f.ws, 'a'), third.generation), undefined);
});

test('recordBytes: a record is charged for the path it is kept under and each name, not only for its names', async () => {
  const { recordBytes } = await import('./link-cache.js');
  const empty = { links: [], dirs: [], files: [], ignores: [] };
  const deep = recordBytes(`/${'d'.repeat(3500)}`, empty);
  assert.ok(deep > 7000, `a 3.5 KB path costs more than 7 KB: ${deep}`);
  assert.ok(recordBytes('/a', { ...empty, files: ['x.c', 'y.c'] }) > recordBytes('/a', empty) + 80);
});
