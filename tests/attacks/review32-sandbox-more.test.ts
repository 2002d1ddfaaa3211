// Review 32, what is left around the review-31 fixes besides the read-only race
// (review32-ro-race.test.ts):
//  1. Low (functional): a workspace holding a mount point of another file system (a tmpfs, a second
//     disk, a host bind mount) with a secret below it: the pin check expects the pin to carry the
//     device and root of the workspace's mount, finds the host's mount there, and refuses every
//     command ("Run it again").
//  2. Medium: hiding /run is a deny list. Host services' sockets elsewhere stay reachable without
//     network (a Unix socket on the read-only / still connects): ~/.docker/desktop/docker.sock
//     (Docker Desktop), ~/.colima, ~/.rd (Rancher Desktop), /var/snap/lxd/common/lxd/unix.socket and
//     /var/lib/lxd (LXD: the default Ubuntu user is in group lxd), /var/lib/mysql/mysql.sock…
//  3. Low/Medium: with network allowed the command shares the host's network namespace, so every
//     abstract Unix socket of the host is reachable (X11's @/tmp/.X11-unix/X0 with
//     si:localuser, containerd-shim's on old containerd, a D-Bus on an abstract address).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Harness, policyFromYaml } from '../../src/testing/helpers.js';
import { detectBwrap } from '../../src/exec/sandbox.js';

const POLICY = 'sandbox: { backend: bwrap }\nrules:\n  - tool: run_command\n    decision: allow\n';
const output = (env: { data: unknown }) => String((env.data as { output?: string } | null)?.output ?? '');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('bwrap: a file system mounted inside the workspace, with a secret below it, does not stop every command', async (t) => {
  if (!(await detectBwrap())) { t.skip('no usable bubblewrap'); return; }
  if (process.getuid?.() !== 0) { t.skip('mounting a tmpfs needs root'); return; }
  let base: string;
  try { base = mkdtempSync('/var/tmp/tg-rv32-mnt-'); } catch { t.skip('/var/tmp is not writable'); return; }
  const mnt = path.join(base, 'ws', 'data');
  mkdirSync(mnt, { recursive: true });
  if (spawnSync('mount', ['-t', 'tmpfs', 'tmpfs', mnt]).status !== 0) { rmSync(base, { recursive: true, force: true }); t.skip('cannot mount a tmpfs'); return; }
  t.after(() => { spawnSync('umount', ['-l', mnt]); rmSync(base, { recursive: true, force: true }); });
  mkdirSync(path.join(mnt, 'app'));
  writeFileSync(path.join(mnt, 'app', '.env'), 'TOKEN=1\n');
  const h = new Harness([path.join(base, 'ws')], { policy: policyFromYaml(POLICY) });
  t.after(() => h.close());
  const env = await h.call('run_command', { command: 'echo hello' });
  assert.match(output(env), /^hello$/m, JSON.stringify(env));
});

test('bwrap: without network a command reaches no host service through a socket in the home folder', async (t) => {
  if (!(await detectBwrap())) { t.skip('no usable bubblewrap'); return; }
  let home: string;
  try { home = mkdtempSync('/var/tmp/tg-rv32-home-'); } catch { t.skip('/var/tmp is not writable'); return; }
  t.after(() => rmSync(home, { recursive: true, force: true }));
  const saved = process.env.HOME;
  process.env.HOME = home;
  t.after(() => { if (saved === undefined) delete process.env.HOME; else process.env.HOME = saved; });
  // Where Docker Desktop for Linux keeps the engine's socket (root in its VM, which shares $HOME).
  mkdirSync(path.join(home, '.docker', 'desktop'), { recursive: true });
  const sock = path.join(home, '.docker', 'desktop', 'docker.sock');
  const got: string[] = [];
  const server = net.createServer((c) => { c.on('data', (d) => { got.push(String(d)); c.end('HTTP/1.0 200 OK\r\n\r\n{}\n'); }); });
  await new Promise<void>((r) => server.listen(sock, r));
  t.after(() => server.close());
  const ws = path.join(home, 'ws');
  mkdirSync(ws);
  const h = new Harness([ws], { policy: policyFromYaml(POLICY) });
  t.after(() => h.close());
  const env = await h.call('run_command', { command: `curl -s -m 3 --unix-socket ${sock} http://x/containers/create; echo "rc=$?"` });
  await sleep(200);
  assert.equal(env.ok, true, JSON.stringify(env));
  assert.deepEqual(got, [], `the host service got: ${JSON.stringify(got)}; the command printed: ${output(env)}`);
});

// Not fixed: with network allowed the command is in the host's network namespace, and abstract
// sockets belong to it (Landlock's scoping of them needs Linux 6.12). Written down in the README.
test('bwrap: with network allowed a command reaches no abstract Unix socket of the host', { todo: 'network allowed shares the host network namespace, abstract sockets included (README, "Choices")' }, async (t) => {
  if (!(await detectBwrap())) { t.skip('no usable bubblewrap'); return; }
  let ws: string;
  try { ws = mkdtempSync('/var/tmp/tg-rv32-abs-'); } catch { t.skip('/var/tmp is not writable'); return; }
  t.after(() => rmSync(ws, { recursive: true, force: true }));
  const name = `tg-rv32-${process.pid}`;
  const got: string[] = [];
  // Stands for X11's @/tmp/.X11-unix/X0 (keystrokes into the user's terminal) or a containerd shim.
  const server = net.createServer((c) => { c.on('data', (d) => { got.push(String(d)); c.end(); }); });
  await new Promise<void>((r) => server.listen(`\0${name}`, r));
  t.after(() => server.close());
  writeFileSync(path.join(ws, 'c.js'), `const c = require('node:net').connect(${JSON.stringify(`\0${name}`)}, () => { c.end('from-the-sandbox'); console.log('CONNECTED'); }); c.on('error', (e) => console.log('refused', e.code));\n`);
  const h = new Harness([ws], { policy: policyFromYaml('sandbox: { backend: bwrap, network: allow }\nrules:\n  - tool: run_command\n    decision: allow\n') });
  t.after(() => h.close());
  const env = await h.call('run_command', { command: `${process.execPath} c.js` });
  await sleep(200);
  assert.equal(env.ok, true, JSON.stringify(env));
  assert.deepEqual(got, [], `the host's abstract socket got: ${JSON.stringify(got)}; the command printed: ${output(env)}`);
});
