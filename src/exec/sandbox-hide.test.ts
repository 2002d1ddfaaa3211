// Review 33: with network allowed, /etc/resolv.conf is brought back into a hidden /run link by
// link and as the one file it ends at — not its folder, which holds systemd-resolved's sockets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { hideRuntime, resolvConfBack } from './sandbox-hide.js';
import { detectBwrap } from './sandbox.js';
import { tempDir } from '../testing/helpers.js';

test('resolv.conf through a chain of links into a hidden folder: the links are made again, the file alone bound back', async (t) => {
  const { dir, cleanup } = tempDir('tg-resolv-');
  t.after(cleanup);
  const D = realpathSync(dir);
  mkdirSync(`${D}/etc`);
  mkdirSync(`${D}/run/b`, { recursive: true });
  writeFileSync(`${D}/run/b/r.conf`, 'nameserver 192.0.2.53\n');
  symlinkSync('b/r.conf', `${D}/run/a.conf`);
  symlinkSync('../run/a.conf', `${D}/etc/resolv.conf`);
  // A socket beside the file, as resolved keeps its varlink sockets there.
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(`${D}/run/b/io.sock`, r));
  t.after(() => server.close());
  const back = resolvConfBack([`${D}/run`], `${D}/etc/resolv.conf`);
  assert.deepEqual(back, ['--symlink', 'b/r.conf', `${D}/run/a.conf`, '--ro-bind', `${D}/run/b/r.conf`, `${D}/run/b/r.conf`]);
  const bwrap = await detectBwrap();
  if (!bwrap) { t.diagnostic('no usable bubblewrap: the sandbox half skipped'); return; }
  const r = spawnSync(bwrap, ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', `${D}/run`, ...back, '--remount-ro', `${D}/run`, '--',
    '/bin/sh', '-c', `cat ${D}/etc/resolv.conf; ls ${D}/run/b`], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, 'nameserver 192.0.2.53\nr.conf\n');
});

test('resolv.conf that is a plain file outside the hidden folders needs nothing', () => {
  const { dir, cleanup } = tempDir('tg-resolv2-');
  try {
    writeFileSync(`${dir}/resolv.conf`, 'nameserver 192.0.2.1\n');
    assert.deepEqual(resolvConfBack(['/run'], `${dir}/resolv.conf`), []);
  } finally { cleanup(); }
});

test('a runtime folder named through a link is hidden as the folder it is (review 33)', (t) => {
  const { dir, cleanup } = tempDir('tg-xdg-');
  t.after(cleanup);
  const D = realpathSync(dir);
  mkdirSync(`${D}/real-run`);
  symlinkSync(`${D}/real-run`, `${D}/xdg`);
  const saved = process.env.XDG_RUNTIME_DIR;
  process.env.XDG_RUNTIME_DIR = `${D}/xdg`;
  t.after(() => { if (saved === undefined) delete process.env.XDG_RUNTIME_DIR; else process.env.XDG_RUNTIME_DIR = saved; });
  const { hidden, args } = hideRuntime({ roots: ['/nonexistent-ws'], home: '/nonexistent-home', network: false });
  assert.ok(hidden.includes(`${D}/real-run`), JSON.stringify(hidden));
  assert.ok(args.includes(`${D}/real-run`));
});
