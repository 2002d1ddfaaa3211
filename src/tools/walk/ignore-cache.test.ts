import assert from 'node:assert/strict';
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Harness, tempDir } from '../../testing/helpers.js';
import { IgnoreCompileCache, MAX_ENTRIES, MEMO_MAX_PATHS, compileIgnore, testIgnore } from './ignore-cache.js';

test('ignore cache: the same text gives the same compiled rules; another text another', () => {
  const c = new IgnoreCompileCache();
  const a = c.get('*.log\n');
  assert.equal(c.get('*.log\n'), a);
  const b = c.get('*.tmp\n');
  assert.notEqual(b, a);
  assert.equal(testIgnore(a, 'x.log').ignored, true);
  assert.equal(testIgnore(b, 'x.log').ignored, false);
  assert.equal(c.size, 2);
});

test('ignore cache: bounded by entries (least recently used dropped first)', () => {
  const c = new IgnoreCompileCache();
  const first = c.get('rule0\n');
  for (let i = 1; i <= MAX_ENTRIES + 44; i++) c.get(`rule${i}\n`);
  assert.ok(c.size <= MAX_ENTRIES, `size ${c.size}`);
  assert.notEqual(c.get('rule0\n'), first, 'the oldest entry was dropped and is compiled again');
});

test('ignore cache: a tree with more distinct ignore files than the kernel (282) keeps them all: a second walk in the same order compiles none again (their memos survive)', () => {
  // glob's ripgrep engine judges every listed file with the walker's stack (a --glob override
  // makes rg skip the ignore files for them): with 256 entries, 300 texts read in walk order
  // evicted each other every call, and each call paid every compile and every rule test again
  // (the kernel tree from its root, "**/*.*": 850 ms a call instead of 300).
  const c = new IgnoreCompileCache();
  const texts = Array.from({ length: 300 }, (_, i) => `gen${i}.h\n*.o\n`);
  const first = texts.map((t) => c.get(t));
  testIgnore(first[0]!, 'gen0.h');
  const again = texts.map((t) => c.get(t));
  assert.equal(again.filter((x, i) => x !== first[i]).length, 0, 'compiled again on the second walk');
  assert.equal(again[0]!.memo.size, 1, 'the memo survived');
});

test('ignore cache: the memo is emptied only after many distinct paths, and the answers stay right', () => {
  const c = compileIgnore('*.log\n!keep.log\nbuild/\n');
  const want = (p: string) => (p.endsWith('.log') && !p.endsWith('keep.log')) || p.startsWith('build/');
  const pathOf = (i: number) => (i % 3 === 0 ? `d${i}/a.log` : i % 3 === 1 ? `d${i}/keep.log` : `build/f${i}`);
  // The same paths tested over and over stay remembered (no emptying after N tests).
  for (let round = 0; round < 30; round++) for (let i = 0; i < 10_000; i++) assert.equal(testIgnore(c, pathOf(i)).ignored, want(pathOf(i)));
  // Each path and, as the package tests each parent first, its folder ('d0/', 'build/').
  const held = new Set<string>();
  for (let i = 0; i < 10_000; i++) held.add(pathOf(i)).add(pathOf(i).replace(/[^/]*$/, ''));
  assert.equal(c.memo.size, held.size);
  // Distinct paths past the bound empty it on the way; every answer is still right.
  for (let i = 0; i < MEMO_MAX_PATHS + 20_000; i++) {
    const p = pathOf(i);
    assert.equal(testIgnore(c, p).ignored, want(p), p);
  }
  assert.ok(c.memo.size <= MEMO_MAX_PATHS && c.memo.size < MEMO_MAX_PATHS + 20_000 - 10_000, `the memo was emptied on the way (${c.memo.size})`);
  assert.equal(testIgnore(c, 'x/keep.log').unignored, true);
});

/** list_dir through one long-lived runtime (cache warm) vs a fresh runtime (nothing cached): the same answer after every change. */
test('list_dir with the cache: an ignore file changed, replaced by a link, deleted, or changed above the folder is seen at once', async (t) => {
  const tmp = tempDir();
  t.after(tmp.cleanup);
  const root = tmp.dir;
  mkdirSync(path.join(root, 'sub/inner'), { recursive: true });
  for (const f of ['a.log', 'b.txt', 'c.tmp', 'sub/inner/x.log', 'sub/inner/y.tmp', 'sub/inner/z.txt']) writeFileSync(path.join(root, f), 'x');
  const warm = new Harness([root]);
  t.after(() => warm.close());
  const names = async (h: Harness, p: string) => {
    const env = (await h.call('list_dir', { path: p })) as { ok: boolean; data: { entries: Array<{ name: string }> } };
    assert.equal(env.ok, true);
    return env.data.entries.map((e) => e.name).join(',');
  };
  const same = async (step: string, want: Record<string, string>) => {
    const cold = new Harness([root]);
    try {
      for (const [p, w] of Object.entries(want)) {
        const a = await names(warm, p);
        assert.equal(a, w, `${step}: ${p} (cached)`);
        assert.equal(await names(cold, p), a, `${step}: ${p} (uncached)`);
        assert.equal(await names(warm, p), a, `${step}: ${p} (cached, again)`);
      }
    } finally {
      cold.close();
    }
  };
  const gi = path.join(root, '.gitignore');
  writeFileSync(gi, '*.log\n');
  await same('*.log', { '.': 'sub,b.txt,c.tmp', 'sub/inner': 'y.tmp,z.txt' });
  writeFileSync(gi, '*.tmp\n'); // same size, other rules
  await same('*.tmp', { '.': 'sub,a.log,b.txt', 'sub/inner': 'x.log,z.txt' });
  writeFileSync(path.join(root, 'other-rules'), '*.txt\n');
  rmSync(gi);
  symlinkSync(path.join(root, 'other-rules'), gi); // a link is never read as an ignore file
  await same('link', { '.': 'sub,a.log,b.txt,c.tmp,other-rules', 'sub/inner': 'x.log,y.tmp,z.txt' });
  rmSync(gi);
  writeFileSync(`${gi}.new`, '*.log\n');
  renameSync(`${gi}.new`, gi); // replaced by rename
  await same('renamed in', { '.': 'sub,b.txt,c.tmp,other-rules', 'sub/inner': 'y.tmp,z.txt' });
  writeFileSync(path.join(root, 'sub/.ignore'), '!x.log\n*.txt\n'); // a deeper file re-includes
  await same('sub/.ignore', { 'sub/inner': 'x.log,y.tmp' });
  rmSync(gi);
  rmSync(path.join(root, 'sub/.ignore'));
  await same('deleted', { '.': 'sub,a.log,b.txt,c.tmp,other-rules', 'sub/inner': 'x.log,y.tmp,z.txt' });
});
