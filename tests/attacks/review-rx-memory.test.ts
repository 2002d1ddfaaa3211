// Review of grep's built-in engine and its regex worker: memory. A file in the workspace (up to
// 64 MB in a folder; a named file had no limit) must not take the server's memory, nor may the
// files waiting for the worker. Heavy cases run in a child process with a small heap, so that a
// regression fails the test instead of the test runner.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, linkSync, openSync, ftruncateSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { Harness, REPO_ROOT, tempDir, writeIn } from '../../src/testing/helpers.js';
import { grep } from '../../src/tools/grep/grep-fixture.js';
import { locateRg } from '../../src/tools/grep/rg.js';

const rgHere = await locateRg({ ...process.env, TOOLGATE_RG: '' });

/** Runs grep calls (TOOLGATE_RG=off unless `env` says) over `dir` in a child process with a `heapMb` heap; its output: one JSON line a call. */
function grepInChild(dir: string, calls: Array<Record<string, unknown>>, heapMb: number, env: Record<string, string> = {}) {
  const script = `
    const { Harness } = await import(${JSON.stringify(`${REPO_ROOT}/src/testing/helpers.ts`)});
    const h = new Harness([${JSON.stringify(dir)}]);
    for (const args of ${JSON.stringify(calls)}) {
      const r = await h.call('grep', args);
      console.log(JSON.stringify({ ok: r.ok, text: r.text.slice(0, 300), counts: r.data?.counts, files: r.data?.files, total: r.data?.total_matches, exact: r.data?.totals_exact, n: r.data?.matches?.length }));
    }
    h.close();
  `;
  const r = spawnSync(process.execPath, [`--max-old-space-size=${heapMb}`, '--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: REPO_ROOT, encoding: 'utf8', timeout: 120_000, env: { ...process.env, TOOLGATE_RG: 'off', TOOLGATE_GREP_TIME_CAP_MS: '60000', ...env },
  });
  assert.equal(r.status, 0, `the child ended with ${r.status ?? r.signal}: ${r.stderr.split('\n').filter((l) => /FATAL|heap|Error/.test(l)).slice(0, 3).join(' | ')}`);
  return r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { ok: boolean; text: string; counts?: Array<{ file: string; count: number }>; files?: string[]; total?: number; exact?: boolean; n?: number });
}

test('without ripgrep, counting a 32 MB file of short matching lines: no record or line object each (11 million of them ran a 256 MB heap out: the server process died; 64 MB ran out the default heap)', { timeout: 180_000 }, (t) => {
  const d = tempDir('tg-rxm-lines-');
  t.after(d.cleanup);
  writeFileSync(`${d.dir}/lines.txt`, 'ab\n'.repeat(11 << 20));
  writeIn(d.dir, 'one.txt', 'ab\n');
  const out = grepInChild(d.dir, [
    { pattern: 'ab', output_mode: 'count' },
    { pattern: 'a.', output_mode: 'count' },
    { pattern: 'a+b', output_mode: 'count' }, // the worker: its heap is 256 MB
    { pattern: 'ab$', output_mode: 'files_with_matches' },
    { pattern: 'b\\na', multiline: true, output_mode: 'count' },
    { pattern: 'ab', output_mode: 'content', head_limit: 2, offset: 5, context: 1 },
    { pattern: 'b\\nab', multiline: true, output_mode: 'content', head_limit: 1, path: 'lines.txt' },
  ], 256);
  const lines = 11 << 20;
  for (const r of out.slice(0, 3)) assert.deepEqual(r.counts, [{ file: 'lines.txt', count: lines }, { file: 'one.txt', count: 1 }], r.text);
  assert.deepEqual(out[3]!.files, ['lines.txt', 'one.txt'], out[3]!.text);
  // Multiline: each match joins a line to the next, and the next match starts on that line: one record.
  assert.deepEqual(out[4]!.counts, [{ file: 'lines.txt', count: 1 }], out[4]!.text);
  assert.equal(out[5]!.n, 2, out[5]!.text);
  assert.equal(out[5]!.exact, false, 'past the collection cap in one file: "at least", as ripgrep says');
  assert.equal(out[6]!.n, 1, out[6]!.text);
});

test('without ripgrep, a named file is not read whole past 64 MB (a 1 GB sparse file was: 1 GB of memory a call, up to 2 GB)', { timeout: 60_000 }, async (t) => {
  const d = tempDir('tg-rxm-named-');
  t.after(d.cleanup);
  const fd = openSync(`${d.dir}/sparse.txt`, 'w');
  ftruncateSync(fd, 1 << 30);
  closeSync(fd);
  writeIn(d.dir, 'small.txt', 'needle\n');
  const h = new Harness([d.dir]);
  t.after(() => h.close());
  let peak = 0;
  const base = process.memoryUsage().rss;
  const iv = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss - base); }, 5);
  try {
    const r = await grep(h, 'builtin', { pattern: 'needle', path: 'sparse.txt' });
    assert.ok(r.ok, r.text);
    assert.match(r.text, /over 64 MB/);
  } finally {
    clearInterval(iv);
  }
  assert.ok(peak < 256 << 20, `memory grew ${(peak / 2 ** 20).toFixed(0)} MB`);
  const control = await grep(h, 'builtin', { pattern: 'needle', path: 'small.txt' });
  assert.equal(control.data.total_files, 1);
});

test('without ripgrep, a runaway match holds the worker: the files read meanwhile and waiting for it stay bounded in bytes (256 files of up to 64 MB each could wait: 16 GB)', { timeout: 120_000 }, async (t) => {
  const d = tempDir('tg-rxm-inflight-');
  t.after(d.cleanup);
  writeIn(d.dir, 'a/exp.txt', `${'a'.repeat(40)}!\n`);
  writeFileSync(`${d.dir}/big.txt`, 'x\n'.repeat(8 << 20)); // 16 MB
  for (let i = 0; i < 60; i++) linkSync(`${d.dir}/big.txt`, `${d.dir}/b${String(i).padStart(2, '0')}.txt`);
  const h = new Harness([d.dir]);
  t.after(() => h.close());
  let peak = 0;
  const base = process.memoryUsage().rss;
  const iv = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss - base); }, 10);
  try {
    const r = await grep(h, 'builtin', { pattern: '(a+)+b' }, { TOOLGATE_GREP_TIME_CAP_MS: '4000' });
    assert.equal(r.status, 'partial', r.text);
    assert.match(r.text, /time cap/);
  } finally {
    clearInterval(iv);
  }
  assert.ok(peak < 400 << 20, `memory grew ${(peak / 2 ** 20).toFixed(0)} MB while the worker was held`);
});

test('the built server over stdio, without ripgrep: worker searches (a runaway one, a cancelled one, one too long for the thread) leave nothing but JSON-RPC on stdout, and every call is answered', { timeout: 60_000 }, async (t) => {
  const { spawn } = await import('node:child_process');
  const { CLI } = await import('../../src/testing/helpers.js');
  const d = tempDir('tg-rxm-stdio-');
  t.after(d.cleanup);
  writeIn(d.dir, 'exp.txt', `${'a'.repeat(40)}!\n`);
  writeIn(d.dir, 'long.txt', `${'a'.repeat(1 << 20)}\n`);
  const child = spawn(process.execPath, [CLI, '--workspace', d.dir], {
    stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, TOOLGATE_RG: 'off', TOOLGATE_GREP_TIME_CAP_MS: '2000', TOOLGATE_LOG_LEVEL: 'warn' },
  });
  t.after(() => child.kill());
  const lines: string[] = [];
  let buf = '';
  const waiters = new Map<number, (m: { result?: { isError?: boolean; structuredContent?: { status?: string } } }) => void>();
  child.stdout.setEncoding('utf8').on('data', (s: string) => {
    buf += s;
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      lines.push(line);
      try { const m = JSON.parse(line) as { id?: number }; if (m.id !== undefined) waiters.get(m.id)?.(m as never); } catch { /* counted below */ }
    }
  });
  let errText = '';
  child.stderr.setEncoding('utf8').on('data', (x: string) => { errText += x; });
  // The server ending before it answers fails the test with what it wrote (once: an unhandled rejection on a cancel).
  const exited = new Promise<never>((_, reject) => child.on('close', (code) => reject(new Error(`the server exited (${code}): ${errText.slice(-1500)}`))));
  exited.catch(() => {});
  const send = (m: object) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`);
  const request = (id: number, method: string, params: object) => new Promise<{ result?: { isError?: boolean } }>((resolve) => { waiters.set(id, resolve); send({ id, method, params }); });
  await request(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } });
  send({ method: 'notifications/initialized' });
  const grep = (id: number, args: object) => request(id, 'tools/call', { name: 'grep', arguments: args });
  const runaway = grep(2, { pattern: '(a+)+b' });
  const worker = grep(3, { pattern: 'a+!', output_mode: 'count' });
  const long = grep(4, { pattern: `^${'.'.repeat(8000)}`, output_mode: 'count' });
  const cancelled = grep(5, { pattern: '(a+)+c' });
  await new Promise((r) => setTimeout(r, 300));
  send({ method: 'notifications/cancelled', params: { requestId: 5, reason: 'test' } });
  const answers = await Promise.race([Promise.all([runaway, worker, long]), exited]);
  for (const a of answers) assert.ok(a.result, JSON.stringify(a).slice(0, 300));
  const listed = await Promise.race([request(6, 'tools/list', {}), exited]);
  assert.ok(listed.result);
  void cancelled; // a cancelled request gets no answer (MCP); the server goes on
  const bad = lines.filter((l) => { try { return (JSON.parse(l) as { jsonrpc?: string }).jsonrpc !== '2.0'; } catch { return true; } });
  assert.deepEqual(bad, [], 'stdout carries only JSON-RPC messages');
});

test('ripgrep, content mode, one file of millions of matching lines: records stop at the collection cap inside the file too, and output cut by the time cap is not parsed (the server process died: 3 GB of records, then JSON.parse of a half line thrown from the "close" handler)', { timeout: 180_000, skip: !rgHere && 'needs ripgrep (rg) on PATH' }, (t) => {
  const d = tempDir('tg-rxm-rg-');
  t.after(d.cleanup);
  writeFileSync(`${d.dir}/big.txt`, 'ab\n'.repeat(16 << 20));
  writeIn(d.dir, 'one.txt', 'ab\n');
  const out = grepInChild(d.dir, [
    { pattern: 'ab', output_mode: 'content', head_limit: 2 },
    { pattern: 'ab', output_mode: 'content', head_limit: 1, path: 'big.txt', context: 1 },
    { pattern: 'ab', output_mode: 'count' },
  ], 512, { TOOLGATE_RG: '', TOOLGATE_GREP_WALK_MAX: '0', TOOLGATE_GREP_TIME_CAP_MS: '20000' });
  for (const r of out.slice(0, 2)) {
    assert.equal(r.ok, true, r.text);
    assert.equal(r.n, r === out[0] ? 2 : 1, r.text);
    assert.equal(r.exact, false, r.text);
    assert.doesNotMatch(r.text, /time cap/, 'stopped at the cap, not at the time cap');
  }
  assert.deepEqual(out[2]!.counts, [{ file: 'big.txt', count: 16 << 20 }, { file: 'one.txt', count: 1 }], out[2]!.text);
  // No cap to stop at: the time cap kills rg while it writes (file after file), and the half line it left is dropped.
  const many = tempDir('tg-rxm-rg-many-');
  t.after(many.cleanup);
  for (let i = 0; i < 300; i++) writeFileSync(`${many.dir}/f${i}.txt`, 'ab\n'.repeat(20_000));
  const [cut] = grepInChild(many.dir, [{ pattern: 'ab', output_mode: 'content', head_limit: 1 }], 2048,
    { TOOLGATE_RG: '', TOOLGATE_GREP_WALK_MAX: '0', TOOLGATE_GREP_TIME_CAP_MS: '500', TOOLGATE_GREP_COLLECT_CAP: '100000000' });
  assert.equal(cut!.ok, true, cut!.text);
  assert.match(cut!.text, /time cap/);
});
