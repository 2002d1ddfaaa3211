// Review of list_dir's chdir (src/workspace/dir-stat.ts): the process steps into the listed folder
// and back. What must hold: no listing reports anything of another folder, the process never stays
// inside a listed folder, no descriptor is left behind, and nothing toolgate starts depends on
// where the process happens to be (its working directory can be lost: see the chmod race below).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import pino from 'pino';
import { Runtime } from '../../src/core/runtime.js';
import { CLI, policyFromYaml, REPO_ROOT, tempDir } from '../../src/testing/helpers.js';
import { allTools } from '../../src/tools/index.js';
import { startUpstreams } from '../../src/upstream/manager.js';

const linux = process.platform === 'linux';
const TSX = import.meta.resolve('tsx');
const FIXTURE = path.join(REPO_ROOT, 'tests', 'fixtures', 'upstream-fixture.mjs');
const until = async (what: string, ok: () => boolean, ms = 20_000) => {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

// The working directory is not toolgate's to rely on: list_dir's step back can fail (below) and
// leaves the process in "/". An upstream spawned without `cwd` inherited whatever the process was
// in at that moment — e.g. `server-filesystem .` restarted in "/" serves the whole file system.
test('a stdio upstream restarted after the process changed folder still runs where toolgate started (and a relative cwd: is read from there)', { skip: linux ? false : 'reads /proc/<pid>/cwd' }, async (t) => {
  const d = tempDir('tg-rc-up-');
  const before = process.cwd();
  t.after(() => { process.chdir(before); d.cleanup(); });
  const launch = path.join(d.dir, 'launch');
  const elsewhere = path.join(d.dir, 'elsewhere');
  for (const p of [launch, elsewhere, path.join(launch, 'sub'), path.join(elsewhere, 'sub')]) mkdirSync(p, { recursive: true });
  const logs = { plain: path.join(d.dir, 'plain.log'), rel: path.join(d.dir, 'rel.log') };
  const entry = (log: string, extra = '') => `{ command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(FIXTURE)}], env: { FIXTURE_LOG: ${JSON.stringify(log)} }${extra} }`;
  const policy = policyFromYaml(`upstreams:\n  plain: ${entry(logs.plain)}\n  rel: ${entry(logs.rel, ', cwd: sub')}\n`);
  process.chdir(launch);
  const rt = new Runtime({ tools: allTools(), policy, log: pino({ level: 'silent' }), replay: { command: ['node', CLI], flags: [] } });
  t.after(() => rt.close());
  const ups = await startUpstreams(rt, { waitMs: 20_000, connectTimeoutMs: 20_000, backoff: { firstMs: 20, maxMs: 50 }, env: process.env });
  const pids = (log: string) => (existsSync(log) ? readFileSync(log, 'utf8') : '').split('\n').flatMap((l) => /^start (\d+)$/.exec(l)?.[1] ?? []).map(Number);
  await until('both upstreams ready', () => ups.every((u) => u.state === 'ready'));
  assert.equal(readlinkSync(`/proc/${pids(logs.plain)[0]}/cwd`), launch, 'control: started in the launch folder');
  assert.equal(readlinkSync(`/proc/${pids(logs.rel)[0]}/cwd`), path.join(launch, 'sub'));
  // What lstatNames does when its step back fails (or any other change of folder).
  process.chdir(elsewhere);
  for (const log of Object.values(logs)) process.kill(pids(log)[0]!, 'SIGKILL');
  await until('both upstreams restarted', () => Object.values(logs).every((l) => pids(l).length === 2) && ups.every((u) => u.state === 'ready'));
  assert.equal(readlinkSync(`/proc/${pids(logs.plain)[1]}/cwd`), launch, 'the restarted upstream runs where toolgate started, not where the process is now');
  assert.equal(readlinkSync(`/proc/${pids(logs.rel)[1]}/cwd`), path.join(launch, 'sub'), 'its relative cwd is read from the launch folder');
});

// The race: the process's working directory is a folder the agent may chmod (the Docker image runs
// in /workspace, the workspace root, as its owner). Search permission taken away while lstatNames
// is inside the listed folder: the step back fails, and the process goes to "/" for good.
// Root ignores permissions: the child runs as nobody when the tests run as root.
const asUser = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
const own = (p: string) => { if (process.getuid?.() === 0) chownSync(p, 65534, 65534); };
const toggler = (dir: string) => spawn(process.execPath, ['-e', `const fs = require('node:fs'); for (;;) { try { fs.chmodSync(${JSON.stringify(dir)}, 0o600); fs.chmodSync(${JSON.stringify(dir)}, 0o700); } catch {} }`], { stdio: 'ignore' });

test('chmod race on the working directory: the step back may fail, and then the process is in "/", never inside the listed folder', { skip: linux ? false : 'Linux only', timeout: 60_000 }, async (t) => {
  const d = tempDir('tg-rc-perm-');
  t.after(d.cleanup);
  chmodSync(d.dir, 0o755);
  const home = path.join(d.dir, 'home');
  const list = path.join(d.dir, 'list');
  mkdirSync(home);
  mkdirSync(list);
  for (let i = 0; i < 2000; i++) writeFileSync(path.join(list, `f${i}`), '');
  for (const p of [home, list]) own(p);
  const child = spawn(process.execPath, ['--import', TSX, '--input-type=module', '-e', `
    import { closeSync, constants, openSync, readdirSync } from 'node:fs';
    import { lstatNames } from ${JSON.stringify(path.join(REPO_ROOT, 'src/workspace/dir-stat.ts'))};
    const fd = openSync(${JSON.stringify(list)}, constants.O_RDONLY | constants.O_DIRECTORY);
    const names = readdirSync(${JSON.stringify(list)});
    const seen = new Set();
    const end = Date.now() + 20000;
    process.stdout.write('ready\\n');
    await new Promise((r) => setTimeout(r, 100));
    while (Date.now() < end && !seen.has('/')) {
      let threw = '';
      try { lstatNames('/proc/self/fd/' + fd, names); } catch (e) { threw = e.code; }
      seen.add(process.cwd() + (threw ? ' (threw ' + threw + ')' : ''));
    }
    closeSync(fd);
    process.stdout.write(JSON.stringify([...seen]) + '\\n');
  `], { cwd: home, ...asUser, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => { out += c.toString(); });
  await until('the child to start', () => out.startsWith('ready\n'));
  const tg = toggler(home);
  try {
    await new Promise((r) => child.once('exit', r));
  } finally {
    tg.kill('SIGKILL');
  }
  const seen = JSON.parse(out.split('\n')[1]!) as string[];
  t.diagnostic(`working directories seen after a call: ${seen.join(', ')}`);
  assert.ok(seen.every((s) => s === home || s === '/'), `never inside the listed folder: ${seen.join(', ')}`);
  assert.ok(seen.includes('/'), 'the race was won within 20 s (the step back failed at least once)');
});

// The whole chain, through the built server as the Docker image runs it (as its workspace's owner,
// in the workspace root, an upstream without cwd): list_dir under the chmod race moves the server
// to "/", then the upstream restarts (it crashed, or the agent made it exit).
test('end to end: after list_dir lost the working directory to the chmod race, a restarted upstream still runs in the folder toolgate started in', { skip: linux ? false : 'Linux only', timeout: 90_000 }, async (t) => {
  const d = tempDir('tg-rc-e2e-');
  t.after(d.cleanup);
  chmodSync(d.dir, 0o755);
  const ws = path.join(d.dir, 'ws');
  const state = path.join(d.dir, 'state');
  const log = path.join(d.dir, 'up.log');
  mkdirSync(path.join(ws, 'big'), { recursive: true });
  mkdirSync(state);
  for (let i = 0; i < 2000; i++) writeFileSync(path.join(ws, 'big', `f${i}`), '');
  writeFileSync(log, '');
  const policy = path.join(d.dir, 'policy.yaml');
  writeFileSync(policy, `upstreams:\n  fx: { command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(FIXTURE)}], env: { FIXTURE_LOG: ${JSON.stringify(log)} } }\n`);
  for (const p of [ws, path.join(ws, 'big'), state, log]) own(p);
  const srv = spawn(process.execPath, [CLI, '--workspace', ws, '--policy', policy, '--mode', 'ci'], {
    cwd: ws, ...asUser, stdio: ['pipe', 'pipe', 'ignore'],
    env: { ...process.env, TOOLGATE_LOG_LEVEL: 'error', XDG_STATE_HOME: path.join(state, 's'), XDG_RUNTIME_DIR: path.join(state, 'r') },
  });
  t.after(() => srv.kill('SIGKILL'));
  let buf = '';
  const answered = new Set<unknown>();
  srv.stdout.on('data', (c: Buffer) => {
    buf += c.toString();
    for (let nl = buf.indexOf('\n'); nl !== -1; nl = buf.indexOf('\n')) { answered.add((JSON.parse(buf.slice(0, nl)) as { id?: unknown }).id); buf = buf.slice(nl + 1); }
  });
  const send = (m: object) => srv.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`);
  send({ id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'rc', version: '1' } } });
  await until('initialize', () => answered.has(0));
  send({ method: 'notifications/initialized' });
  const upPids = () => readFileSync(log, 'utf8').split('\n').flatMap((l) => /^start (\d+)$/.exec(l)?.[1] ?? []).map(Number);
  await until('the upstream to start', () => upPids().length === 1);
  assert.equal(readlinkSync(`/proc/${upPids()[0]}/cwd`), ws, 'control: the upstream runs in the workspace, where the server runs');
  const tg = toggler(ws);
  let id = 1;
  try {
    const end = Date.now() + 40_000;
    while (readlinkSync(`/proc/${srv.pid}/cwd`) !== '/' && Date.now() < end) {
      const mine = id++;
      send({ id: mine, method: 'tools/call', params: { name: 'list_dir', arguments: { path: 'big', limit: 5000 } } });
      await until(`list_dir ${mine}`, () => answered.has(mine));
    }
  } finally {
    tg.kill('SIGKILL');
    await new Promise((r) => tg.once('exit', r));
    chmodSync(ws, 0o700);
  }
  t.diagnostic(`${id - 1} list_dir calls; the server now runs in ${readlinkSync(`/proc/${srv.pid}/cwd`)}`);
  assert.equal(readlinkSync(`/proc/${srv.pid}/cwd`), '/', 'the race moved the server to "/" (if this fails, the race was not won: rerun)');
  process.kill(upPids()[0]!, 'SIGKILL');
  await until('the upstream to restart', () => upPids().length === 2, 30_000);
  assert.equal(readlinkSync(`/proc/${upPids()[1]}/cwd`), ws, 'the restarted upstream runs in the workspace, not in "/"');
});
