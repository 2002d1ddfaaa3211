import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, closeSync, constants, mkdirSync, openSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { tempDir } from '../../testing/helpers.js';
import { readIgnoreFileSync } from './ignore-stack.js';

// readIgnoreFileSync looks (lstat, which cannot block or follow) before it opens: the look must
// decide nothing but "no such name". Every other refusal is the open's (O_NOFOLLOW|O_NONBLOCK)
// and fstat's: a link, a FIFO, a folder, a file too big, a path it cannot reach.

const linux = process.platform === 'linux';
const hasMkfifo = linux && spawnSync('mkfifo', ['--version']).status === 0;
const isRoot = process.getuid?.() === 0;

test('readIgnoreFileSync: reads a plain file (also through /proc/self/fd/N), refuses links, FIFOs, folders, big files and paths it cannot reach, and never blocks or throws', { timeout: 10_000 }, (t) => {
  const d = tempDir('tg-ignore-read-');
  t.after(d.cleanup);
  const dir = path.join(d.dir, 'ws');
  const out = path.join(d.dir, 'outside');
  mkdirSync(dir);
  mkdirSync(out);
  writeFileSync(path.join(out, 'rules'), 'OUTSIDE-RULE\n');
  writeFileSync(path.join(dir, '.gitignore'), '*.o\n');
  // Links: to a file outside, to one inside, dangling, to a folder.
  symlinkSync(path.join(out, 'rules'), path.join(dir, '.ignore'));
  writeFileSync(path.join(dir, 'inside-rules'), 'INSIDE-RULE\n');
  symlinkSync('inside-rules', path.join(dir, '.rgignore'));
  mkdirSync(path.join(dir, 'a'));
  symlinkSync(path.join(dir, 'nowhere'), path.join(dir, 'a/.gitignore'));
  symlinkSync(out, path.join(dir, 'a/.ignore'));
  // A folder under the name, a file past the size bound, a file whose folder is not a folder.
  mkdirSync(path.join(dir, 'b/.gitignore'), { recursive: true });
  writeFileSync(path.join(dir, 'b/.ignore'), `${'#'.repeat(1024 * 1024)}\nBIG-RULE\n`);
  writeFileSync(path.join(dir, 'c'), 'not a folder');

  assert.equal(readIgnoreFileSync(dir, '.gitignore'), '*.o\n');
  const fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    if (linux) assert.equal(readIgnoreFileSync(`/proc/self/fd/${fd}`, '.gitignore'), '*.o\n');
  } finally {
    closeSync(fd);
  }
  const refused: Array<[string, string]> = [
    [dir, '.ignore'], [dir, '.rgignore'], [path.join(dir, 'a'), '.gitignore'], [path.join(dir, 'a'), '.ignore'],
    [path.join(dir, 'b'), '.gitignore'], [path.join(dir, 'b'), '.ignore'], [path.join(dir, 'c'), '.gitignore'],
    [path.join(dir, 'missing'), '.gitignore'], [dir, 'no-such-name'], [dir, `${'x'.repeat(300)}/.gitignore`],
  ];
  if (hasMkfifo) {
    // A FIFO under the name, and a link to one: the open must not wait for a writer.
    mkdirSync(path.join(dir, 'f'));
    assert.equal(spawnSync('mkfifo', [path.join(dir, 'f/.gitignore'), path.join(out, 'fifo')]).status, 0);
    symlinkSync(path.join(out, 'fifo'), path.join(dir, 'f/.ignore'));
    refused.push([path.join(dir, 'f'), '.gitignore'], [path.join(dir, 'f'), '.ignore']);
  }
  if (!isRoot) {
    // A folder this user may not search: the look fails (EACCES) and is refused like the open.
    mkdirSync(path.join(dir, 'locked'));
    writeFileSync(path.join(dir, 'locked/.gitignore'), 'LOCKED\n');
    chmodSync(path.join(dir, 'locked'), 0o000);
    t.after(() => chmodSync(path.join(dir, 'locked'), 0o755));
    refused.push([path.join(dir, 'locked'), '.gitignore']);
  }
  for (const [p, name] of refused) {
    const t0 = Date.now();
    assert.equal(readIgnoreFileSync(p, name), null, `${p}/${name}`);
    assert.ok(Date.now() - t0 < 1000, `${p}/${name} took ${Date.now() - t0} ms`);
  }
});
