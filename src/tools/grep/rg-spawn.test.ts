import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../../testing/helpers.js';
import { helperPidForTests, spawnRg, stopStarter, type RgChild } from './rg-spawn.js';

// Through the starter at any size of this process (it is used from HELPER_MIN_RSS up otherwise).
if (process.env.TOOLGATE_STARTER !== 'off') process.env.TOOLGATE_STARTER = 'always';
const onLinux = process.platform === 'linux';
const rg = spawnSync('rg', ['--version']).status === 0 ? 'rg' : null;
const skipHelper = !onLinux ? 'the starter process is Linux only' : process.env.TOOLGATE_STARTER === 'off' ? 'TOOLGATE_STARTER=off' : false;

function run(c: RgChild): Promise<{ out: Buffer; err: string; code: number | null; signal: string | null; error?: NodeJS.ErrnoException }> {
  const chunks: Buffer[] = [];
  let err = '';
  c.stdout.on('data', (b) => chunks.push(b));
  c.stderr?.on('data', (b) => { err += b.toString('utf8'); });
  return new Promise((resolve) => {
    c.on('error', (error) => resolve({ out: Buffer.concat(chunks), err, code: null, signal: null, error }));
    c.on('close', (code, signal) => resolve({ out: Buffer.concat(chunks), err, code, signal }));
  });
}

function alive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch { return false; }
}

async function until(what: () => boolean, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) { if (what()) return true; await new Promise((r) => setTimeout(r, 20)); }
  return what();
}

test('through the starter process, rg output arrives whole: 8 listings at once equal a direct run byte for byte', { skip: skipHelper || (rg ? false : 'needs ripgrep (rg) on PATH') }, async (t) => {
  const d = tempDir('tg-rg-spawn-');
  t.after(d.cleanup);
  // ~6,000 files: several pipe buffers of output, which rg writes as soon as it starts.
  for (let i = 0; i < 60; i++) {
    const dir = path.join(d.dir, `d${i}`);
    mkdirSync(dir);
    for (let j = 0; j < 100; j++) writeFileSync(path.join(dir, `file-with-a-longer-name-${j}.txt`), 'x');
  }
  const args = ['--no-config', '--files', '--null', '--sort=path', '.'];
  const want = spawnSync('rg', args, { cwd: d.dir, maxBuffer: 1 << 26 }).stdout;
  assert.ok(want.length > 200_000, 'the listing is larger than a pipe buffer');
  const hp = await helperPidForTests();
  assert.ok(hp, 'the starter process is ready');
  for (let round = 0; round < 3; round++) {
    const runs = await Promise.all(Array.from({ length: 8 }, () => run(spawnRg('rg', args, { cwd: d.dir, stderr: true }))));
    for (const r of runs) {
      assert.equal(r.error, undefined);
      assert.equal(r.code, 0);
      assert.equal(r.out.length, want.length);
      assert.ok(r.out.equals(want), 'the same bytes as a direct run');
    }
  }
  assert.equal(await helperPidForTests(), hp, 'one starter process served every run');
});

test('through the starter process: exit code and stderr come back; a missing program is an error with its code', { skip: skipHelper || (rg ? false : 'needs ripgrep (rg) on PATH') }, async (t) => {
  const d = tempDir('tg-rg-spawn-');
  t.after(d.cleanup);
  assert.ok(await helperPidForTests());
  const bad = await run(spawnRg('rg', ['--no-config', '(unclosed', '.'], { cwd: d.dir, stderr: true }));
  assert.equal(bad.code, 2);
  assert.match(bad.err, /regex parse error/);
  const quiet = await run(spawnRg('rg', ['--no-config', '(unclosed', '.'], { cwd: d.dir, stderr: false }));
  assert.equal(quiet.code, 2);
  assert.equal(quiet.err, '', 'stderr not asked for: none');
  const missing = await run(spawnRg(path.join(d.dir, 'no-such-rg'), [], { cwd: d.dir, stderr: true }));
  assert.equal(missing.error?.code, 'ENOENT');
  const noDir = await run(spawnRg('rg', ['--version'], { cwd: path.join(d.dir, 'gone'), stderr: true }));
  assert.equal(noDir.error?.code, 'ENOENT', 'a working directory that does not exist');
});

test('through the starter process: a kill sent before the pid is known still stops the program', { skip: skipHelper }, async () => {
  assert.ok(await helperPidForTests());
  const c = spawnRg('sleep', ['30'], { cwd: '/', stderr: false });
  let pid: number | undefined;
  c.on('spawn', (p) => { pid = p; });
  c.kill();
  const started = Date.now();
  const r = await run(c);
  assert.equal(r.signal, 'SIGKILL');
  assert.ok(Date.now() - started < 10_000);
  assert.ok(pid && !alive(pid), 'sleep is gone');
  // A kill after the end does nothing (the pid may belong to another process by now).
  c.kill();
});

test('when the starter process dies, its runs end with an error, what it started is killed, and the next start works', { skip: skipHelper }, async () => {
  const hp = await helperPidForTests();
  assert.ok(hp);
  const c = spawnRg('sleep', ['30'], { cwd: '/', stderr: true });
  const pid = await new Promise<number>((r) => c.on('spawn', r));
  const ended = run(c);
  process.kill(hp, 'SIGKILL');
  const r = await ended;
  assert.equal(r.error?.code, 'EHELPER');
  assert.ok(await until(() => !alive(pid)), 'sleep was killed with its starter gone');
  // The next start goes directly (the new starter is not ready yet), then through a new starter.
  const next = await run(spawnRg('true', [], { cwd: '/', stderr: false }));
  assert.equal(next.code, 0);
  const hp2 = await helperPidForTests();
  assert.ok(hp2 && hp2 !== hp, 'a new starter process');
  const again = await run(spawnRg('true', [], { cwd: '/', stderr: false }));
  assert.equal(again.code, 0);
});

function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

test('who starts rg: the starter with TOOLGATE_STARTER=always, this process with off', { skip: skipHelper }, async (t) => {
  const hp = await helperPidForTests();
  assert.ok(hp);
  const saved = process.env.TOOLGATE_STARTER;
  t.after(() => { process.env.TOOLGATE_STARTER = saved; });
  for (const [setting, parent] of [['always', hp], ['off', process.pid]] as const) {
    process.env.TOOLGATE_STARTER = setting;
    const c = spawnRg('sleep', ['30'], { cwd: '/', stderr: false });
    const pid = await new Promise<number>((r) => c.on('spawn', r));
    assert.equal(parentOf(pid), parent, `TOOLGATE_STARTER=${setting}`);
    const ended = run(c);
    c.kill();
    assert.equal((await ended).signal, 'SIGKILL');
  }
});

test('a /proc/self working directory is refused (the starter process would read its own descriptors)', () => {
  assert.throws(() => spawnRg('true', [], { cwd: '/proc/self/fd/3', stderr: false }), /must not be a \/proc\/self path/);
  assert.throws(() => spawnRg('true', [], { cwd: '/proc/thread-self/fd/3', stderr: false }), /must not be a \/proc\/self path/);
});

test('a process that used the starter exits on its own, writes nothing to stdout, and the starter goes with it', { skip: skipHelper }, async (t) => {
  const d = tempDir('tg-rg-spawn-');
  t.after(d.cleanup);
  const here = path.dirname(fileURLToPath(import.meta.url));
  const script = path.join(d.dir, 'use.mts');
  const pidFile = path.join(d.dir, 'helper.pid');
  writeFileSync(script, `
import { writeFileSync } from 'node:fs';
import { helperPidForTests, spawnRg } from ${JSON.stringify(path.join(here, 'rg-spawn.ts'))};
const hp = await helperPidForTests();
writeFileSync(${JSON.stringify(pidFile)}, String(hp));
const c = spawnRg('echo', ['through the starter'], { cwd: '/', stderr: false });
let out = '';
c.stdout.on('data', (b) => { out += b; });
c.on('close', (code) => { process.stderr.write('got ' + out.trim() + ' ' + code + '\\n'); });
`);
  const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (b) => { out += b; });
  child.stderr.on('data', (b) => { err += b; });
  const code = await new Promise((r) => child.on('exit', r));
  assert.equal(code, 0, err);
  assert.equal(out, '', 'nothing on stdout');
  assert.match(err, /got through the starter 0/);
  assert.ok(existsSync(pidFile));
  const hp = Number((await import('node:fs')).readFileSync(pidFile, 'utf8'));
  assert.ok(hp > 0);
  assert.ok(await until(() => !alive(hp)), 'the starter process exited with its parent');
});

test('a large server starting rg now and then starts it itself; one starting it 20 times a second or more goes through the starter', { skip: skipHelper }, async (t) => {
  const d = tempDir('tg-rg-rate-');
  t.after(d.cleanup);
  const here = path.dirname(fileURLToPath(import.meta.url));
  const script = path.join(d.dir, 'rate.mts');
  writeFileSync(script, `
import { readFileSync } from 'node:fs';
import { spawnRg, stopStarter, HELPER_MIN_RSS } from ${JSON.stringify(path.join(here, 'rg-spawn.ts'))};
// A resident set past HELPER_MIN_RSS, touched so that it is resident.
const big = Buffer.alloc(HELPER_MIN_RSS + 32 * 1024 * 1024, 1);
const parent = (pid) => Number(readFileSync('/proc/' + pid + '/stat', 'utf8').split(') ')[1].split(' ')[1]);
const start = () => new Promise((resolve, reject) => {
  const c = spawnRg('sleep', ['5'], { cwd: '/', stderr: false });
  let p = 0;
  c.on('spawn', (pid) => { p = parent(pid); c.kill(); });
  c.on('error', reject);
  c.on('close', () => resolve(p));
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const slow = [];
for (let i = 0; i < 6; i++) { slow.push(await start()); await sleep(250); }
// The burst's first 25 starts at once (the rate is reached whatever the machine's load), then one at a
// time until one goes through the starter (once launched, it is used whatever the rate).
const fast = await Promise.all(Array.from({ length: 25 }, start));
for (let i = 0; i < 300; i++) { const p = await start(); fast.push(p); if (p !== process.pid) break; await sleep(50); }
process.stderr.write(JSON.stringify({ me: process.pid, slow, fast, big: big.length }) + '\\n');
stopStarter();
`);
  const env = { ...process.env };
  delete env.TOOLGATE_STARTER;
  const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let err = '';
  child.stderr.on('data', (b) => { err += b; });
  const code = await new Promise((r) => child.on('exit', r));
  assert.equal(code, 0, err);
  const r = JSON.parse(err.trim().split('\n').pop()!) as { me: number; slow: number[]; fast: number[] };
  assert.deepEqual(r.slow, r.slow.map(() => r.me), 'four starts a second: each started by the process itself');
  assert.ok(r.fast.slice(0, 19).every((p) => p === r.me), 'the first starts of a burst, before the rate is reached, run directly');
  const last = r.fast[r.fast.length - 1]!;
  assert.notEqual(last, r.me, `a burst goes through the starter once it is ready: ${JSON.stringify(r.fast)}`);
});

test.after(() => stopStarter());
