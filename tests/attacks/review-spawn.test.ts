// Review of the ripgrep starter process (src/tools/grep/rg-spawn.ts, 0d87278): rg is started by a
// small helper Node process that hands rg's stdout back over IPC. These attacks try to lose or
// mix output, to hold a search past its time cap through the helper (stopped, killed), to leak
// descriptors, processes or bytes on the protocol channel, and to make the helper run anything
// but rg. Tests that need rg skip by name without it; those about the helper skip off Linux or
// with TOOLGATE_STARTER=off.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, closeSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { CLI, Harness, tempDir, whileSwapping, withEngine } from '../../src/testing/helpers.js';
import { locateRg } from '../../src/tools/grep/rg.js';
import { helperPidForTests, resetStarterForTests, STARTER_TITLE, spawnRg, type RgChild } from '../../src/tools/grep/rg-spawn.js';

// These tests are about grep's ripgrep path: it runs even on these small trees (TOOLGATE_GREP_WALK_MAX=0;
// servers spawned here inherit it).
process.env.TOOLGATE_GREP_WALK_MAX = '0';
const skipHelper = process.platform !== 'linux' ? 'the starter process is Linux only'
  : /^(off|0|false|no|none)$/i.test(process.env.TOOLGATE_STARTER?.trim() ?? '') ? 'TOOLGATE_STARTER=off' : false;

// The server starts rg itself while it is small (HELPER_MIN_RSS): these tests are about the starter.
if (!skipHelper) process.env.TOOLGATE_STARTER = 'always';

type GrepData = { engine: string; capped?: string | null; fallback_reason: string | null; counts?: { file: string; count: number }[]; matches?: { file: string; line: number; text: string }[]; files?: string[]; total_files: number };
type Env = { ok: boolean; status?: string; data?: GrepData; error?: { code: string; message: string } };
type GlobEnv = { ok: boolean; data?: { files: string[]; count: number; engine: string; fallback_reason: string | null; stopped: string | null } };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
function alive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch { return false; }
}
async function until(what: () => boolean, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) { if (what()) return true; await sleep(20); }
  return what();
}
/** Children of `pid` (from /proc/*\/stat), with their state letter. */
function childrenOf(pid: number): { pid: number; state: string; cmd: string }[] {
  const out: { pid: number; state: string; cmd: string }[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(rest[1]) !== pid) continue;
      out.push({ pid: Number(e), state: rest[0]!, cmd: readFileSync(`/proc/${e}/cmdline`, 'utf8').replace(/\0/g, ' ') });
    } catch { /* gone */ }
  }
  return out;
}
function fdLinks(pid: number): Map<string, string> {
  const m = new Map<string, string>();
  for (const f of readdirSync(`/proc/${pid}/fd`)) {
    try { m.set(f, readlinkSync(`/proc/${pid}/fd/${f}`)); } catch { /* closed meanwhile */ }
  }
  return m;
}
/** Resolves with `p`'s value, or with 'timeout' after `ms`. */
function within<T>(p: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout;
  return Promise.race([p, new Promise<'timeout'>((r) => { timer = setTimeout(() => r('timeout'), ms); })]).finally(() => clearTimeout(timer));
}

function bigTree(root: string, dirs = 30, files = 40): void {
  for (let i = 0; i < dirs; i++) {
    const dir = path.join(root, `d${i}`);
    mkdirSync(dir, { recursive: true });
    for (let j = 0; j < files; j++) writeFileSync(path.join(dir, `f${j}.txt`), `needle ${i}-${j}\nhay\n`.repeat(1 + ((i + j) % 4)));
  }
}

function harness(t: { after: (f: () => void) => void }, ws: string): Harness {
  const state = tempDir('tg-review-spawn-state-');
  const h = new Harness([ws], { stateDir: state.dir });
  t.after(() => { h.close(); state.cleanup(); });
  return h;
}

// ---------------------------------------------------------------------------------------------
// A real server over stdio: the protocol channel, the helper's descriptors, its exit.

interface Rpc { send(m: object): void; reply(id: number, ms?: number): Promise<{ result?: { isError?: boolean; structuredContent?: { data: GrepData } } }>; lines(): string[] }
function rawServer(ws: string, env: Record<string, string>) {
  const child = spawn(process.execPath, [CLI, '--workspace', ws], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, TOOLGATE_LOG_LEVEL: 'warn', ...env } });
  let out = '';
  child.stdout.on('data', (c: Buffer) => { out += c.toString('utf8'); });
  child.stderr.on('data', () => {});
  const lines = () => out.split('\n').filter((l) => l !== '');
  const rpc: Rpc = {
    send: (m) => child.stdin.write(JSON.stringify(m) + '\n'),
    lines,
    async reply(id, ms = 20_000) {
      const end = Date.now() + ms;
      while (Date.now() < end) {
        for (const l of lines()) {
          try { const j = JSON.parse(l) as { id?: number }; if (j.id === id) return j as never; } catch { /* checked by the purity assertion */ }
        }
        await sleep(20);
      }
      throw new Error(`no answer to request ${id}: ${out.slice(0, 500)}`);
    },
  };
  return { child, rpc };
}

for (const ending of ['stdin closed', 'SIGTERM', 'SIGKILL'] as const) test(`a real server (stdio), ending by ${ending}: stdout holds only JSON-RPC, the starter holds none of the server's descriptors but its channel and stderr, and it is gone after the server (no rg left)`, { skip: skipHelper }, async (t) => {
  if (!(await locateRg())) return t.skip('needs ripgrep (rg) on PATH');
  const d = tempDir('tg-review-spawn-srv-');
  t.after(d.cleanup);
  const ws = path.join(d.dir, 'ws');
  bigTree(ws, 4, 10);
  const { child, rpc } = rawServer(ws, { XDG_STATE_HOME: path.join(d.dir, 'state'), XDG_RUNTIME_DIR: path.join(d.dir, 'run'), TOOLGATE_GLOB_WALK_MAX: '0' });
  t.after(() => { try { child.kill('SIGKILL'); } catch { /* gone */ } });
  rpc.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
  await rpc.reply(1);
  rpc.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  let id = 10;
  const grep = async (args: object) => {
    const n = id++;
    rpc.send({ jsonrpc: '2.0', id: n, method: 'tools/call', params: { name: 'grep', arguments: args } });
    const r = await rpc.reply(n);
    assert.equal(r.result?.isError, false, JSON.stringify(r).slice(0, 400));
    return r.result!.structuredContent!.data;
  };
  // The first rg start is direct and starts the helper.
  assert.equal((await grep({ pattern: 'needle', output_mode: 'count' })).engine, 'ripgrep');
  const serverPid = child.pid!;
  let helperPid = 0;
  assert.ok(await until(() => { helperPid = childrenOf(serverPid).find((c) => c.cmd.includes(STARTER_TITLE))?.pid ?? 0; return helperPid > 0; }), 'a starter process runs beside the server');
  await sleep(300);
  for (let i = 0; i < 6; i++) {
    const r = await grep({ pattern: 'needle', output_mode: i % 2 ? 'count' : 'content', head_limit: 1000 });
    assert.equal(r.engine, 'ripgrep');
    assert.equal(r.total_files, 40, 'every file found through the starter');
  }
  rpc.send({ jsonrpc: '2.0', id: 99, method: 'tools/call', params: { name: 'glob', arguments: { pattern: '**/*.txt' } } });
  assert.equal((await rpc.reply(99)).result?.isError, false);
  // Its descriptors: stdin and stdout /dev/null, stderr the server's, the IPC socket; nothing of
  // the server's protocol pipes, its audit file or the workspace.
  const server = fdLinks(serverPid);
  const helper = fdLinks(helperPid);
  assert.equal(helper.get('0'), '/dev/null');
  assert.equal(helper.get('1'), '/dev/null', 'the starter\'s stdout is not the protocol channel');
  assert.equal(helper.get('2'), server.get('2'), 'stderr is shared (logs)');
  const protocol = new Set([server.get('0'), server.get('1')]);
  for (const [fd, link] of helper) {
    assert.ok(!protocol.has(link), `the starter holds the server's stdin/stdout (${fd} -> ${link})`);
    assert.ok(!link.startsWith(ws) && !link.startsWith(d.dir), `the starter holds a file of the workspace or state (${fd} -> ${link})`);
  }
  const inherited = [...helper.values()].filter((l) => l.startsWith('/') && l !== '/dev/null');
  assert.deepEqual(inherited.filter((l) => l !== server.get('2')), [], 'no file but stderr and /dev/null');
  // The protocol channel: every line JSON-RPC 2.0.
  for (const l of rpc.lines()) assert.equal((JSON.parse(l) as { jsonrpc?: string }).jsonrpc, '2.0', `not JSON-RPC on stdout: ${l.slice(0, 200)}`);
  // A search in flight when the server ends: rg under the starter, stopped with it.
  rpc.send({ jsonrpc: '2.0', id: 200, method: 'tools/call', params: { name: 'grep', arguments: { pattern: '(a|b|c|d|e)+x?y?z?$', output_mode: 'count' } } });
  if (ending === 'stdin closed') child.stdin.end();
  else child.kill(ending);
  const code = await within(new Promise((r) => child.on('exit', (c, s) => r(c ?? s))), 15_000);
  assert.notEqual(code, 'timeout', 'the server exits');
  assert.ok(await until(() => !alive(helperPid), 5000), 'the starter exits with the server');
  assert.ok(await until(() => !readdirSync('/proc').some((e) => /^\d+$/.test(e) && (() => { try { return readlinkSync(`/proc/${e}/cwd`).startsWith(ws); } catch { return false; } })()), 5000), 'no process (rg) is left working in the workspace');
  for (const l of rpc.lines()) assert.equal((JSON.parse(l) as { jsonrpc?: string }).jsonrpc, '2.0', `not JSON-RPC on stdout: ${l.slice(0, 200)}`);
});

// ---------------------------------------------------------------------------------------------
// In-process: integrity, leaks, injection.

/** A fresh starter and a tree made by bigTree, or null (and the test skipped) without ripgrep. */
async function rgTree(t: { skip(why: string): void; after(fn: () => void): void }, ...dims: number[]): Promise<{ dir: string } | null> {
  if (!(await locateRg())) { t.skip('needs ripgrep (rg) on PATH'); return null; }
  resetStarterForTests();
  const d = tempDir('tg-review-spawn-');
  t.after(d.cleanup);
  bigTree(d.dir, ...dims);
  return d;
}

/** glob through ripgrep even on these small trees (TOOLGATE_GLOB_WALK_MAX=0), for this test only. */
function globAlwaysRg(t: { after(fn: () => void): void }): void {
  const saved = process.env.TOOLGATE_GLOB_WALK_MAX;
  process.env.TOOLGATE_GLOB_WALK_MAX = '0';
  t.after(() => { if (saved === undefined) delete process.env.TOOLGATE_GLOB_WALK_MAX; else process.env.TOOLGATE_GLOB_WALK_MAX = saved; });
}

test('24 greps at once through the starter (content, count, files, small head_limit that stops rg early) give what the built-in engine gives', { skip: skipHelper }, async (t) => {
  const d = await rgTree(t);
  if (!d) return;
  const h = harness(t, d.dir);
  assert.ok(await helperPidForTests(), 'the starter process is ready');
  const queries = Array.from({ length: 24 }, (_, i) => ({
    pattern: i % 3 ? 'needle' : 'needle [0-9]+-1',
    output_mode: (['content', 'count', 'files_with_matches'] as const)[i % 3],
    head_limit: i % 4 === 0 ? 3 : 2000,
  }));
  const want = await withEngine('builtin', () => Promise.all(queries.map((q) => h.call('grep', q) as Promise<Env>)));
  for (let round = 0; round < 2; round++) {
    const got = await Promise.all(queries.map((q) => h.call('grep', q) as Promise<Env>));
    got.forEach((g, i) => {
      assert.equal(g.ok, true, JSON.stringify(g.error));
      assert.equal(g.data?.engine, 'ripgrep', `query ${i}: ${g.data?.fallback_reason}`);
      assert.deepEqual(g.data?.matches ?? g.data?.counts ?? g.data?.files, want[i]!.data?.matches ?? want[i]!.data?.counts ?? want[i]!.data?.files, `query ${i} (${JSON.stringify(queries[i])})`);
    });
  }
});

test('300 greps and globs through the starter leave no descriptor open in the server and no child of the starter', { skip: skipHelper }, async (t) => {
  const d = await rgTree(t, 10, 20);
  if (!d) return;
  globAlwaysRg(t);
  const h = harness(t, d.dir);
  const hp = await helperPidForTests();
  assert.ok(hp);
  const once = async (i: number) => {
    const r = i % 5 === 4 ? await h.call('glob', { pattern: '**/*.txt' }) as GlobEnv : await h.call('grep', { pattern: 'needle', output_mode: i % 2 ? 'count' : 'content', head_limit: i % 3 ? 2 : 100 }) as Env;
    assert.equal(r.ok, true);
  };
  for (let i = 0; i < 20; i++) await once(i);
  await sleep(200);
  const before = fdLinks(process.pid).size;
  for (let i = 0; i < 300; i += 4) await Promise.all([once(i), once(i + 1), once(i + 2), once(i + 3)]);
  await sleep(300);
  const after = fdLinks(process.pid).size;
  assert.ok(after <= before + 2, `descriptors in the server: ${before} before, ${after} after 300 calls`);
  assert.equal(await helperPidForTests(), hp, 'one starter served them all');
  assert.ok(await until(() => childrenOf(hp).length === 0, 3000), `the starter has children left (zombies?): ${JSON.stringify(childrenOf(hp))}`);
});

test('the pin holds through the starter: a searched folder swapped for a link to an outside folder while greps and globs run never shows the outside folder (rg\'s cwd is /proc/<server pid>/fd/N, read by the starter\'s child)', { skip: skipHelper }, async (t) => {
  if (!(await locateRg())) return t.skip('needs ripgrep (rg) on PATH');
  resetStarterForTests();
  const d = tempDir('tg-review-spawn-');
  t.after(d.cleanup);
  const ws = path.join(d.dir, 'ws');
  const out = path.join(d.dir, 'outside');
  mkdirSync(path.join(ws, 'sub'), { recursive: true });
  mkdirSync(out);
  for (let i = 0; i < 5; i++) {
    writeFileSync(path.join(ws, 'sub', `in${i}.txt`), 'needle inside\n');
    writeFileSync(path.join(out, `out${i}.txt`), 'needle OUTSIDE-SECRET\n');
  }
  globAlwaysRg(t);
  const h = harness(t, ws);
  assert.ok(await helperPidForTests(), 'the starter is ready');
  const calm = await h.call('grep', { pattern: 'needle', path: 'sub', output_mode: 'content' }) as Env;
  assert.equal(calm.data?.engine, 'ripgrep');
  assert.equal(calm.data?.matches?.length, 5, 'control: the folder\'s own files are found');
  let leaked = 0;
  let found = 0;
  const runs = await whileSwapping(path.join(ws, 'sub'), out, 3000, async () => {
    const [g, c, l] = await Promise.all([
      h.call('grep', { pattern: 'needle', path: 'sub', output_mode: 'content' }) as Promise<Env>,
      h.call('grep', { pattern: 'needle', path: 'sub', output_mode: 'count' }) as Promise<Env>,
      h.call('glob', { pattern: '**/*.txt', path: 'sub' }) as Promise<GlobEnv>,
    ]);
    const shown = JSON.stringify([g, c, l]);
    if (/OUTSIDE-SECRET|out\d\.txt/.test(shown)) leaked++;
    if ((g.data?.matches?.length ?? 0) > 0) found++;
  });
  assert.ok(runs > 5, `control: ${runs} rounds ran`);
  assert.ok(found > 0, 'control: some searches found the folder\'s own files while it was swapped');
  assert.equal(leaked, 0, `the outside folder reached ${leaked} of ${runs} rounds`);
});

test('shell text in the pattern and in file names is never run: the starter runs rg with an argument list', { skip: skipHelper }, async (t) => {
  if (!(await locateRg())) return t.skip('needs ripgrep (rg) on PATH');
  resetStarterForTests();
  const d = tempDir('tg-review-spawn-');
  t.after(d.cleanup);
  const ws = path.join(d.dir, 'ws');
  mkdirSync(ws);
  const canary = path.join(d.dir, 'PWNED');
  const evil = [`$(touch ${canary})`, `; touch ${canary}`, `\`touch ${canary}\``, '--pre=touch', '-e'];
  for (const [i, e] of evil.entries()) writeFileSync(path.join(ws, `${e.replace(/\//g, '_')}-${i}`), `needle ${e}\n`);
  const h = harness(t, ws);
  assert.ok(await helperPidForTests());
  for (const pattern of [...evil, 'needle']) {
    const r = await h.call('grep', { pattern, fixed_strings: true, output_mode: 'files_with_matches' }) as Env;
    assert.equal(r.ok, true, JSON.stringify(r.error));
    assert.equal(r.data?.engine, 'ripgrep');
  }
  const all = await h.call('grep', { pattern: 'needle', output_mode: 'files_with_matches' }) as Env;
  assert.equal(all.data?.files?.length, evil.length, 'control: every file found');
  assert.equal(existsSync(canary), false, 'a command ran');
});

test('the starter\'s IPC channel cannot be opened through /proc by another process (a command the model runs)', { skip: skipHelper }, async () => {
  resetStarterForTests();
  const hp = await helperPidForTests();
  assert.ok(hp);
  const channel = [...fdLinks(hp)].filter(([, l]) => l.startsWith('socket:'));
  assert.ok(channel.length >= 1, 'control: the starter has its channel');
  for (const [fd] of channel) {
    // Same user: the /proc link is visible, but a socket cannot be opened by path.
    assert.throws(() => closeSync(openSync(`/proc/${hp}/fd/${fd}`, 'r+')), /ENXIO|EACCES|EPERM/, `fd ${fd} of the starter opened`);
  }
});

for (const way of ['directly', 'through the starter'] as const) test(`a NUL byte in a grep pattern or glob (spawn refuses the argument), rg started ${way}: a clear answer from the built-in engine, never an internal error`, { skip: way === 'through the starter' ? skipHelper : false }, async (t) => {
  if (!(await locateRg())) return t.skip('needs ripgrep (rg) on PATH');
  resetStarterForTests();
  const saved = process.env.TOOLGATE_STARTER;
  if (way === 'directly') process.env.TOOLGATE_STARTER = 'off';
  t.after(() => { if (saved === undefined) delete process.env.TOOLGATE_STARTER; else process.env.TOOLGATE_STARTER = saved; });
  const d = tempDir('tg-review-spawn-');
  t.after(d.cleanup);
  writeFileSync(path.join(d.dir, 'a.txt'), 'needle\n');
  const h = harness(t, d.dir);
  if (way === 'through the starter') assert.ok(await helperPidForTests());
  for (const args of [{ pattern: 'a\u0000b' }, { pattern: 'needle', glob: 'a\u0000*' }, { pattern: 'needle', output_mode: 'count', glob: '*.txt\u0000' }]) {
    const r = await h.call('grep', args) as Env;
    assert.notEqual(r.error?.code, 'Internal', `${JSON.stringify(args)}: ${r.error?.message}`);
    if (r.ok) assert.equal(r.data?.engine, 'builtin');
  }
  const control = await h.call('grep', { pattern: 'needle', output_mode: 'count' }) as Env;
  assert.equal(control.data?.engine, 'ripgrep', 'control: rg runs for a plain pattern');
});

// ---------------------------------------------------------------------------------------------
// A stopped or dying starter: every call still ends, in about its time cap, with right answers.

test('a stopped starter process (SIGSTOP) does not hold grep: it answers in seconds with the right counts, and later ones too', { skip: skipHelper }, async (t) => {
  const d = await rgTree(t, 5, 5);
  if (!d) return;
  process.env.TOOLGATE_GREP_TIME_CAP_MS = '20000';
  t.after(() => { delete process.env.TOOLGATE_GREP_TIME_CAP_MS; });
  const h = harness(t, d.dir);
  const want = await withEngine('builtin', () => h.call('grep', { pattern: 'needle', output_mode: 'count' }) as Promise<Env>);
  const hp = await helperPidForTests();
  assert.ok(hp);
  t.after(() => { try { process.kill(hp, 'SIGCONT'); } catch { /* gone */ } });
  process.kill(hp, 'SIGSTOP');
  const started = Date.now();
  const r = await within(h.call('grep', { pattern: 'needle', output_mode: 'count' }) as Promise<Env>, 12_000);
  assert.notEqual(r, 'timeout', 'grep still waits for the stopped starter after 12 s (its time cap is 20 s)');
  if (r === 'timeout') return;
  assert.equal(r.ok, true);
  assert.equal(r.data?.capped, null, `a complete answer, not a time-capped one (${Date.now() - started} ms)`);
  assert.deepEqual(r.data?.counts, want.data?.counts);
  assert.match(r.data?.fallback_reason ?? '', /starter/, 'the fallback says the starter failed');
  // The next searches do not wait again.
  const t2 = Date.now();
  const next = await h.call('grep', { pattern: 'needle', output_mode: 'count' }) as Env;
  assert.deepEqual(next.data?.counts, want.data?.counts);
  assert.ok(Date.now() - t2 < 2000, `the next grep took ${Date.now() - t2} ms`);
});

test('a starter stopped while rg runs: a kill (deadline, cancel) still ends the run in seconds, and rg is killed', { skip: skipHelper }, async () => {
  resetStarterForTests();
  const hp = await helperPidForTests();
  assert.ok(hp);
  try {
    const c: RgChild = spawnRg('sleep', ['60'], { cwd: '/', stderr: true });
    const pid = await new Promise<number>((r) => c.on('spawn', r));
    const ended = new Promise<string>((r) => { c.on('error', (e) => r(`error ${e.code}`)); c.on('close', (code, s) => r(`close ${code} ${s}`)); });
    process.kill(hp, 'SIGSTOP');
    c.kill();
    const how = await within(ended, 10_000);
    assert.notEqual(how, 'timeout', 'the run never ended: its kill sits in the stopped starter\'s channel');
    assert.ok(await until(() => !alive(pid)), 'sleep (the started program) was killed');
  } finally {
    try { process.kill(hp, 'SIGCONT'); } catch { /* gone */ }
  }
});

test('glob (ripgrep engine) with a stopped starter answers in seconds with every file', { skip: skipHelper }, async (t) => {
  const d = await rgTree(t, 5, 5);
  if (!d) return;
  globAlwaysRg(t);
  const h = harness(t, d.dir);
  const hp = await helperPidForTests();
  assert.ok(hp);
  t.after(() => { try { process.kill(hp, 'SIGCONT'); } catch { /* gone */ } });
  process.kill(hp, 'SIGSTOP');
  const r = await within(h.call('glob', { pattern: '**/*.txt' }) as Promise<GlobEnv>, 9_000);
  assert.notEqual(r, 'timeout', 'glob still waits for the stopped starter after 9 s (its time limit is 10 s)');
  if (r === 'timeout') return;
  assert.equal(r.ok, true);
  assert.equal(r.data?.count, 25);
  assert.equal(r.data?.stopped, null);
});

test('the starter killed again and again while greps run: every answer is right, the fallback says why, and after 3 deaths rg is started directly', { skip: skipHelper }, async (t) => {
  const d = await rgTree(t);
  if (!d) return;
  const h = harness(t, d.dir);
  const q = { pattern: 'needle', output_mode: 'count' as const, head_limit: 2000 };
  const want = await withEngine('builtin', () => h.call('grep', q) as Promise<Env>);
  const reasons = new Set<string>();
  for (let death = 0; death < 3; death++) {
    const hp = await helperPidForTests();
    assert.ok(hp, `starter ${death + 1} is ready`);
    const calls = Array.from({ length: 6 }, () => h.call('grep', q) as Promise<Env>);
    await sleep(5 + death * 3);
    process.kill(hp, 'SIGKILL');
    for (const r of await Promise.all(calls)) {
      assert.equal(r.ok, true);
      assert.deepEqual(r.data?.counts, want.data?.counts, `engine ${r.data?.engine}: ${r.data?.fallback_reason}`);
      if (r.data?.fallback_reason) reasons.add(r.data.fallback_reason);
    }
  }
  for (const why of reasons) assert.match(why, /starter/, `a fallback reason that does not say the starter died: ${why}`);
  assert.equal(await helperPidForTests(1000), null, 'no starter after 3 deaths');
  const direct = await h.call('grep', q) as Env;
  assert.equal(direct.data?.engine, 'ripgrep', 'rg still runs, started directly');
  assert.deepEqual(direct.data?.counts, want.data?.counts);
});

test.after(() => resetStarterForTests());
