// Review 29, Info items (older than f0023b6): the fallback PATH was not checked against the
// roots, and a link target that is not UTF-8 was read with U+FFFD (another path: the entry was kept).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { safePath } from '../../src/exec/env.js';
import { tempDir } from '../../src/testing/helpers.js';

test('when every entry is dropped, the fallback PATH is not inside a root either', () => {
  for (const [value, roots] of [['/usr/local/bin', ['/usr/local']], ['/usr/bin:/bin', ['/usr']], ['/usr/bin', ['/']]] as const) {
    const out = safePath(value, [...roots]).split(':');
    // None left: a path under /dev/null, where nothing can be made (and not empty: bash would search the cwd).
    for (const e of out) assert.ok(e.startsWith('/dev/null/') || !roots.some((r) => e === r || e.startsWith(r === '/' ? '/' : `${r}/`)), `${value} with roots ${roots}: fallback keeps ${e}`);
    assert.ok(out.length > 0 && out.every((e) => e !== ''));
  }
});

test('an entry through a link target that is not UTF-8 is dropped (it would be read with U+FFFD)', (t) => {
  const { dir, cleanup } = tempDir('tg-rv29i-');
  t.after(cleanup);
  const D = realpathSync(dir);
  mkdirSync(`${D}/ws/bin`, { recursive: true });
  mkdirSync(`${D}/out`);
  writeFileSync(`${D}/ws/bin/tgplanted`, '#!/bin/sh\necho PLANTED\n');
  chmodSync(`${D}/ws/bin/tgplanted`, 0o755);
  symlinkSync(`${D}/ws`, Buffer.from(`${D}/K\xe4se`, 'latin1')); // the user's link, Latin-1 name, outside the root
  symlinkSync(Buffer.from('../K\xe4se', 'latin1'), `${D}/out/l`);
  const entry = `${D}/out/l/bin`;
  const r = spawnSync('/bin/bash', ['--norc', '--noprofile', '-c', 'tgplanted'], { env: { PATH: entry }, cwd: `${D}/ws`, encoding: 'utf8' });
  assert.equal(r.stdout, 'PLANTED\n', 'oracle');
  assert.equal(safePath(`${entry}:/usr/bin`, [`${D}/ws`]).split(':').includes(entry), false, 'safePath kept the entry');
});
