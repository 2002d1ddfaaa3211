// Why toolgate does not hand its temp-file + fsync + rename step to `write-file-atomic`
// (the design card names it; the dependency stays only as a devDependency for this test).
// write-file-atomic starts with realpath(filename) and then creates the temp file and renames
// by path. Pointed at the pinned folder (/proc/self/fd/N/name), realpath still follows a final
// symlink swapped in after toolgate's checks, so the write lands OUTSIDE the workspace — the
// race guarantee of src/fs-write/atomic-write.ts (tests/attacks/write-race.test.ts) is lost.
// The same situation through toolgate's own atomicWrite is refused and changes nothing.
import assert from 'node:assert/strict';
import { lstatSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import writeFileAtomic from 'write-file-atomic';
import { tempDir } from '../testing/helpers.js';
import { atomicWrite } from './atomic-write.js';
import { pinDir } from './pinned-dir.js';

const linuxOnly = process.platform === 'linux' ? false : 'needs Linux (/proc/self/fd pinning)';

/** A workspace folder `ws/sub` holding `name`, and a file outside the workspace. */
function setup() {
  const t = tempDir('tg-wfa-');
  const sub = path.join(t.dir, 'ws', 'sub');
  const outside = path.join(t.dir, 'outside', 'secret.txt');
  mkdirSync(sub, { recursive: true });
  mkdirSync(path.dirname(outside));
  writeFileSync(outside, 'ORIGINAL OUTSIDE\n');
  writeFileSync(path.join(sub, 'name'), 'checked content\n');
  const checked = statSync(path.join(sub, 'name'));
  // After toolgate checked `name`, an attacker swaps it for a symlink pointing outside.
  const swap = () => {
    unlinkSync(path.join(sub, 'name'));
    symlinkSync(outside, path.join(sub, 'name'));
  };
  return { t, sub, outside, checked, swap };
}

test('write-file-atomic through the pinned folder follows a swapped-in symlink out of the workspace', { skip: linuxOnly }, async () => {
  const { t, sub, outside, swap } = setup();
  try {
    const dir = await pinDir(sub, 'sub');
    try {
      swap();
      await writeFileAtomic(dir.at('name'), 'WRITTEN BY AGENT\n');
    } finally {
      await dir.close();
    }
    // The file outside the workspace was replaced: the pinned folder did not help.
    assert.equal(readFileSync(outside, 'utf8'), 'WRITTEN BY AGENT\n');
    assert.ok(lstatSync(path.join(sub, 'name')).isSymbolicLink(), 'the workspace entry is still the link');
  } finally {
    t.cleanup();
  }
});

test('toolgate\'s atomicWrite refuses the same swap and changes nothing outside', { skip: linuxOnly }, async () => {
  const { t, sub, outside, checked, swap } = setup();
  try {
    swap();
    await assert.rejects(
      atomicWrite(path.join(sub, 'name'), 'sub/name', Buffer.from('WRITTEN BY AGENT\n'), checked, false),
      (e: Error & { code?: string }) => e.code === 'PathTraversalBlocked',
    );
    assert.equal(readFileSync(outside, 'utf8'), 'ORIGINAL OUTSIDE\n');
    assert.deepEqual(readdirSync(path.dirname(outside)), ['secret.txt'], 'no temp file left outside');
    assert.deepEqual(readdirSync(sub), ['name'], 'no temp file left in the folder');
  } finally {
    t.cleanup();
  }
});

test('control: both write a plain file in the pinned folder', { skip: linuxOnly }, async () => {
  const { t, sub, checked } = setup();
  try {
    await atomicWrite(path.join(sub, 'name'), 'sub/name', Buffer.from('via toolgate\n'), checked, false);
    assert.equal(readFileSync(path.join(sub, 'name'), 'utf8'), 'via toolgate\n');
    const dir = await pinDir(sub, 'sub');
    try {
      await writeFileAtomic(dir.at('name'), 'via write-file-atomic\n');
    } finally {
      await dir.close();
    }
    assert.equal(readFileSync(path.join(sub, 'name'), 'utf8'), 'via write-file-atomic\n');
  } finally {
    t.cleanup();
  }
});
