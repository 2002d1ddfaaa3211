// Review of grep's quiet folders (rg engine): a hit whose folder provably did not change while rg
// ran is shown on rg's word; verifyHits (lstat, hard links) still runs for it. These attacks try to
// make rg's word about a file that is not the workspace's own (a hard link to an outside file)
// reach the answer.
import assert from 'node:assert/strict';
import { closeSync, constants, linkSync, mkdirSync, openSync, renameSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Harness, startRaceLoop, tempDir } from '../../src/testing/helpers.js';
import { quietFolders } from '../../src/tools/glob/recheck.js';
import { locateRg } from '../../src/tools/grep/rg.js';
import { RACY_MS } from '../../src/tools/walk/link-cache.js';

// These tests are about grep's ripgrep path: it runs even on these small trees (TOOLGATE_GREP_WALK_MAX=0;
// servers spawned here inherit it).
process.env.TOOLGATE_GREP_WALK_MAX = '0';
const skipOffLinux = process.platform === 'linux' ? false : 'needs Linux (/proc/self/fd): elsewhere no folder is quiet';
const settle = () => new Promise((r) => setTimeout(r, RACY_MS + 300));

/** Swaps `a` and `b` (two folders) back and forth in a worker thread until stop(). */
function startPairSwapper(a: string, b: string): Promise<{ stop: () => Promise<void> }> {
  return startRaceLoop("fs.renameSync(a, a + '.x'); fs.renameSync(b, a); fs.renameSync(a, b); fs.renameSync(a + '.x', a);", { a, b });
}

async function harness(t: { after: (f: () => void) => void }, ws: string) {
  const saved = process.env.TOOLGATE_RG;
  process.env.TOOLGATE_RG = '';
  const state = tempDir('tg-review-quiet-state-');
  const h = new Harness([ws], { stateDir: state.dir });
  t.after(() => { h.close(); state.cleanup(); if (saved === undefined) delete process.env.TOOLGATE_RG; else process.env.TOOLGATE_RG = saved; });
  return h;
}

type GrepEnv = { ok: boolean; text?: string; data?: { engine: string; matches?: { text: string }[]; counts?: { file: string; count: number }[]; files?: string[]; total_files: number } };

for (const [label, swapA, swapB] of [['a folder ABOVE the search folder', 'p', 'q'], ['the search folder itself', 'p/s', 'q/s']] as const) test(`${label} swapped with a copy while grep runs: a hard link to an outside file (real tree: rg's word in a quiet folder; copy: the file confirmContent reads) never reaches the answer`, { skip: skipOffLinux }, async (t) => {
  const rg = await locateRg();
  if (!rg) return t.skip('needs ripgrep (rg) on PATH');
  const d = tempDir('tg-review-quiet-');
  t.after(d.cleanup);
  const ws = path.join(d.dir, 'ws');
  const out = path.join(d.dir, 'outside');
  mkdirSync(path.join(ws, 'p/s/a'), { recursive: true });
  mkdirSync(path.join(ws, 'q/s/a'), { recursive: true });
  mkdirSync(out);
  writeFileSync(path.join(out, 'secret'), 'needle SECRET-LINE\nneedle SECRET-2\n');
  // The real tree: p/s/a/f is a hard link to an outside file (left out while paths.allow_hardlinks is off).
  linkSync(path.join(out, 'secret'), path.join(ws, 'p/s/a/f'));
  // The copy: the same names, f a plain file of one link.
  writeFileSync(path.join(ws, 'q/s/a/f'), 'needle decoy\n');
  // And the other way round: g is plain in the real tree, a hard link to the outside in the copy.
  writeFileSync(path.join(out, 'secret-g'), 'needle SECRET-G\n');
  writeFileSync(path.join(ws, 'p/s/a/g'), 'needle SECRET-G\n');
  linkSync(path.join(out, 'secret-g'), path.join(ws, 'q/s/a/g'));
  await settle();
  const h = await harness(t, ws);
  const calm = await h.call('grep', { pattern: 'needle', path: 'p/s', output_mode: 'content' }) as GrepEnv;
  assert.equal(calm.data?.engine, 'ripgrep');
  assert.deepEqual(calm.data?.matches?.map((m) => m.text), ['needle SECRET-G'], 'control: the hard link is left out, the plain file found, when nothing races');
  let leaked = 0;
  let decoys = 0;
  let runs = 0;
  const swapper = await startPairSwapper(path.join(ws, swapA), path.join(ws, swapB));
  try {
    const end = Date.now() + 4000;
    while (Date.now() < end) {
      for (const mode of ['content', 'count'] as const) {
        const env = await h.call('grep', { pattern: 'needle', path: 'p/s', output_mode: mode }) as GrepEnv;
        runs++;
        if (!env.ok) continue;
        const shown = JSON.stringify(env.data);
        if (shown.includes('SECRET-LINE') || shown.includes('SECRET-2') || (env.data?.counts ?? []).some((c) => c.count === 2)) leaked++;
        if (shown.includes('decoy') || (env.data?.counts ?? []).some((c) => c.count === 1)) decoys++;
      }
    }
  } finally { await swapper.stop(); }
  assert.ok(runs > 10, `control: ${runs} searches ran`);
  assert.ok(decoys > 0, 'control: the copy\'s plain file was found at least once');
  assert.equal(leaked, 0, `the outside file's lines or count reached the answer (${leaked} of ${runs} searches)`);
});

test('confirmContent never takes a hard link\'s content as the workspace\'s (a folder above swapped with a copy between verifyHits and it would hand it one)', { skip: skipOffLinux }, async (t) => {
  const { confirmContent } = await import('../../src/tools/grep/verify.js');
  const { toJsPattern } = await import('../../src/tools/grep/regex.js');
  const d = tempDir('tg-review-quiet-');
  t.after(d.cleanup);
  const ws = path.join(d.dir, 'ws');
  const out = path.join(d.dir, 'outside');
  mkdirSync(path.join(ws, 'a'), { recursive: true });
  mkdirSync(out);
  writeFileSync(path.join(out, 'secret'), 'KEY=hunter2\n');
  // What the copy holds where rg (in the real tree) reported a plain file: a hard link to the outside file.
  linkSync(path.join(out, 'secret'), path.join(ws, 'a/f'));
  writeFileSync(path.join(ws, 'a/plain'), 'KEY=hunter2\n');
  const q = { pattern: 'KEY=hunter', fixed_strings: true, ignore_case: false, multiline: false };
  for (const mode of ['files_with_matches', 'count', 'content'] as const) {
    const pat = toJsPattern(q);
    const hits = ['a/f', 'a/plain'].map((rel) => ({ rel, count: 1, records: [{ line: 1, end: 1, text: 'KEY=hunter2', before: [], after: [] }] })) as never[];
    const c = await confirmContent(hits, ws, 10, { mode, pat: mode === 'content' ? null : pat, multiline: false, allowHardlinks: false, signal: new AbortController().signal, deadline: Date.now() + 60_000 });
    assert.deepEqual(c.hits.map((h: { rel: string }) => h.rel), ['a/plain'], `${mode}: the hard link's content confirmed an answer (an oracle on the outside file)`);
    const allowed = await confirmContent(hits, ws, 10, { mode, pat: mode === 'content' ? null : pat, multiline: false, allowHardlinks: true, signal: new AbortController().signal, deadline: Date.now() + 60_000 });
    assert.equal(allowed.hits.length, 2, `${mode}: control: with paths.allow_hardlinks on, both pass`);
  }
});

test('quietFolders: a folder on the way swapped for a link between its own look and its child\'s cannot send the child\'s look to an old folder elsewhere', { skip: skipOffLinux }, async (t) => {
  const d = tempDir('tg-review-quiet-');
  t.after(d.cleanup);
  const ws = path.join(d.dir, 'ws');
  const out = path.join(d.dir, 'outside');
  mkdirSync(path.join(ws, 'a/b'), { recursive: true });
  mkdirSync(path.join(ws, 'c'), { recursive: true });
  mkdirSync(path.join(out, 'b'), { recursive: true });
  await new Promise((r) => setTimeout(r, 300));
  const cutoff = Date.now(); // "rg started" (the margin is 0 here; the kernel's clock lags by a tick at most)
  await new Promise((r) => setTimeout(r, 50));
  // While "rg ran": a/b changed (say a folder of it was swapped for a link to the outside and back).
  writeFileSync(path.join(ws, 'a/b/new'), '');
  const fd = openSync(ws, constants.O_RDONLY | constants.O_DIRECTORY);
  t.after(() => closeSync(fd));
  const swapA = () => {
    renameSync(path.join(ws, 'a'), path.join(ws, 'a.real'));
    symlinkSync(out, path.join(ws, 'a'));
  };
  const restoreA = () => {
    unlinkSync(path.join(ws, 'a'));
    renameSync(path.join(ws, 'a.real'), path.join(ws, 'a'));
  };
  // Control: a/b is not quiet when nothing races; c is.
  const calm = quietFolders({ base: ws, pinnedFd: fd, cutoff });
  assert.equal(calm('a/b'), false, 'control: a/b changed after the cutoff');
  // The attack: right after a is looked at, it becomes a link to the outside, whose b is old.
  let swapped = false;
  const q = quietFolders({ base: ws, pinnedFd: fd, cutoff, afterLook: (rel) => { if (rel === 'a' && !swapped) { swapped = true; swapA(); } } });
  const got = q('a/b');
  if (swapped) restoreA();
  assert.equal(got, false, 'a/b passed as quiet: its look went through a link to an old folder outside');
});
