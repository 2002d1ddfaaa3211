// The sandbox's own check of its read-write pins (review 31): each pin must be a mount at exactly
// its path, of the folder at that path. Built here by hand with bwrap: a pin bound from another
// folder (what a link swapped in while bwrap mounted gives) is refused before the command runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, realpathSync } from 'node:fs';
import { PIN_CHECK_FAILED, mountinfoPath, withPinCheck } from './pin-check.js';
import { detectBwrap } from './sandbox.js';
import { tempDir } from '../testing/helpers.js';

test('mountinfoPath escapes as the kernel does', () => {
  assert.equal(mountinfoPath('/a b\tc\nd\\e/f'), '/a\\040b\\011c\\012d\\134e/f');
});

test('the pin check runs the command when each pin is its own folder, and refuses a pin bound from elsewhere', async (t) => {
  const bwrap = await detectBwrap();
  if (!bwrap) { t.skip('no usable bubblewrap'); return; }
  const { dir, cleanup } = tempDir('tg-pincheck-');
  t.after(cleanup);
  const ws = realpathSync(dir);
  // Names the kernel escapes in the mount table, and a pin below a pin.
  for (const d of ['sub dir', 'sub dir/in\\ner', 'elsewhere']) mkdirSync(`${ws}/${d}`, { recursive: true });
  const run = (binds: string[], pins: string[], ro: string[] = []) => spawnSync(bwrap, [
    '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--bind', ws, ws, ...binds, '--cap-drop', 'ALL', '--unshare-pid', '--',
    ...withPinCheck(pins, ro, ['/bin/sh', '-c', 'echo ran "$#"', 'sh', 'a b']),
  ], { encoding: 'utf8' });
  const good = run(['--bind', `${ws}/sub dir`, `${ws}/sub dir`, '--bind', `${ws}/sub dir/in\\ner`, `${ws}/sub dir/in\\ner`], [`${ws}/sub dir`, `${ws}/sub dir/in\\ner`]);
  assert.equal(good.status, 0, good.stderr);
  assert.equal(good.stdout, 'ran 1\n');
  // Bound from another folder (a link swapped in for the source), or not bound at all (for the destination).
  for (const binds of [['--bind', `${ws}/elsewhere`, `${ws}/sub dir`], []]) {
    const bad = run(binds, [`${ws}/sub dir`]);
    assert.equal(bad.status, PIN_CHECK_FAILED, bad.stderr);
    assert.equal(bad.stdout, '');
    assert.match(bad.stderr, /the sandbox did not start as asked: .*sub\\040dir is not bound onto itself/);
  }
  // A read-only bind of a path onto itself (a nested .git): read-only, of that folder.
  const ro = (binds: string[]) => run(['--bind', `${ws}/sub dir`, `${ws}/sub dir`, ...binds], [`${ws}/sub dir`], [`${ws}/sub dir/in\\ner`]);
  assert.equal(ro(['--ro-bind', `${ws}/sub dir/in\\ner`, `${ws}/sub dir/in\\ner`]).status, 0);
  for (const binds of [['--bind', `${ws}/sub dir/in\\ner`, `${ws}/sub dir/in\\ner`], ['--ro-bind', `${ws}/elsewhere`, `${ws}/sub dir/in\\ner`], []]) {
    const bad = ro(binds);
    assert.equal(bad.status, PIN_CHECK_FAILED, `${binds.join(' ')}: ${bad.stderr}`);
    assert.match(bad.stderr, /in\\134ner is not bound onto itself read-only/);
  }
});

test('a command\'s own bash script gets the check in front: same $0, $#, line numbers, no name left; refused the same way', async (t) => {
  const bwrap = await detectBwrap();
  if (!bwrap) { t.skip('no usable bubblewrap'); return; }
  const { dir, cleanup } = tempDir('tg-pininline-');
  t.after(cleanup);
  const ws = realpathSync(dir);
  for (const d of ["it's", 'elsewhere']) mkdirSync(`${ws}/${d}`);
  const script = 'echo "$0" "$#" "$(type -t __tg_pc)" "$-"\n)';
  const argv = withPinCheck([`${ws}/it's`], [], ['/bin/bash', '--norc', '--noprofile', '-c', script]);
  assert.equal(argv.length, 5, 'no second bash');
  const run = (binds: string[]) => spawnSync(bwrap, ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--bind', ws, ws, ...binds, '--cap-drop', 'ALL', '--unshare-pid', '--', ...argv], { encoding: 'utf8' });
  const good = run(['--bind', `${ws}/it's`, `${ws}/it's`]);
  // The script's own syntax error is still on its line 2; nothing of the check is left.
  assert.equal(good.stdout, '/bin/bash 0  hBc\n');
  assert.match(good.stderr, /line 2: syntax error/);
  const bad = run(['--bind', `${ws}/elsewhere`, `${ws}/it's`]);
  assert.equal(bad.status, PIN_CHECK_FAILED, bad.stderr);
  assert.equal(bad.stdout, '');
});

test('withPinCheck leaves argv as it is when there is nothing to check', () => {
  assert.deepEqual(withPinCheck([], [], ['/bin/true']), ['/bin/true']);
});
