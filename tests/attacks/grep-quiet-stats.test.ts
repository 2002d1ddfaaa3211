// grep's ripgrep engine takes a hit's lstat (is it still a file, how many hard links) from
// QuietCheck.withStats when the hit's folder is quiet: the lstats are made inside the pinned
// folder, by relative path, BEFORE the looks that prove each folder on the way unchanged since
// before rg started. A relative lookup follows a folder swapped for a link, so the order is the
// whole guarantee: a swap after the lstats shows in the looks; a swap before them and back
// changes a ctime. These tests swap at each point and check that no lstat of an outside file is
// ever taken for a hit in a folder reported quiet.
import assert from 'node:assert/strict';
import { closeSync, constants, linkSync, mkdirSync, openSync, renameSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { tempDir } from '../../src/testing/helpers.js';
import { quietFolders } from '../../src/tools/glob/recheck.js';
import { quietHits, verifyHits } from '../../src/tools/grep/verify.js';
import { RACY_MS } from '../../src/tools/walk/link-cache.js';

const skipOffLinux = process.platform === 'linux' ? false : 'needs Linux (/proc/self/fd, statfs types): elsewhere no folder is quiet';
const DIR = constants.O_RDONLY | constants.O_DIRECTORY;
const HIT = 'a/b/x.txt';

/** ws/a/b/x.txt (hard-linked inside the workspace: two links) and an outside copy of a/ whose x.txt has one. */
function fixture() {
  const t = tempDir('tg-qstats-');
  const ws = path.join(t.dir, 'ws');
  const copy = path.join(t.dir, 'copy');
  mkdirSync(path.join(ws, 'a/b'), { recursive: true });
  mkdirSync(path.join(copy, 'b'), { recursive: true });
  writeFileSync(path.join(ws, HIT), 'needle\n');
  linkSync(path.join(ws, HIT), path.join(ws, 'twin.txt'));
  writeFileSync(path.join(copy, 'b/x.txt'), 'needle\n');
  const fd = openSync(ws, DIR);
  return { ...t, ws, copy, fd, insideIno: statSync(path.join(ws, HIT)).ino, outsideIno: statSync(path.join(copy, 'b/x.txt')).ino, done: () => { closeSync(fd); t.cleanup(); } };
}
const swapIn = (f: ReturnType<typeof fixture>) => { renameSync(path.join(f.ws, 'a'), path.join(f.ws, 'a.aside')); symlinkSync(f.copy, path.join(f.ws, 'a')); };
const swapBack = (f: ReturnType<typeof fixture>) => { unlinkSync(path.join(f.ws, 'a')); renameSync(path.join(f.ws, 'a.aside'), path.join(f.ws, 'a')); };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('withStats: untouched, every folder is quiet and the lstat is the inside file (control)', { skip: skipOffLinux }, async (t) => {
  const f = fixture();
  t.after(f.done);
  const r = quietFolders({ base: f.ws, pinnedFd: f.fd, cutoff: Date.now() + 60_000 }).withStats([HIT, 'twin.txt']);
  assert.ok(r.quiet.has('a/b') && r.quiet.has(''));
  assert.equal(r.stats.get(HIT)?.ino, f.insideIno);
  assert.equal(r.stats.get(HIT)?.nlink, 2);
  // quietHits offers that lstat to verifyHits, which then leaves the hard-linked file out as it would by itself.
  const hit = { rel: HIT, records: [], count: 1 };
  const { known } = quietHits(quietFolders({ base: f.ws, pinnedFd: f.fd, cutoff: Date.now() + 60_000 }), [hit], 100);
  assert.equal(known(hit)?.st?.ino, f.insideIno);
  const v = await verifyHits([hit], f.ws, { allowHardlinks: false, need: 10, budget: 100, itemsOf: () => 1, isFileRoot: false, known });
  assert.equal(v.hardlinked, 1);
});

test('withStats: a folder on the way swapped for a link right after the lstats, before the looks: nothing below it is quiet', { skip: skipOffLinux }, (t) => {
  const f = fixture();
  t.after(f.done);
  // A future cutoff: every ctime counts as old, so only the looks' "still a folder" can catch the swap.
  const r = quietFolders({ base: f.ws, pinnedFd: f.fd, cutoff: Date.now() + 60_000, afterStats: () => swapIn(f) }).withStats([HIT]);
  assert.equal(r.quiet.has('a/b'), false, 'a/b reported quiet through a link to outside');
  assert.equal(r.quiet.has('a'), false);
});

test('withStats: a swap after the last look changes nothing: the lstats were made before every look, on the inside file', { skip: skipOffLinux }, (t) => {
  const f = fixture();
  t.after(f.done);
  let swapped = false;
  let rootLooks = 0;
  // '' (the pinned folder) is looked at twice, its second look last of all. Were the lstats made after the looks, this swap would feed them the outside copy.
  const q = quietFolders({ base: f.ws, pinnedFd: f.fd, cutoff: Date.now() + 60_000, afterLook: (rel) => { if (rel === '' && ++rootLooks === 2) { swapped = true; swapIn(f); } } });
  const r = q.withStats([HIT]);
  assert.ok(swapped, 'the swap ran');
  assert.ok(r.quiet.has('a/b'), 'the looks all came before the swap');
  assert.equal(r.stats.get(HIT)?.ino, f.insideIno, 'the lstat that is taken is of the inside file');
});

test('withStats with the lister\'s start: swapped to outside before the lstats and back before the looks, the folders are not quiet (the swap back moved ctimes)', { skip: skipOffLinux }, async (t) => {
  const f = fixture();
  t.after(f.done);
  // Let the fixture's ctimes age past the margin (RACY_MS at most), then "start rg".
  await sleep(RACY_MS + 100);
  const started = Date.now();
  const control = quietFolders({ base: f.ws, pinnedFd: f.fd, started }).withStats([HIT]);
  assert.ok(control.quiet.has('a/b'), 'control: untouched, the same start makes a/b quiet');
  swapIn(f);
  let landed: number | undefined;
  const q = quietFolders({ base: f.ws, pinnedFd: f.fd, started, afterStats: () => { landed = statSync(path.join(f.ws, HIT)).ino; swapBack(f); } });
  const hit = { rel: HIT, records: [], count: 1 };
  const { dirs, known } = quietHits(q, [hit], 100);
  assert.equal(landed, f.outsideIno, 'the lstats ran while a/ led outside (the attack is real)');
  assert.equal(dirs.has('a/b'), false, 'an outside lstat would be taken for a quiet folder');
  assert.equal(dirs.has(''), false);
  assert.equal(known(hit), null, 'no lstat is offered for a hit outside a quiet folder');
  // Through verifyHits: the outside file (one link) must not pass for the inside one (two links).
  const v = await verifyHits([hit], f.ws, { allowHardlinks: false, need: 10, budget: 100, itemsOf: () => 1, isFileRoot: false, known });
  assert.deepEqual(v.hits, [], 'the hard-linked inside file is left out');
  assert.equal(v.hardlinked, 1);
});

test('withStats: a path that is not plain gets no lstat (no lookup leaves the pinned folder)', { skip: skipOffLinux }, (t) => {
  const f = fixture();
  t.after(f.done);
  writeFileSync(path.join(f.dir, 'secret.txt'), 'x');
  const odd = ['../secret.txt', 'a/../../secret.txt', '/etc/passwd', 'a//b/x.txt', './a/b/x.txt', 'a/b/.', '', 'a/b/..'];
  const r = quietFolders({ base: f.ws, pinnedFd: f.fd, cutoff: Date.now() + 60_000 }).withStats(odd);
  for (const rel of odd) assert.equal(r.stats.has(rel), false, rel);
});
