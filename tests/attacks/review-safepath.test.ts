// Review 27 (helper-75): PATH entries bash resolves into a workspace root (checked with bash
// itself: a program planted in the workspace runs by its bare name) that safePath kept: `..` read
// lexically after a link (in the entry, and in a dangling link's target), a missing entry more than
// 41 folders deep (the old bound counted folders, not links), /proc/self/cwd (the command's own
// cwd); and an entry longer than PATH_MAX that links shorten, which glibc's realpath resolved.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import { realOrPlanned, safePath } from '../../src/exec/env.js';
import { tempDir } from '../../src/testing/helpers.js';
import { bashRunsPlanted, glibcRealOrPlanned, keepsEntry } from '../../src/testing/path-oracles.js';

function lab(t: { after: (f: () => void) => void }) {
  const { dir, cleanup } = tempDir('tg-safepath-');
  t.after(cleanup);
  const ws = `${dir}/ws`;
  const out = `${dir}/out`;
  mkdirSync(`${ws}/sub/bin`, { recursive: true });
  mkdirSync(out);
  return { dir, ws, out };
}
const keeps = keepsEntry;
const reference = glibcRealOrPlanned;

test('`..` after a link into the workspace: bash resolves it there, and so does safePath (not path.resolve\'s lexical `..`)', (t) => {
  const { ws, out } = lab(t);
  symlinkSync(`${ws}/sub`, `${out}/l`);
  const entry = `${out}/l/../tools`; // the kernel: ws/sub/.. = ws, so ws/tools
  assert.equal(bashRunsPlanted(entry, `${ws}/tools`), true, 'oracle: bash runs the planted program');
  assert.equal(keeps(entry, ws), false, `safePath kept ${entry}`);
});

test('a dangling link whose target climbs with `..` out of a link into the workspace: dropped (the target is read as the kernel reads it)', (t) => {
  const { ws, out } = lab(t);
  mkdirSync(`${out}/d`);
  symlinkSync(`${ws}/sub/bin`, `${out}/d/deep`);
  symlinkSync('deep/../../planned', `${out}/d/l`); // the kernel: ws/sub/bin/../../planned = ws/planned (not made yet)
  const entry = `${out}/d/l/bin`;
  assert.equal(keeps(entry, ws), false, `safePath kept ${entry} (realOrPlanned says ${realOrPlanned(entry)})`);
  // The same line can make the folder and run a program from it (safePath ran before the line).
  assert.equal(bashRunsPlanted(entry, `${ws}/planned/bin`), true, 'oracle: once made, bash runs the planted program');
});

test('a missing entry more than 41 folders deep under a link into the workspace: dropped (only links count toward the bound)', (t) => {
  const { ws, out } = lab(t);
  symlinkSync(ws, `${out}/tows`);
  const tail = `${'x/'.repeat(45)}bin`;
  const entry = `${out}/tows/${tail}`;
  assert.equal(keeps(entry, ws), false, `safePath kept ${entry.slice(0, 80)}…`);
  assert.equal(bashRunsPlanted(entry, `${ws}/${tail}`), true, 'oracle: once made, bash runs the planted program');
});

test('/proc/self/cwd is the command\'s cwd (always in a workspace root), not the server\'s', (t) => {
  const { ws } = lab(t);
  assert.notEqual(process.cwd(), ws);
  const entry = '/proc/self/cwd/bin';
  assert.equal(bashRunsPlanted(entry, `${ws}/bin`, ws), true, 'oracle: bash in the workspace runs the planted program');
  assert.equal(keeps(entry, ws), false, 'safePath kept /proc/self/cwd/bin');
});

test('an entry longer than PATH_MAX that links shorten resolves as glibc\'s realpath resolves it', (t) => {
  const { ws, out } = lab(t);
  const L = 'L'.repeat(250);
  symlinkSync('.', `${out}/${L}`);
  mkdirSync(`${out}/${'a/'.repeat(45)}`, { recursive: true });
  symlinkSync(ws, `${out}/${'a/'.repeat(45)}ws`);
  const p = `${out}/${(L + '/').repeat(17)}${'a/'.repeat(45)}ws`; // 4,3xx characters
  assert.equal(reference(p), realpathSync.native(ws));
  assert.equal(realOrPlanned(p), reference(p));
  assert.equal(keeps(p, ws), false);
});

test('a link to a per-process path met on the way drops the entry; an entry longer than PATH_MAX is dropped', (t) => {
  const { ws, out } = lab(t);
  mkdirSync(`${out}/m`);
  symlinkSync('/proc/self/cwd/tools', `${out}/m/dangling`);
  // Not made yet in the server's cwd: the walk meets the link's target (for a command: its cwd, in the
  // workspace). A link to an existing per-process path is read by realpath as the server's: not found.
  assert.equal(keeps(`${out}/m/dangling/bin`, ws), false);
  // Longer than PATH_MAX: bash cannot use it (dropped), and the walk, a loop, stops where the kernel would.
  const deep = `${out}/${'d/'.repeat(20_000)}bin`;
  assert.equal(keeps(deep, ws), false);
  assert.equal(realOrPlanned(deep), null);
  assert.equal(keeps(`${out}/${'d/'.repeat(1_000)}bin`, ws), true);
});
