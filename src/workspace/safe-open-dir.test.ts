// The synchronous small-folder path of list_dir (openDirSync + readDirEntries) against the
// asynchronous one (openDir + readdir): same entries, same types, same refusals.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, unlinkSync, writeFileSync, closeSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { isToolError } from '../core/errors.js';
import { PathRules } from './path-rules.js';
import { openDir, openDirAsync, openDirSync, procFdDir, readDirEntries } from './safe-open.js';
import { Workspace } from './workspace.js';

const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'tg-dirsync-')));
const W = path.join(base, 'ws');
const OUT = path.join(base, 'outside');
mkdirSync(path.join(W, 'many'), { recursive: true });
mkdirSync(path.join(OUT, 'dir'), { recursive: true });
writeFileSync(path.join(OUT, 'dir', 'stolen.txt'), 'x');
for (let i = 0; i < 40; i++) writeFileSync(path.join(W, 'many', `f${i}.txt`), 'x');
for (let i = 0; i < 5; i++) mkdirSync(path.join(W, 'many', `d${i}`));
symlinkSync('f1.txt', path.join(W, 'many', 'link'));
symlinkSync('/nonexistent', path.join(W, 'many', 'dangling'));
try { execFileSync('mkfifo', [path.join(W, 'many', 'fifo')]); } catch { /* no mkfifo: one type fewer */ }
writeFileSync(path.join(W, 'a-file.txt'), 'x');
const ws = new Workspace([W], PathRules.withDefaults([], [], []));
after(() => rmSync(base, { recursive: true, force: true }));

const linux = process.platform === 'linux';
const view = (ds: Array<{ name: string; isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean; isFIFO(): boolean }>) =>
  ds.map((d) => `${d.name}:${d.isFile() ? 'f' : d.isDirectory() ? 'd' : d.isSymbolicLink() ? 'l' : d.isFIFO() ? 'p' : '?'}`).sort();

test('readDirEntries gives readdir\'s entries and types, whether all, some or one are read synchronously', async () => {
  const want = view(await readdir(path.join(W, 'many'), { withFileTypes: true }));
  assert.ok(want.length >= 47);
  for (const syncMax of [1, 7, want.length - 1, want.length, want.length + 1, 1000]) {
    assert.deepEqual(view(await readDirEntries(path.join(W, 'many'), syncMax)), want, `syncMax ${syncMax}`);
  }
});

test('openDirSync reads the folder the check admitted, through its verified descriptor', { skip: linux ? false : 'Linux only (/proc/self/fd)' }, async () => {
  const rp = await ws.resolve('many', 'list');
  const d = openDirSync(rp, ws)!;
  try {
    // This process's own descriptor, by its pid when /proc/self is that pid's folder.
    assert.match(d.path, new RegExp(`^/proc/(self|${process.pid})/fd/${d.fd}$`));
    assert.equal(realpathSync(d.path), path.join(W, 'many'));
    assert.deepEqual(view(await readDirEntries(d.path)), view(await readdir(path.join(W, 'many'), { withFileTypes: true })));
  } finally {
    closeSync(d.fd);
  }
});

test('openDirSync refuses what openDir refuses, with the same codes', { skip: linux ? false : 'Linux only (/proc/self/fd)' }, async () => {
  const outcome = async (f: () => unknown) => {
    try {
      const r = await f();
      if (r && typeof r === 'object' && 'fd' in r) closeSync((r as { fd: number }).fd);
      if (r && typeof r === 'object' && 'fh' in r) await (r as { fh: { close(): Promise<void> } }).fh.close();
      return 'ok';
    } catch (e) {
      return isToolError(e) ? e.code : `thrown ${(e as Error).message}`;
    }
  };
  // A folder swapped for a link (to a folder outside, and to one inside) after the check.
  for (const target of [path.join(OUT, 'dir'), path.join(W, 'many')]) {
    mkdirSync(path.join(W, 'swap'));
    const rp = await ws.resolve('swap', 'list');
    rmSync(path.join(W, 'swap'), { recursive: true });
    symlinkSync(target, path.join(W, 'swap'));
    assert.equal(await outcome(() => openDirSync(rp, ws)), 'PathTraversalBlocked', `sync, link to ${target}`);
    assert.equal(await outcome(() => openDirAsync(rp, ws)), 'PathTraversalBlocked', `async, link to ${target}`);
    unlinkSync(path.join(W, 'swap')); // a link (rmSync refuses a link to a folder on Node 24)
  }
  // A parent folder swapped for a link: O_NOFOLLOW does not see it, the descriptor check does.
  mkdirSync(path.join(W, 'par', 'dir'), { recursive: true });
  const rpChild = await ws.resolve('par/dir', 'list');
  rmSync(path.join(W, 'par'), { recursive: true });
  symlinkSync(OUT, path.join(W, 'par'));
  assert.equal(await outcome(() => openDirSync(rpChild, ws)), 'PathTraversalBlocked', 'sync, parent swapped');
  assert.equal(await outcome(() => openDirAsync(rpChild, ws)), 'PathTraversalBlocked', 'async, parent swapped');
  // A folder swapped for a file, and a folder that vanished.
  mkdirSync(path.join(W, 'gone'));
  const rpFile = await ws.resolve('gone', 'list');
  rmSync(path.join(W, 'gone'), { recursive: true });
  const rpGone = rpFile;
  assert.equal(await outcome(() => openDirSync(rpGone, ws)), await outcome(() => openDirAsync(rpGone, ws)));
  assert.equal(await outcome(() => openDirSync(rpGone, ws)), 'NotFound');
  writeFileSync(path.join(W, 'gone'), 'x');
  assert.equal(await outcome(() => openDirSync(rpFile, ws)), 'InvalidArguments');
  assert.equal(await outcome(() => openDirAsync(rpFile, ws)), 'InvalidArguments');
  // The real folder opens on both paths.
  const ok = await ws.resolve('many', 'list');
  assert.equal(await outcome(() => openDirSync(ok, ws)), 'ok');
  assert.equal(await outcome(() => openDirAsync(ok, ws)), 'ok');
});

test('procFdDir names /proc/<pid>/fd only when /proc/self is that pid; /proc/self/fd otherwise', () => {
  assert.equal(procFdDir(() => '4242', 4242), '/proc/4242/fd');
  // A /proc from another pid namespace: /proc/<our pid> could be another process, never used.
  assert.equal(procFdDir(() => '17', 4242), '/proc/self/fd');
  assert.equal(procFdDir(() => '4242/', 4242), '/proc/self/fd');
  assert.equal(procFdDir(() => { throw new Error('ENOENT: no /proc'); }, 4242), '/proc/self/fd');
});
