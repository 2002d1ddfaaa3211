// A descriptor the server inherited without close-on-exec (a client's, a shell's) must not reach
// the commands it runs: the built server, started with an extra open file at fd 50, closes it at
// start (src/exec/inherited-fds.ts). Checked from outside: the server's /proc/PID/fd, and the
// descriptors of a command it started, directly and through the starter process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CLI, tempDir } from '../../src/testing/helpers.js';

const skip = process.platform !== 'linux' && 'Linux /proc';
const fdsOf = (pid: number) => readdirSync(`/proc/${pid}/fd`).map(Number).sort((a, b) => a - b);
const linkOf = (pid: number, fd: number) => { try { return readlinkSync(`/proc/${pid}/fd/${fd}`); } catch { return ''; } };

function pidOf(cmdline: string): number | undefined {
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try { if (readFileSync(`/proc/${e}/cmdline`, 'utf8') === cmdline) return Number(e); } catch { /* gone */ }
  }
  return undefined;
}

for (const starter of ['off', 'always'] as const) {
  test(`a descriptor the server inherited is closed at start and never reaches a command (starter ${starter})`, { skip, timeout: 30_000 }, async (t) => {
    const d = tempDir('tg-fds-');
    t.after(d.cleanup);
    const ws = path.join(d.dir, 'ws');
    const secret = path.join(d.dir, 'parent-secret.txt');
    writeFileSync(secret, 'the parent\'s file\n');
    const pol = path.join(d.dir, 'policy.yaml');
    writeFileSync(pol, 'version: 1\nsandbox: { backend: none }\nrules:\n  - { tool: run_command, decision: allow }\n');
    mkdirSync(ws);
    // fd 50 of the server: a file its parent (a shell here) left open, without close-on-exec (Node
    // itself marks its lowest inherited descriptors close-on-exec at start: fd 9 would prove nothing).
    // (Node's own spawn passes extra stdio entries with close-on-exec set in the child.)
    const srv = spawn('/bin/bash', ['-c', 'exec 50<"$1"; shift; exec "$@"', 'bash', secret, process.execPath, CLI, '--workspace', ws, '--policy', pol, '--state-dir', path.join(d.dir, 'state'), '--console', 'off'], {
      stdio: ['pipe', 'pipe', 'ignore'],
      env: { ...process.env, TOOLGATE_LOG_LEVEL: 'error', TOOLGATE_STARTER: starter },
    });
    t.after(() => srv.kill('SIGKILL'));
    let buf = '';
    const waiters = new Map<number, (m: { result?: { structuredContent?: { data?: { id?: string } } } }) => void>();
    srv.stdout!.on('data', (c) => {
      buf += c;
      for (let i; (i = buf.indexOf('\n')) >= 0; buf = buf.slice(i + 1)) { const m = JSON.parse(buf.slice(0, i)); waiters.get(m.id)?.(m); }
    });
    let id = 0;
    const req = (method: string, params: unknown) => new Promise<{ result?: { structuredContent?: { data?: { id?: string } } } }>((r) => { const k = ++id; waiters.set(k, r); srv.stdin!.write(JSON.stringify({ jsonrpc: '2.0', id: k, method, params }) + '\n'); });
    await req('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } });
    srv.stdin!.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
    assert.ok(!fdsOf(srv.pid!).some((fd) => linkOf(srv.pid!, fd) === secret), `the server still holds the inherited file: ${fdsOf(srv.pid!).map((fd) => `${fd}→${linkOf(srv.pid!, fd)}`).join(', ')} ${readFileSync(`/proc/${srv.pid}/cmdline`, 'utf8')}`);
    // Two commands, the second through the starter when it is on (the first launches it): both checked.
    // Marks of this run only (a command left by another run must not be taken for this one's).
    for (const mark of [`31.${process.pid}1`, `31.${process.pid}2`]) {
      const r = await req('tools/call', { name: 'run_command', arguments: { command: `sleep ${mark}`, background: true } });
      assert.ok(r.result?.structuredContent?.data?.id, JSON.stringify(r));
      let pid: number | undefined;
      for (let i = 0; i < 100 && !(pid = pidOf(`sleep\0${mark}\0`)); i++) await new Promise((res) => setTimeout(res, 20));
      assert.ok(pid, `sleep ${mark} not found`);
      const found = pid;
      t.after(() => { try { process.kill(found, 'SIGKILL'); } catch { /* gone */ } });
      const fds = fdsOf(pid);
      assert.ok(!fds.some((fd) => linkOf(pid!, fd) === secret), `the command holds the server's inherited file: ${fds.map((fd) => `${fd}→${linkOf(pid!, fd)}`).join(', ')}`);
      assert.deepEqual(fds, [0, 1, 2], `the command holds more than its stdio: ${fds.map((fd) => `${fd}→${linkOf(pid!, fd)}`).join(', ')}`);
    }
  });
}
