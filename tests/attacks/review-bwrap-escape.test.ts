// Review 31 (bubblewrap after --cap-drop ALL). Four ways out of the sandbox (five tests, 2b below) that the dropped
// capabilities do not close:
//  1. High (toolgate run by root): bwrap covers /proc/sys read-only only when access(W_OK) on the
//     folder succeeds, and the sysctl root folder always says EACCES: /proc/sys stays writable, and
//     sysctl files check the owner bits for uid 0, not a capability. A command wrote
//     kernel.core_pattern = "|<workspace>/pwn.sh", crashed a `sleep`, and the kernel ran pwn.sh as
//     root with every capability in the host's namespaces.
//  2. High (any user): the mask index keeps `real/a.pem` after `real` became a link (drain() drops
//     the descendants of a path only when it is gone), and ancestorsToPin() binds `real` onto itself
//     read-write with stat(), which follows the link: bwrap then binds the link's target — a folder
//     outside the workspace — writable into the sandbox.
//  3. Medium/High: --unshare-net does not cut Unix sockets that have a path: with no network a
//     command still reached a host service's socket in the user's runtime dir (the session bus is
//     `systemd-run --user`, i.e. a process outside the sandbox; /run/dbus and docker.sock for root).
//  4. Medium: no --unshare-ipc: a command read and wrote the host's System V shared memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';
import { detectBwrap } from '../../src/exec/sandbox.js';

const POLICY = 'sandbox: { backend: bwrap }\nrules:\n  - tool: run_command\n    decision: allow\n';
const output = (env: { data: unknown }) => String((env.data as { output?: string } | null)?.output ?? '');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('bwrap: /proc/sys is read-only to a command, also when the server runs as root', async (t) => {
  if (!(await detectBwrap())) { t.skip('no usable bubblewrap'); return; }
  if (process.getuid?.() !== 0) { t.skip('only root can write sysctls through the owner bits'); return; }
  const { dir, cleanup } = tempDir('tg-rv31-sys-');
  t.after(cleanup);
  const h = new Harness([dir], { policy: policyFromYaml(POLICY) });
  t.after(() => h.close());
  // Opened for appending, nothing written: the kernel's permission check without changing a setting.
  // (What this allowed: echo "|$PWD/pwn.sh" > core_pattern, then any crash runs pwn.sh as host root.)
  writeFileSync(path.join(dir, 'probe.sh'), [
    'for f in /proc/sys/kernel/core_pattern /proc/sys/kernel/hostname /proc/sys/vm/drop_caches; do',
    '  if : >> "$f" 2>/dev/null; then echo "WRITABLE $f"; else echo "refused $f"; fi',
    'done', ''].join('\n'));
  const out = output(await h.call('run_command', { command: 'bash probe.sh' }));
  assert.match(out, /refused \/proc\/sys\/kernel\/core_pattern/, out);
  assert.doesNotMatch(out, /WRITABLE/, out);
});

test('bwrap: a folder swapped for a link out of the workspace is never bound writable', async (t) => {
  if (!(await detectBwrap())) { t.skip('no usable bubblewrap'); return; }
  // Outside /tmp: the sandbox's /tmp is its own, and a link to a folder there has nothing to bind onto.
  let base: string;
  try { base = mkdtempSync('/var/tmp/tg-rv31-link-'); } catch { t.skip('/var/tmp is not writable'); return; }
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const ws = path.join(base, 'ws');
  const outside = path.join(base, 'outside');
  mkdirSync(ws);
  mkdirSync(outside);
  const h = new Harness([ws], { policy: policyFromYaml(POLICY) });
  t.after(() => h.close());
  // A background command makes a folder holding a secret, and once the index has seen it (the next
  // command below) swaps the folder for a link to ../outside.
  writeFileSync(path.join(ws, 'swap.sh'), 'mkdir real && : > real/a.pem\nsleep 2\nmv real real2 && ln -s ../outside real\nsleep 1\n');
  const bg = await h.call('run_command', { command: 'bash swap.sh', background: true });
  assert.equal(bg.ok, true, JSON.stringify(bg));
  await sleep(500);
  assert.match(output(await h.call('run_command', { command: 'echo seen' })), /seen/);
  await sleep(3000);
  writeFileSync(path.join(ws, 'w.sh'), `echo from-the-sandbox > ${JSON.stringify(path.join(outside, 'PWNED'))}\n`);
  const env = await h.call('run_command', { command: 'bash w.sh' });
  assert.equal(existsSync(path.join(outside, 'PWNED')), false, `a command wrote outside the workspace: ${output(env)}`);
});

test('bwrap: without network a command reaches no host service through a Unix socket in the runtime dir', async (t) => {
  if (!(await detectBwrap())) { t.skip('no usable bubblewrap'); return; }
  // The sandbox's /tmp is its own: the runtime dir must be elsewhere to be seen at all (/run/user/UID is).
  let runDir: string;
  try { runDir = mkdtempSync('/var/tmp/tg-rv31-run-'); } catch { t.skip('/var/tmp is not writable'); return; }
  t.after(() => rmSync(runDir, { recursive: true, force: true }));
  const saved = process.env.XDG_RUNTIME_DIR;
  process.env.XDG_RUNTIME_DIR = runDir;
  t.after(() => { if (saved === undefined) delete process.env.XDG_RUNTIME_DIR; else process.env.XDG_RUNTIME_DIR = saved; });
  // Stands for the session bus ($XDG_RUNTIME_DIR/bus: systemd --user runs what it is sent, unsandboxed).
  const sock = path.join(runDir, 'bus');
  const got: string[] = [];
  const server = net.createServer((c) => { c.on('data', (d) => { got.push(String(d)); c.end('HTTP/1.0 200 OK\r\n\r\nran\n'); }); });
  await new Promise<void>((r) => server.listen(sock, r));
  t.after(() => server.close());
  const { dir, cleanup } = tempDir('tg-rv31-sock-');
  t.after(cleanup);
  const h = new Harness([dir], { policy: policyFromYaml(POLICY) });
  t.after(() => h.close());
  const env = await h.call('run_command', { command: `curl -s -m 3 --unix-socket ${sock} http://x/StartTransientUnit; echo "rc=$?"` });
  await sleep(200);
  assert.equal(env.ok, true, JSON.stringify(env));
  assert.deepEqual(got, [], `the host service got: ${JSON.stringify(got)}; the command printed: ${output(env)}`);
});

test('bwrap: a command cannot see or attach the host\'s System V shared memory', async (t) => {
  if (!(await detectBwrap())) { t.skip('no usable bubblewrap'); return; }
  const mk = spawnSync('ipcmk', ['-M', '64', '-p', '0600'], { encoding: 'utf8' });
  const id = /(\d+)\s*$/.exec(mk.stdout ?? '')?.[1];
  if (mk.status !== 0 || !id) { t.skip('ipcmk (util-linux) is missing'); return; }
  t.after(() => spawnSync('ipcrm', ['-m', id]));
  const { dir, cleanup } = tempDir('tg-rv31-ipc-');
  t.after(cleanup);
  const h = new Harness([dir], { policy: policyFromYaml(POLICY) });
  t.after(() => h.close());
  const out = output(await h.call('run_command', { command: `ipcs -m -i ${id} 2>&1; echo done` }));
  assert.match(out, /done/, out);
  assert.doesNotMatch(out, /Shared memory Segment shmid=/i, out);
});

// 2b. High (any user), what is left of 2 once the index forgets a folder turned link and the pins
// look with lstat: bwrap resolves the paths when it mounts, a moment after bwrapArgs looked. A
// background command that keeps exchanging `real` (a folder with a secret) and a link to
// ../outside (renameat2 RENAME_EXCHANGE) won the race within a few commands.
test('bwrap: a folder exchanged for a link while a sandbox starts is never bound writable', async (t) => {
  if (!(await detectBwrap())) { t.skip('no usable bubblewrap'); return; }
  if (spawnSync('python3', ['-c', 'import ctypes']).status !== 0) { t.skip('python3 is missing'); return; }
  let base: string;
  try { base = mkdtempSync('/var/tmp/tg-rv31-race-'); } catch { t.skip('/var/tmp is not writable'); return; }
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const ws = path.join(base, 'ws');
  const outside = path.join(base, 'outside');
  mkdirSync(ws);
  mkdirSync(outside);
  const h = new Harness([ws], { policy: policyFromYaml(POLICY) });
  t.after(() => h.close());
  writeFileSync(path.join(ws, 'flip.py'), [
    'import ctypes, os, time',
    'libc = ctypes.CDLL(None, use_errno=True)',
    "os.mkdir('real'); open('real/a.pem', 'w').close(); os.symlink('../outside', 'lnk')",
    'time.sleep(1.0)',
    'end = time.time() + 40',
    'while time.time() < end and not os.path.exists("../outside/PWNED") and not os.path.exists("STOP"):',
    "    libc.renameat2(-100, b'real', -100, b'lnk', 2)",
    '    time.sleep(0.0005)', ''].join('\n'));
  writeFileSync(path.join(ws, 'w.sh'), `echo from-the-sandbox > ${JSON.stringify(path.join(outside, 'PWNED'))} 2>/dev/null && echo ESCAPED\n`);
  const bg = await h.call('run_command', { command: 'python3 flip.py', background: true });
  assert.equal(bg.ok, true, JSON.stringify(bg));
  await sleep(1500);
  let tries = 0;
  for (; tries < 150 && !existsSync(path.join(outside, 'PWNED')); tries++) await h.call('run_command', { command: 'bash w.sh' });
  // The flipper stops before the folder is removed (it kept making entries in it: ENOTEMPTY).
  writeFileSync(path.join(ws, 'STOP'), '');
  await sleep(100);
  assert.equal(existsSync(path.join(outside, 'PWNED')), false, `a command wrote outside the workspace after ${tries} commands`);
});
