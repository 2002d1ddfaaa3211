// Review (attacker) of three performance changes:
//  1. the quiet-folder margin (ctimeMargin: FINE_MS 100 ms on fine-grained ctimes, RACY_MS 2 s
//     otherwise): changes made while the lister runs, of every kind, on ext4 and tmpfs, on a tree
//     settled only ~400 ms (inside the window the old 2 s margin never trusted);
//  2. openDir synchronous on Linux, the walker on readDirEntries, grep's DenyFilter on the
//     compiled deny list: FIFOs where a folder is expected (never blocking the event loop), a
//     folder swapped for a FIFO while tools run, deny rules grep must honour exactly as read_file;
//  3. reclaimAfterLargeFile (--expose-gc set, then off): no gc global reachable afterwards, and
//     what the forced collection costs per call.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, closeSync, constants, existsSync, linkSync, mkdirSync, mkdtempSync, openSync, realpathSync, renameSync, rmSync, rmdirSync, statfsSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { test } from 'node:test';
import { runInNewContext } from 'node:vm';
import type { Envelope } from '../../src/core/envelope.js';
import { Harness, policyFromYaml, startFolderSwapper, startRaceLoop, tempDir } from '../../src/testing/helpers.js';
import { FINE_MS, ctimeMargin, quietFolders } from '../../src/tools/glob/recheck.js';
import { locateRg } from '../../src/tools/grep/rg.js';
import { LinkCache } from '../../src/tools/walk/link-cache.js';

const linux = process.platform === 'linux';
const skipOffLinux = linux ? false : 'needs Linux (/proc/self/fd, statfs): elsewhere no folder is quiet';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const TMPFS = 0x01021994;
const hasMkfifo = linux && spawnSync('mkfifo', ['--version']).status === 0;

/** Temporary folders on each local file system at hand: os.tmpdir() and, when it is a tmpfs, /dev/shm. */
function fileSystems(): { label: string; make: () => { dir: string; cleanup: () => void } }[] {
  const out = [{ label: `tmpdir (${linux ? statfsSync(tempDirRoot()).type.toString(16) : '?'})`, make: () => tempDir('tg-review-margin-') }];
  try {
    if (linux && statfsSync('/dev/shm').type === TMPFS) {
      out.push({ label: 'tmpfs (/dev/shm)', make: () => { const dir = realpathSync(mkdtempSync('/dev/shm/tg-review-margin-')); return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) }; } });
    }
  } catch { /* no /dev/shm */ }
  return out;
}
function tempDirRoot() { const t = tempDir('tg-probe-'); const d = path.dirname(t.dir); t.cleanup(); return d; }

function mkfifo(p: string) {
  const r = spawnSync('mkfifo', [p]);
  if (r.status !== 0) throw new Error(`mkfifo ${p}: ${r.stderr}`);
}

// ---------------------------------------------------------------------------------------------
// 1. The quiet-folder margin
// ---------------------------------------------------------------------------------------------

function quietTree(root: string) {
  const ws = path.join(root, 'ws');
  const out = path.join(root, 'outside');
  for (const d of ['a/b', 'c', 'q', 'secret', 'copy/b']) mkdirSync(path.join(ws, d), { recursive: true });
  mkdirSync(out);
  writeFileSync(path.join(ws, 'a/b/in.h'), 'needle inside\n');
  writeFileSync(path.join(ws, 'c/x.h'), 'needle c\n');
  writeFileSync(path.join(ws, 'q/y.h'), 'needle q\n');
  writeFileSync(path.join(ws, 'secret/in.h'), 'needle SECRET-DENIED\n');
  writeFileSync(path.join(out, 'in.h'), 'needle SECRET-OUTSIDE\n');
  writeFileSync(path.join(out, 'id_rsa.h'), 'needle SECRET-ONLY-OUTSIDE\n');
  return { ws, out };
}

/** Changes to a/b (or to a folder on its way) made after the lister started; each must leave `dir` not quiet. */
const MUTATIONS: [label: string, dir: string, change: (ws: string, out: string) => void][] = [
  ['a file created', 'a/b', (ws) => writeFileSync(path.join(ws, 'a/b/new.h'), '')],
  ['a file removed', 'a/b', (ws) => unlinkSync(path.join(ws, 'a/b/in.h'))],
  ['a file renamed within the folder', 'a/b', (ws) => renameSync(path.join(ws, 'a/b/in.h'), path.join(ws, 'a/b/in2.h'))],
  ['a file renamed and renamed back', 'a/b', (ws) => { renameSync(path.join(ws, 'a/b/in.h'), path.join(ws, 'a/b/t')); renameSync(path.join(ws, 'a/b/t'), path.join(ws, 'a/b/in.h')); }],
  ['a file moved in from another folder', 'a/b', (ws) => renameSync(path.join(ws, 'c/x.h'), path.join(ws, 'a/b/x.h'))],
  ['a file moved out', 'a/b', (ws) => renameSync(path.join(ws, 'a/b/in.h'), path.join(ws, 'c/in.h'))],
  ['a file replaced by rename over it', 'a/b', (ws) => { writeFileSync(path.join(ws, 'c/r.h'), ''); renameSync(path.join(ws, 'c/r.h'), path.join(ws, 'a/b/in.h')); }],
  ['a hard link to an outside file placed', 'a/b', (ws, out) => linkSync(path.join(out, 'id_rsa.h'), path.join(ws, 'a/b/id_rsa.h'))],
  ['a hard link to an outside file placed and removed', 'a/b', (ws, out) => { linkSync(path.join(out, 'id_rsa.h'), path.join(ws, 'a/b/id_rsa.h')); unlinkSync(path.join(ws, 'a/b/id_rsa.h')); }],
  ['a symlink placed and removed', 'a/b', (ws, out) => { symlinkSync(out, path.join(ws, 'a/b/l')); unlinkSync(path.join(ws, 'a/b/l')); }],
  ['a subfolder made and removed', 'a/b', (ws) => { mkdirSync(path.join(ws, 'a/b/x')); rmdirSync(path.join(ws, 'a/b/x')); }],
  ['chmod of the folder (and back)', 'a/b', (ws) => { chmodSync(path.join(ws, 'a/b'), 0o700); chmodSync(path.join(ws, 'a/b'), 0o755); }],
  ['a/b swapped for a link to outside and back', 'a/b', (ws, out) => {
    renameSync(path.join(ws, 'a/b'), path.join(ws, 'a/b.d')); symlinkSync(out, path.join(ws, 'a/b'));
    unlinkSync(path.join(ws, 'a/b')); renameSync(path.join(ws, 'a/b.d'), path.join(ws, 'a/b'));
  }],
  ['a denied folder renamed into a/b\'s place and back', 'a/b', (ws) => {
    renameSync(path.join(ws, 'a/b'), path.join(ws, 'a/b.d')); renameSync(path.join(ws, 'secret'), path.join(ws, 'a/b'));
    renameSync(path.join(ws, 'a/b'), path.join(ws, 'secret')); renameSync(path.join(ws, 'a/b.d'), path.join(ws, 'a/b'));
  }],
  ['the parent a swapped with an old copy and back (a/b itself untouched)', 'a/b', (ws) => {
    renameSync(path.join(ws, 'a'), path.join(ws, 'a.d')); renameSync(path.join(ws, 'copy'), path.join(ws, 'a'));
    renameSync(path.join(ws, 'a'), path.join(ws, 'copy')); renameSync(path.join(ws, 'a.d'), path.join(ws, 'a'));
  }],
  ['a/b moved to another parent and back', 'a/b', (ws) => { renameSync(path.join(ws, 'a/b'), path.join(ws, 'c/b')); renameSync(path.join(ws, 'c/b'), path.join(ws, 'a/b')); }],
  ...(hasMkfifo ? [['a FIFO placed', 'a/b', (ws: string) => mkfifo(path.join(ws, 'a/b/pipe'))] as [string, string, (ws: string, out: string) => void]] : []),
];

for (const fsys of fileSystems()) {
  test(`margin [${fsys.label}]: every kind of change made after the lister started leaves the folder not quiet, on a tree settled only 400 ms (the old 2 s margin never trusted it; controls are quiet)`, { skip: skipOffLinux, timeout: 60_000 }, async (t) => {
    const roots = MUTATIONS.map(() => fsys.make());
    t.after(() => roots.forEach((r) => r.cleanup()));
    const trees = roots.map((r) => quietTree(r.dir));
    await sleep(400);
    const ctimeC = statSync(path.join(trees[0]!.ws, 'c')).ctimeMs;
    assert.equal(ctimeMargin(ctimeC), FINE_MS, `control: this file system stamps fine-grained ctimes (c: ${ctimeC})`);
    const missed: string[] = [];
    for (const [i, [label, dir, change]] of MUTATIONS.entries()) {
      const { ws, out } = trees[i]!;
      const fd = openSync(ws, constants.O_RDONLY | constants.O_DIRECTORY);
      try {
        // As grep: `started` before the lister, no before-look. As glob: a LinkCache look after the start, before the change.
        const started = Date.now();
        const cache = new LinkCache();
        const l = cache.list(ws, { prune: () => false, deadline: Date.now() + 60_000 });
        change(ws, out);
        const grepLike = quietFolders({ base: ws, pinnedFd: fd, started }).all([dir, 'q']);
        const globLike = quietFolders({ base: ws, pinnedFd: fd, started, before: (abs) => cache.observed(abs, l.generation) }).all([dir, 'q']);
        if (grepLike.has(dir)) missed.push(`${label} (grep's check)`);
        if (globLike.has(dir)) missed.push(`${label} (glob's check)`);
        // Control: q (no change touches it) is quiet unless the change touched the root (then nothing is).
        const rootChanged = statSync(ws).ctimeMs >= started - FINE_MS;
        if (!rootChanged) assert.ok(grepLike.has('q') && globLike.has('q'), `control (${label}): q, untouched and 400 ms old, is quiet`);
      } finally { closeSync(fd); }
    }
    assert.deepEqual(missed, [], 'a change made while the lister ran passed as quiet');
  });

  test(`margin [${fsys.label}]: the RENAME_EXCHANGE of a/b with a denied folder (renameat2) after the start leaves a/b not quiet`, { skip: skipOffLinux }, async (t) => {
    const py = spawnSync('python3', ['-c', 'import ctypes'], { encoding: 'utf8' });
    if (py.status !== 0) return t.skip('needs python3 with ctypes (renameat2 is not in node:fs)');
    const r = fsys.make();
    t.after(r.cleanup);
    const { ws } = quietTree(r.dir);
    await sleep(400);
    const fd = openSync(ws, constants.O_RDONLY | constants.O_DIRECTORY);
    t.after(() => closeSync(fd));
    const started = Date.now();
    // renameat2(AT_FDCWD, a/b, AT_FDCWD, secret, RENAME_EXCHANGE) twice: the tree ends as it began.
    const x = spawnSync('python3', ['-c', `
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
f = libc.renameat2
for _ in range(2):
    if f(-100, sys.argv[1].encode(), -100, sys.argv[2].encode(), 2) != 0: sys.exit(os.strerror(ctypes.get_errno()))
`, path.join(ws, 'a/b'), path.join(ws, 'secret')], { encoding: 'utf8' });
    if (x.status !== 0) return t.skip(`needs renameat2 RENAME_EXCHANGE here: ${x.stderr.trim()}`);
    const q = quietFolders({ base: ws, pinnedFd: fd, started }).all(['a/b', 'secret', 'c']);
    assert.equal(q.has('a/b'), false, 'a/b exchanged with secret/ and back passed as quiet');
    assert.equal(q.has('secret'), false, 'secret exchanged and back passed as quiet');
    assert.equal(q.has('c'), false, 'control: the exchange in the root makes c (whose way is the root) not quiet either');
  });
}

type Files = Envelope & { data?: { files?: string[]; engine?: string; matches?: { text: string; file?: string }[] }; stats?: { unchanged_folder_files?: number } };

for (const fsys of fileSystems()) for (const engine of ['ripgrep', 'index'] as const) {
  test(`margin [${fsys.label}, glob: ${engine}]: grep and glob race swappers on a tree settled 400 ms (quiet folders taken): a link to outside, a denied folder renamed into place, a hard link flickering in — nothing outside or denied reaches the answer`, { skip: skipOffLinux, timeout: 90_000 }, async (t) => {
    const rg = await locateRg();
    if (!rg) return t.skip('needs ripgrep (rg): TOOLGATE_RG is off or rg is not on PATH');
    const r = fsys.make();
    t.after(r.cleanup);
    const { ws, out } = quietTree(r.dir);
    for (let i = 0; i < 10; i++) writeFileSync(path.join(ws, 'c', `f${i}.h`), 'needle c\n');
    writeFileSync(path.join(out, 'flick.h'), 'needle SECRET-HARDLINK\n');
    await sleep(400);
    const saved = { walk: process.env.TOOLGATE_GLOB_WALK_MAX, rg: process.env.TOOLGATE_RG, engine: process.env.TOOLGATE_GLOB_ENGINE };
    process.env.TOOLGATE_GLOB_WALK_MAX = '0';
    process.env.TOOLGATE_RG = rg;
    process.env.TOOLGATE_GLOB_ENGINE = engine;
    const state = tempDir('tg-review-margin-state-');
    const policy = policyFromYaml('paths:\n  deny: ["**/secret/**"]\nrules:\n  - tool: "*"\n    decision: allow\n');
    const h = new Harness([ws], { stateDir: state.dir, policy });
    t.after(() => {
      h.close(); state.cleanup();
      if (saved.walk === undefined) delete process.env.TOOLGATE_GLOB_WALK_MAX; else process.env.TOOLGATE_GLOB_WALK_MAX = saved.walk;
      if (saved.rg === undefined) delete process.env.TOOLGATE_RG; else process.env.TOOLGATE_RG = saved.rg;
      if (saved.engine === undefined) delete process.env.TOOLGATE_GLOB_ENGINE; else process.env.TOOLGATE_GLOB_ENGINE = saved.engine;
    });
    const first = await h.call('glob', { pattern: '**/*.h' }) as Files;
    assert.equal(first.data?.engine, engine);
    assert.ok((first.stats?.unchanged_folder_files ?? 0) > 0, `control: on a tree 400 ms old quiet folders are taken (the FINE margin applies): ${JSON.stringify(first.stats)}`);
    const calm = await h.call('grep', { pattern: 'needle', output_mode: 'content' }) as Files;
    assert.ok(calm.ok && !JSON.stringify(calm.data).includes('SECRET'), `control: no secret when nothing races: ${JSON.stringify(calm.data).slice(0, 300)}`);

    const attackers: [string, () => Promise<{ stop: () => Promise<void> }>][] = [
      ['a/b swapped for a link to outside', () => startFolderSwapper(path.join(ws, 'a/b'), out)],
      ['the denied secret/ renamed into a/b\'s place and back', () => startRaceLoop("fs.renameSync(a, a + '.x'); fs.renameSync(s, a); fs.renameSync(a, s); fs.renameSync(a + '.x', a);", { a: path.join(ws, 'a/b'), s: path.join(ws, 'secret') })],
      ['a hard link to an outside file placed in c/ and removed', () => startRaceLoop('fs.linkSync(o, p); fs.unlinkSync(p);', { o: path.join(out, 'flick.h'), p: path.join(ws, 'c/flick.h') })],
    ];
    const leaks: string[] = [];
    let runs = 0;
    let insideSeen = 0;
    for (const [label, start] of attackers) {
      const racer = await start();
      try {
        const end = Date.now() + 1500;
        while (Date.now() < end) {
          for (const [tool, args] of [['grep', { pattern: 'needle', output_mode: 'content' }], ['grep', { pattern: 'needle', output_mode: 'count' }], ['glob', { pattern: '**/*.h' }]] as const) {
            const env = await h.call(tool, args) as Files;
            runs++;
            if (!env.ok) continue;
            const shown = JSON.stringify(env.data);
            // Outside content (a link swapped in), a hard link's content, and any name under the denied
            // secret/ must never show. (secret/'s file read under a/b's name while it stood there is
            // not a leak: deny rules are by name, and read_file a/b/in.h would return it as well.)
            if (/SECRET-(OUTSIDE|ONLY-OUTSIDE|HARDLINK)|id_rsa|"secret\/|"file":"secret/.test(shown)) leaks.push(`${label}: ${tool} ${shown.slice(0, 200)}`);
            if (shown.includes('needle inside') || (tool === 'glob' && shown.includes('a/b/in.h'))) insideSeen++;
          }
        }
      } finally { await racer.stop(); }
    }
    assert.deepEqual(leaks.slice(0, 5), [], `${leaks.length} of ${runs} answers held an outside, denied or hard-linked file`);
    assert.ok(runs > 15 && insideSeen > 0, `control: ${runs} calls ran, the inside file was found ${insideSeen} times`);
  });
}

// ---------------------------------------------------------------------------------------------
// 2. openDir synchronous on Linux, the walker on readDirEntries, DenyFilter on ws.rules.denyMatch
// ---------------------------------------------------------------------------------------------

/** Runs `body` with the event loop's longest stall measured (a synchronous open that blocks would show here, or hang the test). */
async function maxStallMs(body: () => Promise<void>): Promise<number> {
  const m = monitorEventLoopDelay({ resolution: 10 });
  m.enable();
  try { await body(); } finally { m.disable(); }
  return m.max / 1e6;
}

function harnessFor(t: { after: (f: () => void) => void }, ws: string, yaml = 'rules:\n  - tool: "*"\n    decision: allow\n') {
  const state = tempDir('tg-review-margin-state-');
  const h = new Harness([ws], { stateDir: state.dir, policy: policyFromYaml(yaml) });
  t.after(() => { h.close(); state.cleanup(); });
  return h;
}

const DIR_TOOLS = (p: string): [string, Record<string, unknown>][] => [
  ['list_dir', { path: p }], ['list_dir', { path: p, hidden: true }], ['glob', { pattern: '**/*', path: p, hidden: true }],
  ['grep', { pattern: 'needle', path: p, hidden: true }], ['grep', { pattern: 'needle', path: p, output_mode: 'content', hidden: true }],
];

test('a FIFO (and, as root, a character device) where a folder is expected, or inside a walked folder: every walking tool answers at once, the event loop never stalls', { skip: hasMkfifo ? false : 'needs Linux and mkfifo', timeout: 60_000 }, async (t) => {
  const d = tempDir('tg-review-margin-fifo-');
  t.after(d.cleanup);
  const ws = path.join(d.dir, 'ws');
  mkdirSync(path.join(ws, 'd/sub'), { recursive: true });
  writeFileSync(path.join(ws, 'd/sub/real.txt'), 'needle real\n');
  mkfifo(path.join(ws, 'pipe'));
  // FIFOs inside the walked folder, under names every tool opens or reads: ignore files, a searched file, a folder-looking name.
  // (FIFOs named as ignore files: the next test.)
  for (const n of ['d/sub/data.txt', 'd/looks-like-dir', 'd/sub/.hidden-fifo']) mkfifo(path.join(ws, n));
  const isRoot = process.getuid?.() === 0;
  if (isRoot) spawnSync('mknod', [path.join(ws, 'd/sub/zero.txt'), 'c', '1', '5']);
  const h = harnessFor(t, ws);
  const answers: string[] = [];
  const stall = await maxStallMs(async () => {
    for (const [tool, args] of [...DIR_TOOLS('pipe'), ...DIR_TOOLS('d'), ...DIR_TOOLS('.'), ['list_dir', { path: 'd/looks-like-dir' }], ['read_file', { path: 'pipe' }]] as [string, Record<string, unknown>][]) {
      const env = await h.call(tool, args) as Envelope & { error?: { code: string } };
      answers.push(`${tool} ${JSON.stringify(args)} -> ${env.ok ? "ok" : env.error?.code} ${JSON.stringify((env as { data?: unknown }).data ?? env.text).slice(0, 300)}`);
      if (args.path === 'pipe' || args.path === 'd/looks-like-dir') assert.equal(env.ok, false, `${tool} on a FIFO must be refused: ${env.text}`);
      else assert.ok(env.ok, `${tool} ${JSON.stringify(args)}: ${env.text}`);
      if (tool === 'grep' && env.ok) assert.match(JSON.stringify((env as { data?: unknown }).data), /real\.txt/, 'control: the real file is found');
    }
  });
  assert.ok(stall < 1000, `the event loop stalled ${stall.toFixed(0)} ms (${answers.join('; ')})`);
  if (!isRoot) t.diagnostic('not root: no character device was made (mknod)');
});

test('a folder swapped for a FIFO (and back) while list_dir, glob and grep walk and open it: every call answers, none hangs, the event loop never stalls', { skip: hasMkfifo ? false : 'needs Linux and mkfifo', timeout: 60_000 }, async (t) => {
  const d = tempDir('tg-review-margin-fifo-');
  t.after(d.cleanup);
  const ws = path.join(d.dir, 'ws');
  mkdirSync(path.join(ws, 'top/d/sub'), { recursive: true });
  writeFileSync(path.join(ws, 'top/d/sub/real.txt'), 'needle real\n');
  writeFileSync(path.join(ws, 'top/other.txt'), 'needle other\n');
  mkfifo(path.join(d.dir, 'spare-fifo'));
  const h = harnessFor(t, ws);
  const racer = await startRaceLoop("fs.renameSync(dir, dir + '.x'); fs.renameSync(fifo, dir); fs.renameSync(dir, fifo); fs.renameSync(dir + '.x', dir);", { dir: path.join(ws, 'top/d'), fifo: path.join(d.dir, 'spare-fifo') });
  let runs = 0;
  let okRuns = 0;
  const codes = new Set<string>();
  let stall = 0;
  try {
    stall = await maxStallMs(async () => {
      const end = Date.now() + 2500;
      while (Date.now() < end) {
        for (const [tool, args] of [...DIR_TOOLS('top/d'), ...DIR_TOOLS('top')]) {
          const env = await h.call(tool, args) as Envelope & { error?: { code: string } };
          runs++;
          if (env.ok) okRuns++; else codes.add(`${tool}:${env.error?.code}`);
        }
      }
    });
  } finally { await racer.stop(); }
  assert.ok(stall < 1000, `the event loop stalled ${stall.toFixed(0)} ms over ${runs} calls`);
  assert.ok(runs > 20 && okRuns > 0, `control: ${runs} calls ran, ${okRuns} answered ok (refusals: ${[...codes].join(', ')})`);
  for (const c of codes) assert.match(c, /:(InvalidArguments|NotFound|PathTraversalBlocked|PathDenied)$/, `an unexpected refusal: ${c}`);
});

for (const name of ['.ignore', '.rgignore', '.gitignore']) test(`a FIFO named ${name} inside the searched folder: grep and glob still answer within 5 s and find the real file (ripgrep blocks opening it: the call waited for the 30 s time cap and found nothing)`, { skip: hasMkfifo ? false : 'needs Linux and mkfifo', timeout: 90_000 }, async (t) => {
  const d = tempDir('tg-review-margin-fifo-');
  t.after(d.cleanup);
  const ws = path.join(d.dir, 'ws');
  mkdirSync(path.join(ws, 'd/sub'), { recursive: true });
  writeFileSync(path.join(ws, 'd/sub/real.txt'), 'needle real\n');
  mkfifo(path.join(ws, 'd/sub', name));
  const saved = { walk: process.env.TOOLGATE_GLOB_WALK_MAX, cap: process.env.TOOLGATE_GREP_TIME_CAP_MS };
  process.env.TOOLGATE_GLOB_WALK_MAX = '0'; // glob through ripgrep too, when it is there
  process.env.TOOLGATE_GREP_TIME_CAP_MS = '8000'; // grep's time cap (30 s by default), so a hang costs 8 s here
  t.after(() => {
    if (saved.walk === undefined) delete process.env.TOOLGATE_GLOB_WALK_MAX; else process.env.TOOLGATE_GLOB_WALK_MAX = saved.walk;
    if (saved.cap === undefined) delete process.env.TOOLGATE_GREP_TIME_CAP_MS; else process.env.TOOLGATE_GREP_TIME_CAP_MS = saved.cap;
  });
  const h = harnessFor(t, ws);
  const slow: string[] = [];
  for (const [tool, args] of [['grep', { pattern: 'needle', path: 'd' }], ['glob', { pattern: '**/*.txt', path: 'd' }]] as const) {
    const t0 = Date.now();
    const env = await h.call(tool, args) as Envelope & { data?: { engine?: string; capped?: string | null } };
    const ms = Date.now() - t0;
    assert.ok(env.ok, env.text);
    if (!(ms < 5000 && JSON.stringify(env.data).includes('real.txt'))) slow.push(`${tool} ${JSON.stringify(args)} (engine ${env.data?.engine}) took ${ms} ms and answered ${JSON.stringify(env.data).slice(0, 240)}`);
  }
  assert.deepEqual(slow, [], 'a call hung on the FIFO');
});

test('grep (either engine) honours exactly the deny rules read_file honours: case, a trailing slash, dot names, ** in the middle, a tool rule, an absolute rule through a link retargeted after the session began', { timeout: 60_000 }, async (t) => {
  const d = tempDir('tg-review-margin-deny-');
  t.after(d.cleanup);
  const ws = path.join(d.dir, 'ws');
  const files = ['secrets/a.txt', 'SECRETS/b.txt', 'vault/x.txt', 'vaultish/x.txt', '.hidden-key.txt', 'sub/.hiddenish', 'k.pem', 'k.PEM', 'conf/deep/er/token', 'conf/token.txt',
    'blocked/z.txt', 'sub/blocked/y.txt', 'v1/keys/k.txt', 'v2/keys/k.txt', '.env', 'sub/.env.local', 'plain/ok.txt'];
  for (const f of files) { mkdirSync(path.dirname(path.join(ws, f)), { recursive: true }); writeFileSync(path.join(ws, f), `needle ${f}\n`); }
  symlinkSync('v1', path.join(ws, 'cur'));
  const yaml = `paths:\n  deny: ["**/secrets/**", "vault/", "**/.hid*", "conf/**/token", "${ws}/cur/keys/**"]\nrules:\n  - tool: "*"\n    decision: allow\n  - tool: "*"\n    path: "**/blocked/**"\n    decision: deny\n`;
  const h = harnessFor(t, ws, yaml);
  const mismatches: string[] = [];
  const compare = async (phase: string) => {
    const readable = new Set<string>();
    for (const f of files) if ((await h.call('read_file', { path: f })).ok) readable.add(f);
    assert.ok(readable.has('plain/ok.txt') && !readable.has('secrets/a.txt') && !readable.has('blocked/z.txt'), `control (${phase}): read_file allows and refuses as the rules say: ${[...readable].join(', ')}`);
    for (const args of [{ pattern: 'needle', hidden: true }, { pattern: 'needle', hidden: true, output_mode: 'content' }, { pattern: 'needle', hidden: true, output_mode: 'count' }]) {
      const env = await h.call('grep', args) as Envelope & { data?: { files?: string[]; matches?: { file: string }[]; counts?: { file: string }[]; engine: string } };
      assert.ok(env.ok, env.text);
      const got = new Set(env.data?.files ?? env.data?.matches?.map((m) => m.file) ?? env.data?.counts?.map((c) => c.file) ?? []);
      for (const f of files) if (got.has(f) !== readable.has(f)) mismatches.push(`${phase} ${env.data?.engine} ${args.output_mode ?? 'files'}: ${f} grep ${got.has(f)} read_file ${readable.has(f)}`);
    }
    const glob = await h.call('glob', { pattern: '**/*', hidden: true }) as Files;
    for (const f of files) if ((glob.data?.files ?? []).includes(f) && !readable.has(f)) mismatches.push(`${phase} glob lists denied ${f}`);
  };
  await compare('at start');
  // The link an absolute rule names is pointed elsewhere after the session's rules were compiled.
  unlinkSync(path.join(ws, 'cur'));
  symlinkSync('v2', path.join(ws, 'cur'));
  await compare('after cur -> v2');
  assert.deepEqual(mismatches, [], 'grep or glob and read_file disagree on what is denied');
});

// ---------------------------------------------------------------------------------------------
// 3. reclaimAfterLargeFile
// ---------------------------------------------------------------------------------------------

const BIG = 4 * 1024 * 1024;
function bigText(n: number) { const line = `${'y'.repeat(63)}\n`; const s = line.repeat(Math.floor(n / 64)); return s + 'z'.repeat(n - s.length); }

test('after the forced collection ran (a 4 MiB read and a 4 MiB edit), no gc function is reachable: not on globalThis, not in a new vm context, not in a worker', { skip: linux ? false : 'Linux only here', timeout: 60_000 }, async (t) => {
  if (typeof (globalThis as { gc?: unknown }).gc === 'function') return t.skip('this test process was started with --expose-gc');
  const d = tempDir('tg-review-margin-gc-');
  t.after(d.cleanup);
  writeFileSync(path.join(d.dir, 'big.txt'), `${bigText(BIG)}zzz\n`);
  const h = harnessFor(t, d.dir);
  const { PerformanceObserver, constants: pc } = await import('node:perf_hooks');
  let majors = 0;
  const obs = new PerformanceObserver((l) => { for (const e of l.getEntries()) if ((e as { detail?: { kind?: number } }).detail?.kind === pc.NODE_PERFORMANCE_GC_MAJOR) majors++; });
  obs.observe({ entryTypes: ['gc'] });
  t.after(() => obs.disconnect());
  const r = await h.call('read_file', { path: 'big.txt', encoding: 'base64' });
  assert.ok(r.ok, r.text);
  const e = await h.call('edit_file', { path: 'big.txt', old_string: 'zzz', new_string: 'ZZZ' });
  assert.ok(e.ok, e.text);
  await sleep(200);
  assert.ok(majors > 0, 'control: a major collection ran after the big read');
  assert.equal(typeof (globalThis as { gc?: unknown }).gc, 'undefined', 'globalThis.gc appeared');
  assert.equal(runInNewContext('typeof gc'), 'undefined', 'a new vm context has gc');
  assert.equal(runInNewContext('typeof globalThis.gc'), 'undefined', 'a new vm context has globalThis.gc');
  const { Worker } = await import('node:worker_threads');
  const seen = await new Promise<string>((res, rej) => {
    const w = new Worker("require('node:worker_threads').parentPort.postMessage(typeof gc)", { eval: true });
    w.once('message', (m) => { res(String(m)); void w.terminate(); });
    w.once('error', rej);
  });
  assert.equal(seen, 'undefined', 'a worker started afterwards has gc');
});

test('the forced collection is not a lever: with ~100 MB of live heap, 4 MiB reads cost at most 3x reads one byte smaller (each forced a full major GC: ~6x)', { skip: linux ? false : 'Linux only here', timeout: 120_000 }, async (t) => {
  const d = tempDir('tg-review-margin-gc-');
  t.after(d.cleanup);
  writeFileSync(path.join(d.dir, 'at.txt'), bigText(BIG));
  writeFileSync(path.join(d.dir, 'under.txt'), bigText(BIG - 1));
  const h = harnessFor(t, d.dir);
  // Live heap a long-running server can hold (caches of big trees, sessions): the major GC marks all of it.
  let ballast: { i: number; s: string }[] | null = [];
  for (let i = 0; i < 1_200_000; i++) ballast.push({ i, s: `k${i}` });
  t.after(() => { ballast = null; });
  const time = async (name: string) => {
    const t0 = performance.now();
    for (let i = 0; i < 12; i++) { const r = await h.call('read_file', { path: name, encoding: 'base64' }); assert.ok(r.ok, r.text); }
    return (performance.now() - t0) / 12;
  };
  await time('under.txt');
  const under: number[] = [];
  const at: number[] = [];
  let stall = 0;
  stall = await maxStallMs(async () => { for (let k = 0; k < 2; k++) { under.push(await time('under.txt')); at.push(await time('at.txt')); } });
  const u = Math.min(...under);
  const a = Math.min(...at);
  t.diagnostic(`per call: ${(u).toFixed(1)} ms at 4 MiB - 1, ${(a).toFixed(1)} ms at 4 MiB; longest event-loop stall ${stall.toFixed(0)} ms; heap ${(process.memoryUsage().heapUsed / 1e6).toFixed(0)} MB`);
  assert.ok(ballast!.length > 0);
  assert.ok(a < 3 * u, `a 4 MiB read cost ${a.toFixed(1)} ms, one byte less ${u.toFixed(1)} ms (${(a / u).toFixed(1)}x): every call over the threshold pays a full major GC of the whole heap`);
});
