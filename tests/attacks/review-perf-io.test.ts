import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { linkSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';
import { readDirEntries } from '../../src/workspace/safe-open.js';

// review-perf, part 2: the small-file write path, list_dir's synchronous read, run_command's spawn.

type Env = { ok: boolean; status?: string; data?: any; error?: { code: string; message: string }; artifacts?: { storage_ref?: string } };
const sha = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');

const ALLOW = 'rules:\n  - { tool: "*", decision: allow }\n';

function setup(policy = ALLOW) {
  const t = tempDir('tg-rp-io-');
  const ws = path.join(t.dir, 'ws');
  const out = path.join(t.dir, 'out');
  mkdirSync(ws); mkdirSync(out);
  writeFileSync(path.join(out, 'victim.txt'), 'OUTSIDE');
  const h = new Harness([ws], { policy: policyFromYaml(policy), stateDir: path.join(t.dir, 'state') });
  return { ws, out, h, done: () => { h.close(); t.cleanup(); } };
}

// ---------------------------------------------------------------------------------------------
// 4. atomic-write-small: the target swapped, a FIFO, a hard link, a stale hash; nothing left behind.

const WRITE_ATTACKS: Array<[string, (ws: string, out: string) => void, string[]]> = [
  ['target swapped for a link to outside after the read', (ws, out) => { rmSync(path.join(ws, 'a.txt')); symlinkSync(path.join(out, 'victim.txt'), path.join(ws, 'a.txt')); }, ['PathTraversalBlocked', 'PathDenied', 'Conflict', 'StaleRead', 'NotFound', 'InvalidArguments']],
  ['folder swapped for a link to outside after the read', (ws, out) => { renameSync(path.join(ws, 'd'), path.join(ws, 'd0')); symlinkSync(out, path.join(ws, 'd')); }, ['PathTraversalBlocked', 'PathDenied', 'Conflict', 'StaleRead', 'NotFound']],
  ['target replaced by a hard link to outside', (ws, out) => { rmSync(path.join(ws, 'a.txt')); linkSync(path.join(out, 'victim.txt'), path.join(ws, 'a.txt')); }, ['PathTraversalBlocked', 'PathDenied', 'Conflict', 'StaleRead', 'ToolNotAllowed']],
  ['target replaced by a FIFO', (ws) => { rmSync(path.join(ws, 'a.txt')); spawnSync('mkfifo', [path.join(ws, 'a.txt')]); }, ['PathTraversalBlocked', 'PathDenied', 'Conflict', 'StaleRead', 'InvalidArguments', 'ToolNotAllowed']],
  ['content changed after the read (stale expected_sha256)', (ws) => { writeFileSync(path.join(ws, 'a.txt'), 'changed by someone'); }, ['Conflict', 'StaleRead']],
];

test('small-file writes: a target or folder changed after the read is refused, outside untouched, no temp file left', async (t) => {
  for (const [what, attack, codes] of WRITE_ATTACKS) {
    const s = setup();
    t.after(s.done);
    const inDir = what.startsWith('folder');
    const rel = inDir ? 'd/a.txt' : 'a.txt';
    mkdirSync(path.join(s.ws, 'd'));
    writeFileSync(path.join(s.ws, rel), 'original');
    const r = await s.h.call('read_file', { path: rel }) as Env;
    assert.ok(r.ok, `${what}: control read ${JSON.stringify(r.error)}`);
    attack(s.ws, s.out);
    const before = readdirSync(path.join(s.ws, inDir ? 'd' : '.')).sort();
    const w = await s.h.call('write_file', { path: rel, content: 'NEW', expected_sha256: sha('original') }) as Env;
    assert.equal(w.ok, false, `${what}: written`);
    assert.ok(codes.includes(w.error!.code), `${what}: ${w.error!.code} ${w.error!.message}`);
    assert.equal(readFileSync(path.join(s.out, 'victim.txt'), 'utf8'), 'OUTSIDE', what);
    assert.deepEqual(readdirSync(path.join(s.ws, inDir ? 'd' : '.')).sort(), before, `${what}: files left behind`);
    assert.deepEqual(readdirSync(s.out).sort(), ['victim.txt'], `${what}: files left outside`);
  }
});

test('small-file writes: controls (new file, replace after read, edit) still work and leave no temp file', async (t) => {
  const s = setup();
  t.after(s.done);
  assert.ok((await s.h.call('write_file', { path: 'n.txt', content: 'one' }) as Env).ok);
  assert.ok((await s.h.call('read_file', { path: 'n.txt' }) as Env).ok);
  const w = await s.h.call('write_file', { path: 'n.txt', content: 'two', expected_sha256: sha('one') }) as Env;
  assert.ok(w.ok, JSON.stringify(w.error));
  const e = await s.h.call('edit_file', { path: 'n.txt', old_string: 'two', new_string: 'three' }) as Env;
  assert.ok(e.ok, JSON.stringify(e.error));
  assert.equal(readFileSync(path.join(s.ws, 'n.txt'), 'utf8'), 'three');
  assert.deepEqual(readdirSync(s.ws), ['n.txt']);
});

test('small-file writes: a protected or denied path is refused, even as the target of a link', async (t) => {
  const s = setup(`${ALLOW}paths:\n  deny: ["priv/**"]\n`);
  t.after(s.done);
  mkdirSync(path.join(s.ws, 'priv'));
  writeFileSync(path.join(s.ws, 'priv', 's.txt'), 'S');
  symlinkSync(path.join(s.ws, 'priv'), path.join(s.ws, 'pl'));
  for (const p of ['.env', 'priv/s.txt', 'pl/s.txt', '.git/config', '.git/hooks/pre-commit', 'x/../.env']) {
    const w = await s.h.call('write_file', { path: p, content: 'X', create_dirs: true }) as Env;
    assert.equal(w.ok, false, `${p} written`);
  }
  assert.equal(readFileSync(path.join(s.ws, 'priv', 's.txt'), 'utf8'), 'S');
  assert.deepEqual(readdirSync(s.ws).sort(), ['pl', 'priv']);
});

// ---------------------------------------------------------------------------------------------
// 3. list_dir: the synchronous first 1,000 entries and the asynchronous rest judged alike.

test('readDirEntries: the synchronous part and the asynchronous rest give exactly readdir\'s entries', async (t) => {
  const tmp = tempDir('tg-rp-rd-');
  t.after(tmp.cleanup);
  for (let i = 0; i < 40; i++) writeFileSync(path.join(tmp.dir, `f${i}`), '');
  mkdirSync(path.join(tmp.dir, 'sub'));
  symlinkSync('nowhere', path.join(tmp.dir, 'ln'));
  const want = readdirSync(tmp.dir, { withFileTypes: true }).map((d) => `${d.name}:${d.isDirectory()}:${d.isSymbolicLink()}`).sort();
  for (const max of [1, 2, 20, 41, 42, 43, 1000]) {
    const got = (await readDirEntries(tmp.dir, max)).map((d) => `${d.name}:${d.isDirectory()}:${d.isSymbolicLink()}`).sort();
    assert.deepEqual(got, want, `syncMax ${max}`);
  }
});

test('list_dir past 1,000 entries: denied, secret and asked entries never listed, counts as for a small folder', async (t) => {
  const s = setup('rules:\n  - { tool: "*", path: "big/ask*", decision: ask }\n  - { tool: "*", decision: allow }\npaths:\n  deny: ["big/priv*"]\n');
  t.after(s.done);
  const big = path.join(s.ws, 'big');
  mkdirSync(big);
  for (let i = 0; i < 1100; i++) writeFileSync(path.join(big, `f${String(i).padStart(4, '0')}`), '');
  for (let i = 0; i < 30; i++) { writeFileSync(path.join(big, `priv${i}`), ''); writeFileSync(path.join(big, `ask${i}`), ''); writeFileSync(path.join(big, `k${i}.pem`), ''); }
  writeFileSync(path.join(big, '.env'), 'S=1');
  const r = await s.h.call('list_dir', { path: 'big', limit: 2000, hidden: true }) as Env;
  assert.ok(r.ok, JSON.stringify(r.error));
  const names: string[] = r.data.entries.map((e: { name: string }) => e.name);
  assert.equal(names.length, 1100, 'only the 1,100 plain files');
  for (const n of names) assert.match(n, /^f\d{4}$/);
  const text = JSON.stringify(r.data);
  for (const x of ['priv', 'ask1', '.pem', '.env']) assert.ok(!text.includes(x), `${x} in ${text.slice(0, 300)}`);
});

// ---------------------------------------------------------------------------------------------
// 7. run_command via node:child_process: closed stdout, background children, spawn failure, stdin, spill.

test('run_command: a command that closes stdout and keeps running, or leaves a child holding the pipes, ends at its timeout', async (t) => {
  const s = setup();
  t.after(s.done);
  for (const cmd of ['exec >&- 2>&-; sleep 30', '(sleep 30 &) ; echo started', 'sleep 30 & echo bg']) {
    const t0 = Date.now();
    const r = await s.h.call('run_command', { command: cmd, timeout_ms: 1500 }) as Env;
    const took = Date.now() - t0;
    assert.ok(took < 15_000, `${cmd}: took ${took} ms`);
    assert.ok(r.ok || r.error?.code === 'Timeout', `${cmd}: ${JSON.stringify(r.error)}`);
  }
});

test('run_command: stdin reaches the command; a missing cwd is a clear error; a large output spills whole (the file is exactly the output, its sha256 as reported)', async (t) => {
  const s = setup();
  t.after(s.done);
  const r = await s.h.call('run_command', { command: 'cat; echo', stdin: 'hello-in' }) as Env;
  assert.ok(r.ok, JSON.stringify(r.error));
  assert.match(JSON.stringify(r.data), /hello-in/);
  const c = await s.h.call('run_command', { command: 'true', cwd: 'missing-folder' }) as Env;
  assert.equal(c.ok, false);
  assert.ok(['NotFound', 'InvalidArguments'].includes(c.error!.code), `${c.error!.code}: ${c.error!.message}`);
  const big = await s.h.call('run_command', { command: 'seq 1 400000' }) as Env;
  assert.ok(big.ok, JSON.stringify(big.error));
  const ref = big.artifacts?.storage_ref;
  assert.ok(ref, 'output spilled');
  const file = path.isAbsolute(ref) ? ref : path.join(s.ws, ref);
  const want = spawnSync('seq', ['1', '400000'], { maxBuffer: 1 << 24 }).stdout.toString();
  const got = readFileSync(file, 'utf8');
  assert.equal(got.length, want.length, 'the spill holds exactly the output');
  assert.ok(got === want, 'the spill holds exactly the output');
  const art = big.artifacts as { sha256?: string };
  assert.equal(art.sha256?.replace(/^sha256:/, ''), sha(readFileSync(file)), 'artifacts.sha256 is the file\'s');
});
