import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, fstatSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { hardLocks, isMarked, MARK, MARK_BASH, markingOn } from '../exec/mark.js';
import { judgePeer, systemSs, tcpPeerPids } from './peer.js';

const LINUX = process.platform === 'linux';
const SS = systemSs() !== '';
const SELF_MARKED = LINUX && isMarked(process.pid) === true;
const skipLinux = !LINUX ? 'the mark needs Linux' : SELF_MARKED ? 'this test process itself runs inside a toolgate command (it carries the mark)' : false;

test('hardLocks reads the hard limit of /proc/PID/limits', () => {
  const text = 'Limit                     Soft Limit           Hard Limit           Units\nMax file locks            unlimited            999999               locks\n';
  assert.equal(hardLocks(text), 999_999);
  assert.equal(hardLocks(text.replace('999999 ', 'unlimited')), Infinity);
  assert.equal(hardLocks('Max open files 1024 1024 files\n'), null);
});

test('a process marked by MARK_BASH carries the mark through setsid and a double fork; this process does not', { skip: skipLinux }, async () => {
  assert.equal(markingOn(), true);
  assert.equal(isMarked(process.pid), false);
  const out = spawnSync('/bin/bash', ['-c', `${MARK_BASH} setsid -f bash -c '(sleep 3 >/dev/null 2>&1 & echo $!)' ; sleep 0.3`], { encoding: 'utf8' });
  const pid = Number(out.stdout.trim().split('\n').pop());
  assert.ok(pid > 0, out.stderr);
  assert.equal(isMarked(pid), true);
  process.kill(pid);
});

test('a marked process that is not root cannot raise the limit back (the premise of the mark)', { skip: !LINUX ? 'needs Linux' : process.getuid?.() === 0 && spawnSync('setpriv', ['--version']).status !== 0 ? 'needs setpriv (util-linux) to drop root' : false }, () => {
  const script = `${MARK_BASH} ulimit -x unlimited && echo RAISED; ulimit -H -x`;
  const argv = process.getuid?.() === 0 ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '/bin/bash', '-c', script] : ['/bin/bash', '-c', script];
  const r = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8' });
  assert.doesNotMatch(r.stdout, /RAISED/);
  assert.equal(r.stdout.trim(), String(MARK));
});

/** A server on `where` whose every connection is judged; resolves with the verdict of the first. */
function judged(kind: 'unix' | 'tcp', ss?: string) {
  const file = path.join(os.tmpdir(), `tg-peer-${process.pid}-${Math.random().toString(36).slice(2)}.sock`);
  let verdict!: Promise<Awaited<ReturnType<typeof judgePeer>>>;
  const got = new Promise<void>((resolve) => {
    const srv = net.createServer((c) => {
      c.on('error', () => {});
      // Judged once the request came, as the socket server does.
      c.once('data', () => {
        c.on('data', () => {});
        verdict = judgePeer(kind, c, ss === undefined ? {} : { ss });
        void verdict.then(() => { c.end('done\n'); srv.close(); resolve(); });
      });
    });
    if (kind === 'unix') srv.listen(file); else srv.listen(0, '127.0.0.1');
    srv.on('listening', () => ready((srv.address() as net.AddressInfo | string)));
  });
  let ready!: (a: net.AddressInfo | string) => void;
  const addr = new Promise<net.AddressInfo | string>((r) => { ready = r; });
  return { addr, got, verdict: () => verdict, cleanup: () => rmSync(file, { force: true }) };
}

/** node -e that connects, waits for the reply, and exits; marked when `mark`. */
function connector(addr: net.AddressInfo | string, mark: boolean) {
  const target = typeof addr === 'string' ? JSON.stringify(addr) : `${addr.port},'127.0.0.1'`;
  const js = `const c=require('net').connect(${target},()=>c.write('x\\n'));c.on('data',()=>process.exit(0));setTimeout(()=>process.exit(2),10000)`;
  return mark ? spawn('/bin/bash', ['-c', `${MARK_BASH} exec "$0" -e "$1"`, process.execPath, js]) : spawn(process.execPath, ['-e', js]);
}

for (const kind of ['unix', 'tcp'] as const) {
  const skip = skipLinux || (kind === 'unix' && !SS ? 'needs ss (iproute2) to find the peer of a Unix socket' : false);
  test(`${kind}: the sender is found; a marked one is refused, an unmarked one taken`, { skip }, async () => {
    for (const mark of [true, false]) {
      const j = judged(kind);
      const child = connector(await j.addr, mark);
      await j.got;
      const v = await j.verdict();
      assert.equal(v.ok, !mark, JSON.stringify(v));
      if (!v.ok) assert.match(v.message, new RegExp(`agent's command started \\(pid ${child.pid}\\b`));
      else assert.match(v.how, new RegExp(`pid ${child.pid}\\b`));
      j.cleanup();
    }
  });
}

test('tcp: /proc/net/tcp names the client of a loopback connection', { skip: skipLinux }, async () => {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const accepted = new Promise<net.Socket>((r) => srv.once('connection', r));
  const c = net.connect((srv.address() as net.AddressInfo).port, '127.0.0.1');
  const s = await accepted;
  assert.deepEqual(await tcpPeerPids(s), [process.pid]);
  c.destroy();
  s.destroy();
  srv.close();
});

test('unix without ss: while a marked process runs, an answer over the socket is refused and says why', { skip: skipLinux }, async () => {
  const marked = spawn('/bin/bash', ['-c', `${MARK_BASH} exec sleep 5`]);
  await new Promise((r) => setTimeout(r, 200));
  const j = judged('unix', '');
  const child = connector(await j.addr, false);
  await j.got;
  const v = await j.verdict();
  assert.equal(v.ok, false);
  assert.match((v as { message: string }).message, /`ss` from iproute2 is missing/);
  marked.kill();
  child.kill();
  j.cleanup();
});

test('a sender that exits before it is looked at is refused', { skip: skipLinux || (!SS ? 'needs ss (iproute2)' : false) }, async () => {
  const j = judged('unix');
  const addr = await j.addr;
  spawnSync(process.execPath, ['-e', `const c=require('net').connect(${JSON.stringify(addr)},()=>{c.write('x\\n');process.exit(0)})`]);
  await j.got;
  const v = await j.verdict();
  assert.equal(v.ok, false, JSON.stringify(v));
  j.cleanup();
});

test('an ss found first in PATH (a folder of the user\'s a command can write) is not the one asked', { skip: skipLinux || (!SS ? 'needs ss (iproute2)' : false) }, async () => {
  // A socket held by this (unmarked) process: the fake ss names it as every row's peer.
  const decoy = net.createServer((c) => c.on('data', () => {}));
  await new Promise<void>((r) => decoy.listen(0, '127.0.0.1', r));
  const held = net.connect((decoy.address() as net.AddressInfo).port, '127.0.0.1');
  await new Promise((r) => held.once('connect', r));
  const x = fstatSync((held as unknown as { _handle: { fd: number } })._handle.fd).ino;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tg-fake-ss-'));
  writeFileSync(path.join(dir, 'ss'), `#!/bin/sh\n${systemSs()} "$@" | awk -v x=${x} '$6 != x { $NF = x; print }'\n`);
  chmodSync(path.join(dir, 'ss'), 0o755);
  const old = process.env.PATH;
  process.env.PATH = `${dir}:${old}`;
  try {
    const j = judged('unix');
    const child = connector(await j.addr, true);
    await j.got;
    const v = await j.verdict();
    assert.equal(v.ok, false, JSON.stringify(v));
    assert.match((v as { message: string }).message, new RegExp(`pid ${child.pid}\\b`));
    j.cleanup();
  } finally {
    process.env.PATH = old;
    rmSync(dir, { recursive: true, force: true });
    held.destroy();
    decoy.close();
  }
});

test('a socket path holding newlines cannot forge a row of ss: the sender is still found and refused', { skip: skipLinux || (!SS ? 'needs ss (iproute2)' : false) }, async () => {
  const j = judged('unix');
  const addr = await j.addr as string;
  // The marked sender connects, then binds 40 sockets whose paths hold a row naming its own end
  // (and ours) as held by this unmarked process, connects to each, and only then sends.
  const js = `const net=require('net'),fs=require('fs');const c=net.connect(${JSON.stringify(addr)},async()=>{` +
    `const me=fs.fstatSync(c._handle.fd).ino;const keep=[];for(let i=0;i<40;i++){` +
    `const p='/tmp/tg-forge-'+process.pid+'-'+i+'\\nu_str ESTAB 0 0 * '+me+' * 1 users:(("person",pid=${process.pid},fd=3))\\nu_str ESTAB 0 0 * 1 * '+me+'\\n';` +
    `const s=net.createServer(k=>keep.push(k));await new Promise(r=>s.listen(p,r));keep.push(s,net.connect(p));}` +
    `await new Promise(r=>setTimeout(r,300));c.write('x\\n');c.on('data',()=>process.exit(0))});setTimeout(()=>process.exit(2),10000)`;
  const child = spawn('/bin/bash', ['-c', `${MARK_BASH} exec "$0" -e "$1"`, process.execPath, js]);
  await j.got;
  const v = await j.verdict();
  assert.equal(v.ok, false, JSON.stringify(v));
  child.kill();
  j.cleanup();
  spawnSync('/bin/sh', ['-c', 'rm -f /tmp/tg-forge-*']);
});
