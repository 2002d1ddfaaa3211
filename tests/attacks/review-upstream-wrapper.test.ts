// Review of f12ddcb: with a Node parent's IPC channel above fd 16 an upstream server is started as
// `/bin/bash --norc --noprofile -c 'exec N>&- && exec "$0" "$@"' cmd args…`. The upstream should
// see what it sees when started directly (no channel): same argv, cwd, environment, same errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CLI, tempDir } from '../../src/testing/helpers.js';

const skip = process.platform !== 'linux' && 'Linux /proc';
const CH = 23;

/** `toolgate upstream list` with one stdio upstream; with `ipc` the server's channel is at fd CH. Returns stdout and the upstream's report. */
async function probe(dir: string, ipc: boolean, up: { command: string; env?: Record<string, string> }) {
  const base = path.join(dir, ipc ? 'ipc' : 'plain');
  rmSync(base, { recursive: true, force: true });
  const cwd = path.join(base, `up dir 'q' $x`);
  mkdirSync(cwd, { recursive: true });
  mkdirSync(path.join(base, 'ws'));
  const report = path.join(base, 'report.json');
  const prog = path.join(cwd, 'up.cjs');
  writeFileSync(prog, `#!${process.execPath}\nrequire('fs').writeFileSync(${JSON.stringify(report)}, JSON.stringify({ argv: process.argv.slice(2), cwd: process.cwd(), env: process.env }));\n`);
  chmodSync(prog, 0o755);
  const pol = path.join(base, 'policy.yaml');
  writeFileSync(pol, `version: 1\nsandbox: { backend: none }\nupstreams:\n  probe:\n    command: [${JSON.stringify(up.command === 'PROG' ? prog : up.command)}]\n    args: ${JSON.stringify(['-x', 'a b', "it's", '$HOME', ''])}\n    cwd: ${JSON.stringify(cwd)}\n    env: ${JSON.stringify(up.env ?? {})}\n`);
  const stdio = ipc ? ['ignore', 'pipe', 'ignore', ...Array<'ignore'>(CH - 3).fill('ignore'), 'ipc'] as const : ['ignore', 'pipe', 'ignore'] as const;
  const srv = spawn(process.execPath, [CLI, 'upstream', 'list', '--workspace', path.join(base, 'ws'), '--policy', pol, '--state-dir', path.join(base, 'state')], {
    stdio: [...stdio], env: { ...process.env, TOOLGATE_LOG_LEVEL: 'error' },
  });
  let out = '';
  srv.stdout!.on('data', (c) => { out += c; });
  await new Promise((r) => srv.on('exit', r));
  const rep = existsSync(report) ? JSON.parse(readFileSync(report, 'utf8')) as { argv: string[]; cwd: string; env: Record<string, string> } : null;
  if (rep) rep.cwd = path.relative(base, rep.cwd);
  return { out: out.replaceAll(base, 'BASE'), rep };
}

test('an upstream gets the same argv, cwd and environment with the channel wrapper as without', { skip, timeout: 60_000 }, async (t) => {
  const d = tempDir('tg-r41-up-');
  t.after(d.cleanup);
  const plain = await probe(d.dir, false, { command: 'PROG' });
  const ipc = await probe(d.dir, true, { command: 'PROG' });
  assert.ok(plain.rep && ipc.rep, 'the upstream did not start');
  assert.deepEqual(ipc.rep.argv, plain.rep.argv);
  assert.equal(ipc.rep.cwd, plain.rep.cwd);
  // bash exports PWD and SHLVL (and sources BASH_ENV, below) before the exec.
  assert.deepEqual(Object.keys(ipc.rep.env).sort(), Object.keys(plain.rep.env).sort());
});

test('a missing upstream program fails the same way (ENOENT) with the channel wrapper', { skip, timeout: 60_000 }, async (t) => {
  const d = tempDir('tg-r41-up-');
  t.after(d.cleanup);
  const plain = await probe(d.dir, false, { command: 'no-such-upstream-r41' });
  const ipc = await probe(d.dir, true, { command: 'no-such-upstream-r41' });
  assert.match(plain.out, /ENOENT/);
  // Through bash: exit 127, and the user reads "MCP error -32000: Connection closed".
  assert.match(ipc.out, /ENOENT|not found/, ipc.out);
});

test('BASH_ENV in an upstream\'s env is not run before it (nothing reaches its stdout, the protocol)', { skip, timeout: 60_000 }, async (t) => {
  const d = tempDir('tg-r41-up-');
  t.after(d.cleanup);
  const mark = path.join(d.dir, 'bash-env-ran');
  const script = path.join(d.dir, 'bash-env.sh');
  writeFileSync(script, `touch ${JSON.stringify(mark)}\n`);
  await probe(d.dir, false, { command: 'PROG', env: { BASH_ENV: script } });
  assert.equal(existsSync(mark), false);
  await probe(d.dir, true, { command: 'PROG', env: { BASH_ENV: script } });
  assert.equal(existsSync(mark), false, 'the wrapper bash sourced the upstream\'s BASH_ENV');
});
