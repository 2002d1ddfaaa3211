// glob's ripgrep engine takes a file without its own on-disk check only when every folder on its
// way provably did not change while rg ran (quietFolders: device, inode and ctime, observed
// after rg started and again after it exited, older than the start minus a margin). These tests
// try to make a changed folder pass as quiet, and race a swapper against globs on a settled tree.
import assert from 'node:assert/strict';
import { closeSync, constants, mkdirSync, openSync, renameSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { Envelope } from '../../src/core/envelope.js';
import { Harness, startFolderSwapper, tempDir } from '../../src/testing/helpers.js';
import { FINE_MS, ctimeMargin, quietFolders } from '../../src/tools/glob/recheck.js';
import { locateRg } from '../../src/tools/grep/rg.js';
import { LinkCache, RACY_MS } from '../../src/tools/walk/link-cache.js';

const skipOffLinux = process.platform === 'linux' ? false : 'needs Linux (/proc/self/fd, statfs types): elsewhere no folder is quiet';
const tick = () => new Promise((r) => setTimeout(r, 30));
const DIR = constants.O_RDONLY | constants.O_DIRECTORY;

function tree() {
  const t = tempDir('tg-quiet-');
  const ws = path.join(t.dir, 'ws');
  const out = path.join(t.dir, 'outside');
  for (const d of ['a/b', 'c']) mkdirSync(path.join(ws, d), { recursive: true });
  mkdirSync(out);
  writeFileSync(path.join(ws, 'a/b/in.h'), '');
  writeFileSync(path.join(ws, 'c/x.h'), '');
  writeFileSync(path.join(out, 'id_rsa.h'), '');
  return { ...t, ws, out };
}

/** Observes the tree as the engine does (a LinkCache list after "rg started"), then returns quietFolders for it. */
function observe(ws: string, cutoff: number, pinned = ws) {
  const c = new LinkCache();
  const l = c.list(ws, { prune: () => false, deadline: Date.now() + 60_000 });
  const fd = openSync(pinned, DIR);
  return {
    quiet: () => quietFolders({ base: ws, pinnedFd: fd, cutoff, before: (abs) => c.observed(abs, l.generation) }),
    close: () => closeSync(fd),
  };
}

test('quietFolders: untouched folders are quiet; a folder whose entries changed, or any folder on its way, is not', { skip: skipOffLinux }, async (t) => {
  const f = tree();
  t.after(f.cleanup);
  // A cutoff in the future stands for "observed long after their last change" (ctime cannot be set back in a test).
  const future = Date.now() + 60_000;
  let o = observe(f.ws, future);
  let q = o.quiet();
  assert.deepEqual(['', 'a', 'a/b', 'c'].map(q), [true, true, true, true]);
  assert.equal(q('nope'), false, 'a folder never observed');
  o.close();

  for (const [label, change, notQuiet, stillQuiet] of [
    ['a file created in a/b', () => writeFileSync(path.join(f.ws, 'a/b/new.h'), ''), ['a/b'], ['', 'a', 'c']],
    ['a/b swapped for a link and back', () => {
      renameSync(path.join(f.ws, 'a/b'), path.join(f.ws, 'a/b.aside'));
      symlinkSync(f.out, path.join(f.ws, 'a/b'));
      unlinkSync(path.join(f.ws, 'a/b'));
      renameSync(path.join(f.ws, 'a/b.aside'), path.join(f.ws, 'a/b'));
    }, ['a', 'a/b'], ['', 'c']],
    ['a swapped for a copy of itself', () => {
      renameSync(path.join(f.ws, 'a'), path.join(f.dir, 'a-old'));
      mkdirSync(path.join(f.ws, 'a/b'), { recursive: true });
      // The base itself changed: nothing under it is quiet (c's way goes through the base).
    }, ['', 'a', 'a/b', 'c'], []],
  ] as const) {
    o = observe(f.ws, future);
    await tick();
    change();
    q = o.quiet();
    for (const d of notQuiet) assert.equal(q(d), false, `${label}: ${d || '(base)'} must not be quiet`);
    for (const d of stillQuiet) assert.equal(q(d), true, `${label}: ${d || '(base)'} is still quiet`);
    o.close();
  }
});

test('quietFolders: nothing is quiet when the folders changed less than the margin before the lister started, or the pinned folder is another', { skip: skipOffLinux }, (t) => {
  const f = tree();
  t.after(f.cleanup);
  // The real cutoff: the tree was made just now, so within RACY_MS of "rg started".
  let o = observe(f.ws, Date.now() - RACY_MS);
  assert.deepEqual(['', 'a', 'a/b', 'c'].map(o.quiet()), [false, false, false, false]);
  o.close();
  // The lister's working folder is not the base the paths name.
  o = observe(f.ws, Date.now() + 60_000, f.out);
  assert.deepEqual(['', 'a', 'a/b', 'c'].map(o.quiet()), [false, false, false, false]);
  o.close();
});

test('ctimeMargin: a ctime with a part below 10 ms shows a fine-grained file system (FINE_MS); whole seconds or round values get RACY_MS', () => {
  assert.equal(ctimeMargin(1_700_000_000_123.456), FINE_MS);
  assert.equal(ctimeMargin(1_700_000_000_001.5), FINE_MS);
  assert.equal(ctimeMargin(1_700_000_000_000), RACY_MS, 'whole seconds (ext4 with 128-byte inodes)');
  assert.equal(ctimeMargin(1_700_000_000_120), RACY_MS, 'a multiple of 10 ms: granularity unknown, the wide margin');
  assert.ok(FINE_MS >= 50 && FINE_MS < RACY_MS);
});

test('quietFolders with the lister\'s start: a folder is old once its ctime is its margin before the start, not a millisecond less', { skip: skipOffLinux }, (t) => {
  const f = tree();
  t.after(f.cleanup);
  const fd = openSync(f.ws, DIR);
  t.after(() => closeSync(fd));
  const ctimes = ['', 'a', 'a/b', 'c'].map((d) => statSync(path.join(f.ws, d)).ctimeMs);
  const margin = Math.max(...ctimes.map(ctimeMargin));
  const newest = Math.max(...ctimes);
  // Started just after the margin had passed for every folder: all quiet.
  let q = quietFolders({ base: f.ws, pinnedFd: fd, started: Math.ceil(newest + margin + 1) });
  assert.deepEqual(['', 'a', 'a/b', 'c'].map(q), [true, true, true, true]);
  // Started a little less than the margin after the newest change: that folder (and what lies below it) is not.
  q = quietFolders({ base: f.ws, pinnedFd: fd, started: Math.floor(newest + margin - 5) });
  const newestDir = ['', 'a', 'a/b', 'c'][ctimes.indexOf(newest)]!;
  assert.equal(q(newestDir), false, `${newestDir || '.'} changed ${margin - 5} ms before the start`);
  // A folder changed after the start is never quiet, whatever its file system.
  writeFileSync(path.join(f.ws, 'a/b/late.h'), '');
  q = quietFolders({ base: f.ws, pinnedFd: fd, started: Date.now() - 1 });
  assert.equal(q('a/b'), false, 'a/b changed just now');
});

for (const engine of ['ripgrep', 'index'] as const) {
test(`racing on a settled tree (${engine} engine): a folder swapped for a link to outside, over and over, never brings an outside name into glob; quiet folders are still taken`, { skip: skipOffLinux, timeout: 60_000 }, async (t) => {
  const rg = await locateRg({ ...process.env, TOOLGATE_RG: '' });
  if (!rg && engine === 'ripgrep') return t.skip('needs ripgrep (rg) on PATH');
  const f = tree();
  t.after(f.cleanup);
  for (let i = 0; i < 20; i++) writeFileSync(path.join(f.ws, 'c', `f${i}.h`), '');
  // Let every folder settle past the margin, so that quiet folders exist at all.
  await new Promise((r) => setTimeout(r, RACY_MS + 300));
  const saved = { walk: process.env.TOOLGATE_GLOB_WALK_MAX, rg: process.env.TOOLGATE_RG, engine: process.env.TOOLGATE_GLOB_ENGINE };
  process.env.TOOLGATE_GLOB_WALK_MAX = '0';
  process.env.TOOLGATE_RG = '';
  process.env.TOOLGATE_GLOB_ENGINE = engine;
  // State outside the workspace: the audit's first write would otherwise add .toolgate/ to the root (a change).
  const h = new Harness([f.ws], { stateDir: path.join(f.dir, 'state') });
  t.after(() => {
    h.close();
    if (saved.walk === undefined) delete process.env.TOOLGATE_GLOB_WALK_MAX; else process.env.TOOLGATE_GLOB_WALK_MAX = saved.walk;
    if (saved.rg === undefined) delete process.env.TOOLGATE_RG; else process.env.TOOLGATE_RG = saved.rg;
    if (saved.engine === undefined) delete process.env.TOOLGATE_GLOB_ENGINE; else process.env.TOOLGATE_GLOB_ENGINE = saved.engine;
  });
  const first = await h.call('glob', { pattern: '**/*.h' }) as Envelope & { data: { files: string[]; engine: string }; stats: { unchanged_folder_files?: number } };
  assert.equal(first.data.engine, engine);
  assert.equal(first.stats.unchanged_folder_files, 22, 'control: on a settled tree every file is taken from a quiet folder');
  const swapper = await startFolderSwapper(path.join(f.ws, 'a/b'), f.out);
  let leaked = 0;
  let quietTaken = 0;
  let insideSeen = 0;
  let fellBack = 0;
  try {
    const end = Date.now() + 2000;
    while (Date.now() < end) {
      const env = await h.call('glob', { pattern: '**/*.h' }) as typeof first;
      assert.ok(env.ok, env.text);
      if (env.data.files.some((p) => p.includes('id_rsa'))) leaked++;
      if (env.data.files.includes('a/b/in.h')) insideSeen++;
      quietTaken += env.stats.unchanged_folder_files ?? 0;
      if (env.data.engine === 'builtin') fellBack++;
    }
  } finally { await swapper.stop(); }
  assert.equal(leaked, 0, 'an outside-only name was returned');
  // The ripgrep engine takes c/ (untouched) as quiet; the index, which needs every folder it entered
  // proven, hands the calls that met a swap to the walker.
  if (engine === 'ripgrep') assert.ok(quietTaken > 0, 'control: files in c/ (untouched) were still taken as quiet');
  else assert.ok(fellBack > 0, `control: calls that met the swap were walked instead (${quietTaken} files taken as quiet)`);
  assert.ok(insideSeen > 0, 'control: the inside file was found at least once');
});
}

test('quietFolders.all: the same answers as one folder at a time; a folder on the way swapped for a link after its first look makes nothing below it quiet', { skip: skipOffLinux }, (t) => {
  const f = tree();
  t.after(f.cleanup);
  mkdirSync(path.join(f.ws, 'a/b/c'), { recursive: true });
  // An old-looking copy of a/ elsewhere (the future cutoff makes every ctime "old").
  mkdirSync(path.join(f.dir, 'copy/b/c'), { recursive: true });
  const future = Date.now() + 60_000;
  const dirs = ['a/b/c', 'a/b', 'c', '', 'a', 'nope'];
  let fd = openSync(f.ws, DIR);
  const one = quietFolders({ base: f.ws, pinnedFd: fd, cutoff: future });
  const each = dirs.filter((d) => one(d));
  assert.deepEqual([...quietFolders({ base: f.ws, pinnedFd: fd, cutoff: future }).all(dirs)].sort(), each.sort());
  assert.deepEqual(each.sort(), ['', 'a', 'a/b', 'a/b/c', 'c']);
  closeSync(fd);

  fd = openSync(f.ws, DIR);
  t.after(() => closeSync(fd));
  let swapped = false;
  const q = quietFolders({
    base: f.ws, pinnedFd: fd, cutoff: future,
    // After a's first look: a becomes a link to the copy (whose b and c look old and real).
    afterLook: (rel) => {
      if (rel !== 'a' || swapped) return;
      swapped = true;
      renameSync(path.join(f.ws, 'a'), path.join(f.ws, 'a.aside'));
      symlinkSync(path.join(f.dir, 'copy'), path.join(f.ws, 'a'));
    },
  });
  const got = q.all(['a/b/c', 'c']);
  assert.ok(swapped, 'the swap ran between the looks');
  assert.deepEqual([...got], ['c'], 'nothing under the swapped folder is quiet; c, beside it, still is');
});
