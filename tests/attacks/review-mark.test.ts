// Review 13 of the mark that keeps an agent's command from answering approvals without a sandbox
// (src/exec/mark.ts, src/approvals/peer.ts): SIGUSR1 must not open Node's inspector — code sent to
// it would run inside the unmarked server (or the starter), past every rule and approval.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { HELPER_NODE_ARGS, HELPER_SOURCE } from '../../src/exec/starter-program.js';
import { connectStdio, tempDir } from '../../src/testing/helpers.js';

const linux = process.platform === 'linux' ? false : 'SIGUSR1 and the inspector: tried on Linux';

async function noDebugger(stderr: () => string, pid: number) {
  process.kill(pid, 'SIGUSR1');
  await new Promise((r) => setTimeout(r, 700));
  assert.doesNotMatch(stderr(), /Debugger listening/);
}

test('SIGUSR1 opens no inspector in the server; it goes on serving', { skip: linux }, async (t) => {
  const ws = tempDir('tg-usr1-');
  const conn = await connectStdio(['--workspace', ws.dir]);
  t.after(() => { void conn.close(); ws.cleanup(); });
  let err = '';
  (conn.transport.stderr as unknown as NodeJS.ReadableStream).on('data', (d: Buffer) => { err += d.toString(); });
  await noDebugger(() => err, conn.transport.pid!);
  assert.ok((await conn.client.listTools()).tools.length > 10);
});

test('SIGUSR1 opens no inspector in the starter', { skip: linux }, async () => {
  const child = spawn(process.execPath, [...HELPER_NODE_ARGS, '-e', HELPER_SOURCE], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => { err += d.toString(); });
  await new Promise((r) => setTimeout(r, 400));
  try {
    await noDebugger(() => err, child.pid!);
    assert.equal(child.exitCode, null, 'still running');
  } finally {
    child.kill('SIGKILL');
  }
});

test('an inspector opened before toolgate\'s first line ran (SIGUSR1 at start-up) stops the process; --inspect on purpose does not', { skip: linux }, async () => {
  const { spawnSync } = await import('node:child_process');
  const { CLI } = await import('../../src/testing/helpers.js');
  // What a SIGUSR1 in the first milliseconds leaves behind: an inspector open, and no --inspect asked for.
  const opened = spawnSync(process.execPath, ['-e', `require('inspector').open(0,'127.0.0.1');process.argv.splice(1,0,${JSON.stringify(CLI)});import(${JSON.stringify(CLI)})`, '--', '--version'], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(opened.status, 70, opened.stdout + opened.stderr);
  assert.match(opened.stderr, /inspector was opened while toolgate started/);
  const asked = spawnSync(process.execPath, ['--inspect=127.0.0.1:0', CLI, '--version'], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(asked.status, 0, asked.stderr);
});
