// Second review of glob's index engine (helper-57). The index read each folder's ignore files by
// path, the start's own before the start was pinned: a folder ABOVE the start (which the proof does
// not cover) swapped for a link to outside at that moment let an outside .gitignore decide the
// answer, while the call still said `engine: index` (20 of 15,120 racing calls). Now they are read
// through the pinned start. Also: the pattern's last segment used as a pre-filter dropped a file
// named like the pattern itself (`{a,b}.txt`, which picomatch matches), and a folder a proven
// parent listed that was gone when looked at emptied the answer silently.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import type { Envelope } from '../../src/core/envelope.js';
import { Harness, settle, tempDir, withEngine, writeIn } from '../../src/testing/helpers.js';
import { LinkCache } from '../../src/tools/walk/link-cache.js';

process.env.TOOLGATE_GLOB_WALK_MAX = '0';
const skipOffLinux = process.platform !== 'linux' ? 'renameat2 and /proc: Linux only' : false;
type Glob = Envelope & { data: { files: string[]; total: number; engine: string } };

// Exchanges a folder with a symbolic link (renameat2 RENAME_EXCHANGE), holds it `hold` µs, swaps back.
const TOGGLE = `
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
a, b, hold, stop = sys.argv[1].encode(), sys.argv[2].encode(), int(sys.argv[3]), sys.argv[4]
while not os.path.exists(stop):
    libc.renameat2(-100, a, -100, b, 2)
    t = time.perf_counter() + hold / 1e6
    while time.perf_counter() < t: pass
    libc.renameat2(-100, a, -100, b, 2)
    time.sleep(0.0003)
`;
const hasRenameat2 = () => spawnSync('python3', ['-c', 'import ctypes; ctypes.CDLL(None).renameat2'], { stdio: 'ignore' }).status === 0;

test('index: an ignore file outside, reached through a folder above the start swapped for a link, never decides an index answer', { skip: skipOffLinux, timeout: 90_000 }, async (t) => {
  if (!hasRenameat2()) return t.skip('needs python3 with renameat2 (RENAME_EXCHANGE) to race the swap');
  const d = tempDir('tg-rix2-');
  t.after(d.cleanup);
  const ws = `${d.dir}/ws`;
  const out = `${d.dir}/out`;
  for (let i = 0; i < 5; i++) writeIn(ws, `p/sub/k${i}.txt`);
  for (let k = 0; k < 40; k++) { writeIn(ws, `p/sub/d${k}/.gitignore`, 'nothing\n'); writeIn(ws, `p/sub/d${k}/k.txt`); }
  // Outside: rules that would hide the start's k*.txt, and every .txt of each subfolder.
  writeIn(out, 'q/sub/.gitignore', 'k*.txt\n');
  for (let k = 0; k < 40; k++) writeIn(out, `q/sub/d${k}/.gitignore`, '*.txt\n');
  symlinkSync(`${out}/q`, `${ws}/pl`);
  const h = new Harness([ws]);
  t.after(() => h.close());
  await settle([ws]);
  const run = () => withEngine('index', () => h.call('glob', { pattern: '**/*.txt', path: 'p/sub' })) as Promise<Glob>;
  const calm = await run();
  assert.equal(calm.data.engine, 'index', 'control: on a settled tree the index answers');
  assert.equal(calm.data.total, 45);
  const stop = `${d.dir}/stop`;
  const toggler = spawn('python3', ['-c', TOGGLE, `${ws}/p`, `${ws}/pl`, '20', stop], { stdio: 'ignore' });
  const wrong: string[] = [];
  let runs = 0;
  let indexRuns = 0;
  try {
    const end = Date.now() + 8000;
    while (Date.now() < end) {
      const r = await run();
      runs++;
      if (!r.ok || r.data.engine !== 'index') continue;
      indexRuns++;
      if (r.data.total !== 45) wrong.push(`total ${r.data.total}`);
    }
  } finally {
    writeFileSync(stop, '');
    await new Promise((res) => toggler.on('exit', res));
  }
  assert.deepEqual(wrong.slice(0, 3), [], `${wrong.length} of ${indexRuns} index answers (${runs} calls) applied an outside ignore file`);
  assert.ok(indexRuns > 0, `control: some calls were answered by the index (${runs} calls)`);
});

test('index: a file named like the pattern itself (picomatch matches it) is found, as by the walker', async (t) => {
  const d = tempDir('tg-rix2-');
  t.after(d.cleanup);
  const ws = `${d.dir}/ws`;
  for (const f of ['a.txt', 'b.txt', '{a,b}.txt', 'sub/a.txt', 'sub/{a,b}.txt', 'c.txt']) writeIn(ws, f);
  // State outside the workspace: the audit's first write would otherwise change the root folder.
  const h = new Harness([ws], { stateDir: `${d.dir}/state` });
  t.after(() => h.close());
  await settle([ws]);
  for (const pattern of ['{a,b}.txt', 'sub/{a,b}.txt', '**/{a,b}.txt']) {
    const walker = await withEngine('builtin', () => h.call('glob', { pattern })) as Glob;
    const index = await withEngine('index', () => h.call('glob', { pattern })) as Glob;
    assert.equal(index.data.engine, 'index');
    assert.deepEqual(index.data.files, walker.data.files, pattern);
    // picomatch takes a path equal to the whole pattern: `{a,b}.txt`, `sub/{a,b}.txt`, not under `**/`.
    if (!pattern.startsWith('**')) assert.ok(walker.data.files.some((f) => f.endsWith('{a,b}.txt')), `control: the walker lists the literal name (${pattern})`);
  }
});

test('link cache: a folder admitted but gone when looked at is reported (the index then lets the walker answer); an unadmitted one is never looked at', (t) => {
  const d = tempDir('tg-rix2-');
  t.after(d.cleanup);
  for (const f of ['a/b/x.txt', 'a/c/y.txt', 'secret/z.txt']) writeIn(d.dir, f);
  const c = new LinkCache(0);
  const gone: string[] = [];
  const looked: string[] = [];
  const l = c.list(d.dir, {
    prune: () => false, deadline: Date.now() + 10_000,
    admit: (rel) => { if (rel === 'a/b') rmSync(`${d.dir}/a/b`, { recursive: true }); return rel !== 'secret'; },
    enter: (rel) => { looked.push(rel); return true; },
    gone: (rel) => { gone.push(rel); },
  });
  assert.equal(l.timedOut || l.aborted, false);
  assert.deepEqual(gone, ['a/b']);
  assert.ok(!looked.includes('secret'), 'an unadmitted folder is not read');
  assert.ok(looked.includes('a/c'));
});

// The ignore files ABOVE the start (ancestorIgnores) were read by path by every engine (and list_dir):
// the start's parent swapped for a link to outside while they were read applied an outside .gitignore.
for (const engine of ['index', 'builtin'] as const) {
  test(`glob (${engine}): an ignore file above the start is never read through a folder swapped for a link`, { skip: skipOffLinux }, async (t) => {
    const { renameSync, unlinkSync, lstatSync } = await import('node:fs');
    const { globTool } = await import('../../src/tools/glob/glob.js');
    const d = tempDir('tg-rix2-');
    t.after(d.cleanup);
    const ws = `${d.dir}/ws`;
    const out = `${d.dir}/out`;
    for (let i = 0; i < 5; i++) writeIn(ws, `p/sub/k${i}.txt`);
    // Outside rules that would hide three of the five: an answer of k3, k4 alone shows they applied.
    writeIn(out, 'q/.gitignore', 'k[0-2].txt\n');
    writeIn(out, 'q/sub/OUTSIDE.txt');
    const h = new Harness([ws], { stateDir: `${d.dir}/state` });
    t.after(() => h.close());
    await settle([ws]);
    const restore = () => { if (lstatSync(`${ws}/p`).isSymbolicLink()) { unlinkSync(`${ws}/p`); renameSync(`${ws}/p.real`, `${ws}/p`); } };
    // A concurrent process winning the race: p is a link to out/q from the start of the call until
    // the outside rule is compiled (it was read), then put back; if it is never read, until the end.
    const { IgnoreCompileCache } = await import('../../src/tools/walk/ignore-cache.js');
    const exec = globTool.execute;
    const get = IgnoreCompileCache.prototype.get;
    (globTool as { execute: unknown }).execute = async (...a: unknown[]) => {
      renameSync(`${ws}/p`, `${ws}/p.real`);
      symlinkSync(`${out}/q`, `${ws}/p`);
      return (exec as (...x: unknown[]) => unknown).apply(globTool, a);
    };
    IgnoreCompileCache.prototype.get = function (rules: string) {
      if (rules.startsWith('k[0-2]')) restore();
      return get.call(this, rules);
    };
    let r: Glob;
    try { r = await withEngine(engine, () => h.call('glob', { pattern: '**/*.txt', path: 'p/sub' })) as Glob; } finally {
      (globTool as { execute: unknown }).execute = exec;
      IgnoreCompileCache.prototype.get = get;
      restore();
    }
    // Refused (the start is reached through a link), nothing (the walker could not open the start
    // while it was a link), or all five: never the two an outside rule leaves, never an outside name.
    if (r.ok) {
      assert.ok(!r.data.files.some((f) => f.includes('OUTSIDE')), JSON.stringify(r.data.files));
      assert.ok(r.data.total === 5 || r.data.total === 0, `an outside .gitignore decided the answer: ${JSON.stringify(r.data.files)}`);
    }
    else assert.ok(['PathTraversalBlocked', 'NotFound'].includes(r.error?.code ?? ''), JSON.stringify(r.error));
  });
}
