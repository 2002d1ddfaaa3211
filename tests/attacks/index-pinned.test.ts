// glob's index engine looks at (and reads) every folder through the pinned start, from inside it
// (LinkCache.listAsync with ListHooks.pinned), and those looks stand as the proof's first ones
// (quietFolders.walked): only the folders on another's way are looked at again, after every look
// below them. These tests try to make a look land elsewhere, or a look that was not made through
// the pinned start pass as one.
import assert from 'node:assert/strict';
import { closeSync, constants, mkdirSync, openSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { tempDir } from '../../src/testing/helpers.js';
import { quietFolders } from '../../src/tools/glob/recheck.js';
import { LinkCache, type SeenFolder } from '../../src/tools/walk/link-cache.js';

const skipOffLinux = process.platform === 'linux' ? false : 'pinned folders through /proc: Linux only';
const DIR = constants.O_RDONLY | constants.O_DIRECTORY;
const future = () => Date.now() + 60_000;
/** File-system timestamps move in clock ticks (a few ms): wait past one so a later change shows in ctime. */
const tick = () => new Promise((r) => setTimeout(r, 30));

/** top/ws, the workspace, and other/ws, an old-looking copy of its shape (a future cutoff makes every ctime old). */
async function tree() {
  const t = tempDir('tg-ixpin-');
  const ws = path.join(t.dir, 'top/ws');
  const copy = path.join(t.dir, 'other/ws');
  for (const d of ['a/b/c', 'd']) {
    mkdirSync(path.join(ws, d), { recursive: true });
    mkdirSync(path.join(copy, d), { recursive: true });
  }
  writeFileSync(path.join(ws, 'a/b/c/in.h'), '');
  writeFileSync(path.join(ws, 'd/x.h'), '');
  writeFileSync(path.join(copy, 'a/b/c/OUT.h'), '');
  writeFileSync(path.join(copy, 'd/OUT.h'), '');
  await tick();
  return { ...t, ws, copy };
}

/** A pinned listing of `ws` (opened now), with every file it reports. */
async function pinnedList(ws: string, fd: number, hooks: { enter?: (rel: string) => boolean } = {}) {
  const c = new LinkCache();
  const seen = new Map<string, SeenFolder>();
  const files: string[] = [];
  const entered: string[] = [];
  const l = await c.listAsync(ws, {
    prune: () => false, deadline: future(), seen, pinned: `/proc/self/fd/${fd}`,
    enter: (rel) => { entered.push(rel); return hooks.enter?.(rel) ?? true; },
    files: (rel, names) => { for (const n of names) files.push(rel === '' ? n : `${rel}/${n}`); },
  });
  return { c, l, seen, files: files.sort(), entered };
}

test('a pinned listing looks through the pinned folder: the start renamed and its path taken by another tree lists the pinned one, and says so', { skip: skipOffLinux }, async (t) => {
  const f = await tree();
  t.after(f.cleanup);
  const fd = openSync(f.ws, DIR);
  t.after(() => closeSync(fd));
  // The start's path now names the copy (top is a link to other); the descriptor still holds the real tree.
  renameSync(path.join(f.dir, 'top'), path.join(f.dir, 'top.real'));
  symlinkSync(path.join(f.dir, 'other'), path.join(f.dir, 'top'));
  const r = await pinnedList(f.ws, fd);
  assert.deepEqual(r.files, ['a/b/c/in.h', 'd/x.h'], 'the pinned tree was listed, not what its path names now');
  const through = [...r.seen.values()].map((s) => s.through);
  assert.ok(through.length === 5 && through.every((p) => p === `/proc/self/fd/${fd}`), `every look is marked as made through the pinned folder (${through.join(', ')})`);
  // Control: an unpinned listing of the same path follows it to the copy.
  const plain = new LinkCache();
  const got: string[] = [];
  plain.list(f.ws, { prune: () => false, deadline: future(), files: (rel, names) => { for (const n of names) got.push(rel === '' ? n : `${rel}/${n}`); } });
  assert.deepEqual(got.sort(), ['a/b/c/OUT.h', 'd/OUT.h'], 'control: by path, the copy is what the start path names');
  assert.throws(() => plain.list(f.ws, { prune: () => false, deadline: future(), pinned: `/proc/self/fd/${fd}` }), /listAsync/, 'list() refuses a pinned listing');
});

test('walked: looks made through the pinned folder stand as first looks; one made by path, or through another folder, is not quiet', { skip: skipOffLinux }, async (t) => {
  const f = await tree();
  t.after(f.cleanup);
  const fd = openSync(f.ws, DIR);
  t.after(() => closeSync(fd));
  const r = await pinnedList(f.ws, fd);
  const q = (before: (abs: string) => SeenFolder | undefined) => quietFolders({ base: f.ws, pinnedFd: fd, cutoff: future(), before });
  assert.deepEqual([...q((abs) => r.seen.get(abs)).walked(r.entered)].sort(), ['', 'a', 'a/b', 'a/b/c', 'd'], 'every folder the pinned walk looked at is quiet');
  // The same records without the mark, or marked with another folder's descriptor path.
  const bare = (abs: string) => { const s = r.seen.get(abs); return s && { dev: s.dev, ino: s.ino, ctimeMs: s.ctimeMs, ignores: s.ignores }; };
  assert.deepEqual([...q(bare).walked(r.entered)], [], 'a look not made through the pinned folder is not a first look');
  const other = openSync(f.copy, DIR);
  try {
    const elsewhere = (abs: string) => { const s = bare(abs); return s && { ...s, through: `/proc/self/fd/${other}` }; };
    assert.deepEqual([...q(elsewhere).walked(r.entered)], [], 'a look through another folder is not one through the pinned one');
  } finally { closeSync(other); }
  // The start's look must be the pinned folder itself.
  const wrongStart = (abs: string) => { const s = r.seen.get(abs); return s && abs === f.ws ? { ...s, ino: s.ino + 1 } : s; };
  assert.deepEqual([...q(wrongStart).walked(r.entered)], [], 'nothing is quiet when the start looked at was not the pinned folder');
  // Not old: nothing passes (the cutoff is before every ctime).
  assert.deepEqual([...quietFolders({ base: f.ws, pinnedFd: fd, cutoff: 0, before: (abs) => r.seen.get(abs) }).walked(r.entered)], [], 'a folder changed after the cutoff is not quiet');
});

test('walked: a folder on the way swapped for a link to an old copy after the walk looked below it makes nothing below it quiet', { skip: skipOffLinux }, async (t) => {
  const f = await tree();
  t.after(f.cleanup);
  const fd = openSync(f.ws, DIR);
  t.after(() => closeSync(fd));
  // The walk looks at a/b, then a/b is swapped for a link to the copy's before a/b/c is looked at:
  // c's look lands in the copy (OUT.h). a/b's second look (a link now) must fail the proof.
  const r = await pinnedList(f.ws, fd, {
    enter: (rel) => {
      if (rel === 'a/b') { renameSync(path.join(f.ws, 'a/b'), path.join(f.ws, 'a/b.aside')); symlinkSync(path.join(f.copy, 'a/b'), path.join(f.ws, 'a/b')); }
      return true;
    },
  });
  assert.ok(r.files.includes('a/b/c/OUT.h'), 'control: the walk did look into the copy after the swap');
  const quiet = quietFolders({ base: f.ws, pinnedFd: fd, cutoff: future(), before: (abs) => r.seen.get(abs) }).walked(r.entered);
  assert.ok(!quiet.has('a/b/c') && !quiet.has('a/b'), `nothing from the swapped folder down is quiet (${[...quiet].join(', ')})`);
  // a and d were looked at before the swap, through real folders: what the walk took from them held then.
  assert.deepEqual([...quiet].sort(), ['', 'a', 'd'], 'the folders looked at before the swap still are');
});
