// Review of the streaming pinned re-check (glob's rg engine, grep's verifyHits) and the text-limit
// cut: attempts that must fail. The cache of folder descriptors (PINNED_DIR_CACHE) must never let a
// key answer for another folder, a folder cached and then moved away or swapped must not let an
// outside name through, odd names must not climb out, nothing leaks a descriptor; and the text
// block of a glob stays within the output limits, whole (SPEC §3).
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { toCallToolResult, type Envelope } from '../../src/core/envelope.js';
import { connectStdio, tempDir } from '../../src/testing/helpers.js';
import { openRechecker, PINNED_DIR_CACHE, recheckCandidates, type Candidate } from '../../src/tools/glob/recheck.js';

// These tests are about grep's ripgrep path: it runs even on these small trees (TOOLGATE_GREP_WALK_MAX=0;
// servers spawned here inherit it).
process.env.TOOLGATE_GREP_WALK_MAX = '0';
const skipOffLinux = process.platform === 'linux' ? false : 'needs /proc/self/fd (Linux): elsewhere the re-check is by path';
const fdCount = () => readdirSync('/proc/self/fd').length;

test('more folders than the cache holds, in an order that evicts over and over: each key answers for its own folder only', { skip: skipOffLinux }, (t) => {
  const tmp = tempDir('tg-rpin-');
  t.after(tmp.cleanup);
  const ws = path.join(tmp.dir, 'ws');
  const N = PINNED_DIR_CACHE * 2 + 37;
  for (let i = 0; i < N; i++) {
    mkdirSync(path.join(ws, `p${i % 7}`, `d${i}`), { recursive: true });
    writeFileSync(path.join(ws, `p${i % 7}`, `d${i}`, `only${i}`), '');
  }
  const dir = (i: number) => `p${i % 7}/d${i}`;
  const before = fdCount();
  const r = openRechecker(ws);
  let wrong = 0;
  let right = 0;
  try {
    // Three passes, strided: entries of a folder evicted long ago, and names of other folders asked in each.
    for (let pass = 0; pass < 3; pass++) {
      for (let k = 0; k < N; k++) {
        const i = (k * 97 + pass * 13) % N;
        const j = (i * 31 + 5) % N;
        if (r.check({ rel: `${dir(i)}/only${i}`, link: false })) right++;
        if (i !== j && r.check({ rel: `${dir(i)}/only${j}`, link: false })) wrong++;
      }
    }
    assert.ok(fdCount() <= before + PINNED_DIR_CACHE + 2, `at most the cache open: ${fdCount() - before}`);
  } finally { r.close(); }
  assert.equal(wrong, 0, 'a name of another folder passed: a cache key answered for the wrong folder');
  assert.equal(right, 3 * N, 'control: every entry that is there passed');
  assert.equal(fdCount(), before, 'no descriptor leaked');
});

test('a folder cached, then moved away and replaced by a link to the outside: later names that exist only outside do not pass', { skip: skipOffLinux }, (t) => {
  const tmp = tempDir('tg-rpin-');
  t.after(tmp.cleanup);
  const ws = path.join(tmp.dir, 'ws');
  const out = path.join(tmp.dir, 'outside');
  mkdirSync(path.join(ws, 'a', 'b'), { recursive: true });
  mkdirSync(path.join(out, 'b'), { recursive: true });
  writeFileSync(path.join(ws, 'a', 'x'), '');
  writeFileSync(path.join(ws, 'a', 'b', 'y'), '');
  for (const f of ['secret', 'b/secret', 'b/y']) writeFileSync(path.join(out, f), '');
  const r = openRechecker(ws);
  try {
    assert.ok(r.check({ rel: 'a/x', link: false }), 'control');
    renameSync(path.join(ws, 'a'), path.join(ws, 'a.old'));
    symlinkSync(out, path.join(ws, 'a'));
    // 'a' is cached (the old real folder, still inside): outside-only names fail through it, and an uncached subfolder is opened through it too.
    assert.equal(r.check({ rel: 'a/secret', link: false }), false, 'outside a/secret passed');
    assert.equal(r.check({ rel: 'a/b/secret', link: false }), false, 'outside a/b/secret passed');
  } finally { r.close(); }
  // A fresh checker: 'a' is a link now, so nothing under it passes, not even a name both sides hold.
  const fresh = recheckCandidates(ws, [{ rel: 'a/b/y', link: false }, { rel: 'a/secret', link: false }]);
  assert.deepEqual([fresh.ok.length, fresh.moved], [0, 2]);
});

test("odd names: '.', '..', empty segments, absolute and trailing-slash forms never pass; newlines and other bytes in names do when there", { skip: skipOffLinux }, (t) => {
  const tmp = tempDir('tg-rpin-');
  t.after(tmp.cleanup);
  const ws = path.join(tmp.dir, 'ws', 'in');
  mkdirSync(path.join(ws, 'a\nb', 'c d'), { recursive: true });
  writeFileSync(path.join(ws, 'a\nb', 'c d', 'e\nf.h'), '');
  writeFileSync(path.join(ws, 'a\nb', 'ü\u202e.h'), '');
  writeFileSync(path.join(ws, 'r.h'), '');
  // Files right above the start and at the top of the temp dir: reachable only by climbing.
  writeFileSync(path.join(tmp.dir, 'ws', 'up.h'), '');
  writeFileSync(path.join(tmp.dir, 'top.h'), '');
  const refused = ['../up.h', '../../top.h', 'a\nb/../../up.h', './a\nb/ü\u202e.h', 'a\nb/./ü\u202e.h', 'a\nb//ü\u202e.h', '/a\nb/ü\u202e.h', '/r.h', '//r.h',
    '', '.', '..', 'a\nb/', 'a\nb/c d/..', `${'../'.repeat(30)}${tmp.dir.slice(1)}/top.h`];
  const before = fdCount();
  const r = recheckCandidates(ws, [...refused.map((rel) => ({ rel, link: false })), { rel: 'a\nb/c d/e\nf.h', link: false }, { rel: 'a\nb/ü\u202e.h', link: false }, { rel: 'r.h', link: false }]);
  assert.deepEqual(r.ok.map((c) => c.rel), ['a\nb/c d/e\nf.h', 'a\nb/ü\u202e.h', 'r.h']);
  assert.equal(r.moved, refused.length);
  const p = openRechecker(ws);
  try { for (const rel of refused) assert.equal(p.lstat(rel), undefined, JSON.stringify(rel)); } finally { p.close(); }
  assert.equal(fdCount(), before);
});

test('a closed re-checker answers nothing and opens nothing (an rg line arriving after the finally)', { skip: skipOffLinux }, (t) => {
  const tmp = tempDir('tg-rpin-');
  t.after(tmp.cleanup);
  mkdirSync(path.join(tmp.dir, 'a'));
  writeFileSync(path.join(tmp.dir, 'a', 'x'), '');
  const r = openRechecker(tmp.dir);
  assert.ok(r.check({ rel: 'a/x', link: false }));
  r.close();
  const before = fdCount();
  assert.equal(r.check({ rel: 'a/x', link: false }), false);
  assert.equal(r.lstat('a/x'), undefined);
  r.close();
  assert.equal(fdCount(), before);
});

function env(files: string[], text: string, storage_ref?: string): Envelope {
  return {
    tool_call_id: 'tc', trace_id: 'tr', tool: 'glob', version: '1.0.0', ok: true, status: 'partial', data: { files }, error: null,
    text, stats: {}, artifacts: { files_changed: [], commands_run: [], ...(storage_ref ? { storage_ref, sha256: 'ab'.repeat(32) } : {}) },
    context: { cwd: '.', args: {} },
  } as unknown as Envelope;
}
const textOf = (r: ReturnType<typeof toCallToolResult>) => (r.content[0] as { text: string }).text;

test('the whole text block (summary, list, closing line, storage_ref line) stays within the limits, multi-byte names counted in bytes', () => {
  const files = Array.from({ length: 500 }, (_, i) => `dir/é€${String(i).padStart(4, '0')}.h`);
  const long = `Found 500 files matching **/*.h in the workspace (showing the first 500). ${'x'.repeat(300)}`;
  for (const limits of [{ output_bytes: 51_200, output_lines: 100 }, { output_bytes: 2_000, output_lines: 2000 }, { output_bytes: 1_000, output_lines: 30 }, { output_bytes: 3_001, output_lines: 2000 }]) {
    for (const ref of ['.toolgate/runs/r_1/observations/tc.txt', undefined]) {
      const text = textOf(toCallToolResult(env(files, long, ref), [], limits));
      assert.ok(Buffer.byteLength(text) <= limits.output_bytes, `${Buffer.byteLength(text)} bytes > ${limits.output_bytes}`);
      assert.ok(text.split('\n').length <= limits.output_lines, `${text.split('\n').length} lines > ${limits.output_lines}`);
      assert.match(text, /more of these 500 paths are not shown here/);
      assert.equal(/the full list in storage_ref/.test(text), !!ref, 'the closing line names storage_ref exactly when there is one');
      const shown = text.split('\n').filter((l: string) => l.startsWith('dir/'));
      assert.ok(shown.length > 0, 'control: some paths are shown');
      assert.deepEqual(shown, files.slice(0, shown.length), 'whole names, in order');
    }
  }
  // All fit: shown whole, nothing said about a cut.
  const small = textOf(toCallToolResult(env(files.slice(0, 5), 'Found 5 files.'), [], { output_bytes: 1_000, output_lines: 30 }));
  assert.equal(small, ['Found 5 files.', '', ...files.slice(0, 5)].join('\n'));
});

test('a glob through the server with tiny policy limits: text within them, storage_ref holds every path', async (t) => {
  const tmp = tempDir('tg-rpin-');
  t.after(tmp.cleanup);
  const ws = path.join(tmp.dir, 'ws');
  mkdirSync(path.join(ws, 'src'), { recursive: true });
  for (let i = 0; i < 60; i++) writeFileSync(path.join(ws, 'src', `ñame-${i}.ts`), '');
  writeFileSync(path.join(ws, '.env'), 'API_KEY=sk-live-should-not-leak\n');
  const policy = path.join(tmp.dir, 'p.yaml');
  writeFileSync(policy, 'limits: { output_bytes: 900, output_lines: 12 }\n');
  const s = await connectStdio(['--workspace', ws, '--policy', policy, '--state-dir', path.join(tmp.dir, 'state')],
    { env: { XDG_STATE_HOME: path.join(tmp.dir, 'xs'), XDG_RUNTIME_DIR: path.join(tmp.dir, 'xr') } });
  t.after(() => s.close().catch(() => {}));
  const r = await s.client.callTool({ name: 'glob', arguments: { pattern: '**/*' } });
  assert.equal(r.isError, false, JSON.stringify(r).slice(0, 400));
  const e = r.structuredContent as { data: { files: string[]; total: number }; artifacts: { storage_ref?: string } };
  const text = (r.content as Array<{ text: string }>)[0]!.text;
  assert.ok(Buffer.byteLength(text) <= 900, `${Buffer.byteLength(text)} bytes: ${text}`);
  assert.ok(text.split('\n').length <= 12, `${text.split('\n').length} lines`);
  assert.ok(!text.includes('sk-live') && !text.includes('.env'), 'a denied file named in the text');
  assert.ok(!e.data.files.includes('.env'));
  assert.equal(e.data.files.length, 60);
  assert.ok(e.artifacts.storage_ref, 'the list did not fit: it is saved');
  assert.deepEqual(readFileSync(e.artifacts.storage_ref!, 'utf8').trim().split('\n'), e.data.files);
});

for (const engine of ['ripgrep', 'index'] as const) test(`glob (${engine} engine) and grep cancelled mid-run (rg) leave no descriptor open; finished ones neither`, { skip: skipOffLinux }, async (t) => {
  const { locateRg } = await import('../../src/tools/grep/rg.js');
  const { Harness } = await import('../../src/testing/helpers.js');
  if (!(await locateRg())) { t.skip('needs ripgrep (TOOLGATE_RG=off or rg missing)'); return; }
  const saved = process.env.TOOLGATE_GLOB_ENGINE;
  process.env.TOOLGATE_GLOB_ENGINE = engine;
  t.after(() => { if (saved === undefined) delete process.env.TOOLGATE_GLOB_ENGINE; else process.env.TOOLGATE_GLOB_ENGINE = saved; });
  const tmp = tempDir('tg-rpin-');
  t.after(tmp.cleanup);
  const ws = path.join(tmp.dir, 'ws');
  for (let d = 0; d < 60; d++) {
    mkdirSync(path.join(ws, `d${d}`, 'e', 'f'), { recursive: true });
    for (let i = 0; i < 50; i++) writeFileSync(path.join(ws, `d${d}`, i % 2 ? 'e' : 'e/f', `x${i}.h`), 'needle\n');
  }
  const h = new Harness([ws], { stateDir: path.join(tmp.dir, 'state') });
  t.after(() => h.close());
  const { settle: settleTree } = await import('../../src/testing/helpers.js');
  await settleTree([ws]);
  const glob = await h.call('glob', { pattern: '**/*.h', limit: 10_000 });
  assert.equal((glob.data as { total: number }).total, 3000, 'control: the engine lists all');
  assert.equal((glob.data as { engine: string }).engine, engine);
  await h.call('grep', { pattern: 'needle', output_mode: 'count' });
  const settle = () => new Promise((r) => setTimeout(r, 50));
  await settle();
  const before = fdCount();
  let cancelled = 0;
  for (const delay of [0, 1, 2, 5, 10, 20, 40]) {
    for (const [tool, args] of [['glob', { pattern: '**/*.h' }], ['grep', { pattern: 'needle' }]] as const) {
      const ac = new AbortController();
      setTimeout(() => ac.abort(), delay);
      const e = await h.call(tool, args, { signal: ac.signal });
      if (e.error?.code === 'Cancelled') cancelled++;
    }
  }
  await h.call('glob', { pattern: '**/*.h' });
  await settle();
  assert.ok(cancelled > 0, 'control: some calls were cancelled mid-run');
  // A cancelled call answers at once; its work may take a moment to wind down (a child's pipe, a
  // walk between two checks of the signal) on a loaded machine: what counts is that none stays open.
  for (let i = 0; i < 40 && fdCount() !== before; i++) await settle();
  assert.equal(fdCount(), before, 'descriptors left open after cancelled and finished calls');
});

test('quietFolders: a folder ABOVE the start swapped with an old mirror tree while the observations run never makes a changed folder quiet', { skip: skipOffLinux, timeout: 60_000 }, async (t) => {
  const { closeSync, constants, openSync, statSync, unlinkSync } = await import('node:fs');
  const { quietFolders } = await import('../../src/tools/glob/recheck.js');
  const { LinkCache } = await import('../../src/tools/walk/link-cache.js');
  const tmp = tempDir('tg-rpin-');
  t.after(tmp.cleanup);
  const ws = path.join(tmp.dir, 'ws');
  // The start is ws/p/x (a glob with path "p/x"); ws/m is a mirror of ws/p made long before, never touched.
  for (const top of ['p', 'm']) mkdirSync(path.join(ws, top, 'x', 'a', 'b'), { recursive: true });
  writeFileSync(path.join(ws, 'p', 'x', 'a', 'b', 'in.h'), '');
  await new Promise((r) => setTimeout(r, 60));
  const start = path.join(ws, 'p', 'x');
  const pinned = openSync(start, constants.O_RDONLY | constants.O_DIRECTORY);
  t.after(() => closeSync(pinned));
  // ws/p and ws/m trade places over and over (a folder above the start: rg, in the pinned start, never sees it).
  const { Worker } = await import('node:worker_threads');
  const w = new Worker(`
    const { renameSync } = require('node:fs');
    const { workerData: { x, m, t }, parentPort } = require('node:worker_threads');
    let stop = false;
    parentPort.on('message', () => { stop = true; });
    const loop = () => {
      for (let i = 0; i < 200 && !stop; i++) { try { renameSync(x, t); renameSync(m, x); renameSync(t, m); } catch {} }
      if (!stop) setImmediate(loop); else parentPort.postMessage('done');
    };
    loop();
  `, { eval: true, workerData: { x: path.join(ws, 'p'), m: path.join(ws, 'm'), t: path.join(ws, 't') } });
  let fooled = 0;
  let tries = 0;
  let quietA = 0;
  try {
    const end = Date.now() + 6000;
    for (let i = 0; Date.now() < end && !fooled; i++, tries++) {
      // The real a/b (under the pinned start) changes, and the cutoff is that very moment (rg starting
      // then): it must not be quiet. Every other folder, and the mirror, is older.
      writeFileSync(`/proc/self/fd/${pinned}/a/b/n${i}.h`, '');
      if (i > 0) unlinkSync(`/proc/self/fd/${pinned}/a/b/n${i - 1}.h`);
      const cutoff = statSync(`/proc/self/fd/${pinned}/a/b`).ctimeMs;
      if (i % 100 === 0) await new Promise((r) => setImmediate(r));
      const c = new LinkCache();
      const l = c.list(start, { prune: () => false, deadline: Date.now() + 5000 });
      const quiet = quietFolders({ base: start, pinnedFd: pinned, cutoff, before: (abs) => c.observed(abs, l.generation) });
      if (quiet('a')) quietA++;
      if (quiet('a/b')) {
        // Control of the claim: the real a/b changed after the cutoff.
        assert.ok(statSync(`/proc/self/fd/${pinned}/a/b`).ctimeMs >= cutoff, 'control');
        fooled++;
      }
    }
  } finally {
    const done = new Promise((r) => w.once('message', r));
    w.postMessage('stop');
    await done;
    await w.terminate();
  }
  assert.ok(tries > 20, `control: ${tries} tries`);
  assert.ok(quietA > 0, 'control: the unchanged folder a is quiet when the looks land on the real tree');
  assert.equal(fooled, 0, `a changed folder under the pinned start was taken as quiet ${fooled} times of ${tries}`);
});
