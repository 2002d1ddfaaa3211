// grep's ripgrep engine checks each hit on disk before it is shown or counted (verifyHits). A
// folder on the way swapped for a link to the outside and back while the check runs must not let
// a name pass whose file exists only outside: the totals would then tell that it exists there.
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { tempDir, whileSwapping } from '../../src/testing/helpers.js';
import { openRechecker } from '../../src/tools/glob/recheck.js';
import { verifyHits } from '../../src/tools/grep/verify.js';
import type { FileHit } from '../../src/tools/grep/types.js';

// These tests are about grep's ripgrep path: it runs even on these small trees (TOOLGATE_GREP_WALK_MAX=0;
// servers spawned here inherit it).
process.env.TOOLGATE_GREP_WALK_MAX = '0';
const skipOffLinux = process.platform === 'linux' ? false : 'needs /proc/self/fd (Linux): elsewhere the check is by path';
const hit = (rel: string): FileHit => ({ rel, records: [], count: 1 });
const opts = { allowHardlinks: false, need: 10, budget: 100, itemsOf: () => 1, isFileRoot: false };

function fixture() {
  const t = tempDir('tg-grep-pin-');
  const ws = path.join(t.dir, 'ws');
  const out = path.join(t.dir, 'outside');
  mkdirSync(path.join(ws, 'a', 'b'), { recursive: true });
  mkdirSync(out, { recursive: true });
  writeFileSync(path.join(ws, 'a', 'b', 'inside.txt'), 'needle\n');
  writeFileSync(path.join(out, 'id_rsa'), 'needle\n');
  writeFileSync(path.join(out, 'inside.txt'), 'needle\n');
  return { ...t, ws, out };
}

test('racing: a folder swapped for a link over and over never lets an outside-only hit pass or count', { skip: skipOffLinux }, async (t) => {
  const f = fixture();
  t.after(f.cleanup);
  let passed = 0;
  let inside = 0;
  await whileSwapping(path.join(f.ws, 'a', 'b'), f.out, 1500, async () => {
    const v = await verifyHits([hit('a/b/id_rsa'), hit('a/b/inside.txt')], f.ws, opts);
    for (const h of v.hits) if (h.rel.endsWith('id_rsa')) passed++; else inside++;
  });
  assert.equal(passed, 0, 'an outside-only name passed the check');
  assert.ok(inside > 0, 'control: the inside file passed at least once');
});

test('controls: a file there passes, a missing one, a folder, a link and a hard link do not; no descriptor leaks', { skip: skipOffLinux }, async (t) => {
  const f = fixture();
  t.after(f.cleanup);
  const { linkSync, symlinkSync } = await import('node:fs');
  symlinkSync(path.join(f.ws, 'a', 'b', 'inside.txt'), path.join(f.ws, 'a', 'l.txt'));
  writeFileSync(path.join(f.ws, 'a', 'hard.txt'), 'needle\n');
  linkSync(path.join(f.ws, 'a', 'hard.txt'), path.join(f.ws, 'a', 'hard2.txt'));
  const before = readdirSync('/proc/self/fd').length;
  const v = await verifyHits(['a/b/inside.txt', 'a/b/nope.txt', 'a/b', 'a/l.txt', 'a/hard.txt', 'a/hard2.txt', 'x/y.txt'].map(hit), f.ws, opts);
  assert.equal(readdirSync('/proc/self/fd').length, before, 'no descriptor leaked');
  assert.deepEqual(v.hits.map((h) => h.rel), ['a/b/inside.txt'], 'only the regular file with one link passes');
  assert.equal(v.hardlinked, 2);
  assert.equal(v.moved, 4);
  const allowed = await verifyHits(['a/hard.txt'].map(hit), f.ws, { ...opts, allowHardlinks: true });
  assert.deepEqual(allowed.hits.map((h) => h.rel), ['a/hard.txt'], 'hard links pass when allowed');
});

test("'..' and '.' segments never climb out of the pinned folder", { skip: skipOffLinux }, (t) => {
  const f = fixture();
  t.after(f.cleanup);
  const r = openRechecker(path.join(f.ws, 'a'));
  try {
    // From ws/a, '../../outside/id_rsa' would name a real outside file by path.
    for (const rel of ['../../outside/id_rsa', 'b/../../../outside/id_rsa', './b/inside.txt', 'b/./inside.txt', 'b//inside.txt', '..', 'b/..']) {
      assert.equal(r.lstat(rel), undefined, rel);
    }
    assert.ok(r.lstat('b/inside.txt')?.isFile(), 'control');
  } finally { r.close(); }
});

test('confirmContent, file names only: a file is returned only if it holds the pattern now (literal fast path and regex path alike)', { skip: skipOffLinux }, async (t) => {
  const { confirmContent } = await import('../../src/tools/grep/verify.js');
  const { toJsPattern } = await import('../../src/tools/grep/regex.js');
  const f = fixture();
  t.after(f.cleanup);
  writeFileSync(path.join(f.ws, 'a/has.txt'), 'x\r\nkmem_cache_zalloc(\r\n');
  writeFileSync(path.join(f.ws, 'a/gone.txt'), 'rewritten after rg saw it\n');
  writeFileSync(path.join(f.ws, 'a/split.txt'), 'kmem_cache_\nzalloc\n');
  writeFileSync(path.join(f.ws, 'a/bin.txt'), Buffer.from([0x6b, 0x6d, 0x65, 0x6d, 0, 1, 2]));
  const hits = ['a/has.txt', 'a/gone.txt', 'a/split.txt', 'a/bin.txt'].map(hit);
  for (const q of [
    { pattern: 'kmem_cache_zalloc', fixed_strings: true },
    { pattern: 'kmem_cache_zalloc', fixed_strings: false },
    { pattern: 'kmem_cache_z[a]lloc', fixed_strings: false },
    { pattern: 'KMEM_CACHE_ZALLOC', fixed_strings: true, ignore_case: true },
  ]) {
    const pat = toJsPattern({ ignore_case: false, multiline: false, ...q });
    const c = await confirmContent(hits, f.ws, 10, { mode: 'files_with_matches', pat, multiline: false, allowHardlinks: false, signal: new AbortController().signal, deadline: Date.now() + 60_000 });
    assert.deepEqual(c.hits.map((h) => h.rel), ['a/has.txt'], JSON.stringify(q));
    assert.equal(c.changed, 3);
  }
});

test('racing, counts: a hit past the page in a folder swapped for a link to outside and back is not counted unless its own file matches', { skip: skipOffLinux, timeout: 60_000 }, async (t) => {
  const { Harness } = await import('../../src/testing/helpers.js');
  const { locateRg } = await import('../../src/tools/grep/rg.js');
  const { RACY_MS } = await import('../../src/tools/walk/link-cache.js');
  const rg = await locateRg({ ...process.env, TOOLGATE_RG: '' });
  if (!rg) return t.skip('needs ripgrep (rg) on PATH');
  const f = fixture();
  t.after(f.cleanup);
  // The page (head_limit 1) shows a/a.txt.
  writeFileSync(path.join(f.ws, 'a/a.txt'), 'needle\n');
  // Names that exist inside (not matching) and outside (matching); filler in a/ widens the gap
  // between rg reading a/ and opening a/b, where the swap has to land.
  for (let i = 0; i < 40; i++) {
    writeFileSync(path.join(f.ws, `a/b/x${i}.txt`), 'nothing here\n');
    writeFileSync(path.join(f.out, `x${i}.txt`), 'needle needle\n');
  }
  for (let i = 0; i < 300; i++) writeFileSync(path.join(f.ws, `a/filler${i}.txt`), 'nothing\n');
  mkdirSync(path.join(f.ws, 'c'));
  writeFileSync(path.join(f.ws, 'c/quiet.txt'), 'needle\n');
  // Settled folders are quiet: their hits past the page are taken on rg's word (the control below).
  await new Promise((r) => setTimeout(r, RACY_MS + 300));
  const saved = process.env.TOOLGATE_RG;
  process.env.TOOLGATE_RG = '';
  const { tempDir: td } = await import('../../src/testing/helpers.js');
  const state = td('tg-grep-pin-state-');
  const h = new Harness([f.ws], { stateDir: state.dir });
  t.after(() => { h.close(); state.cleanup(); if (saved === undefined) delete process.env.TOOLGATE_RG; else process.env.TOOLGATE_RG = saved; });
  const calm = await h.call('grep', { pattern: 'needle', fixed_strings: true, head_limit: 1 }) as { data: { total_files: number; engine: string } };
  assert.equal(calm.data.engine, 'ripgrep');
  assert.equal(calm.data.total_files, 3, 'control: a/a.txt, a/b/inside.txt, c/quiet.txt');
  let over = 0;
  const runs = await whileSwapping(path.join(f.ws, 'a', 'b'), f.out, 3000, async () => {
    for (const mode of ['files_with_matches', 'count'] as const) {
      const env = await h.call('grep', { pattern: 'needle', fixed_strings: true, head_limit: 1, output_mode: mode }) as { ok: boolean; data: { total_files?: number } };
      assert.ok(env.ok);
      // Inside, at most a/a.txt, a/b/inside.txt (when a/b is the real folder) and c/quiet.txt match: a 4th file is outside content.
      if ((env.data.total_files ?? 0) > 3) over++;
    }
  });
  assert.ok(runs > 10, `control: ${runs} searches ran`);
  assert.equal(over, 0, 'an outside file was counted under an inside name');
});
