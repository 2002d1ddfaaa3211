// Under an ask rule, grep's ripgrep path counts what the rule leaves out (skipped_by_policy) from
// `rg --files` (rgListFiles), which lists by path name. helper-37 noted two ways that count could
// tell about what lies outside: a folder swapped for a link while rg listed adds outside names,
// and a name that is not UTF-8, decoded with U+FFFD, stands for another. Now only names that are
// files in the searched folder, looked at through its pinned descriptors, are counted
// (countListed), and names that are not UTF-8 are left out of the listing.
import assert from 'node:assert/strict';
import { closeSync, constants, fstatSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Harness, policyFromYaml, tempDir, writeIn } from '../../src/testing/helpers.js';
import { grep } from '../../src/tools/grep/grep-fixture.js';
import { locateRg, rgListFiles } from '../../src/tools/grep/rg.js';
import type { Query } from '../../src/tools/grep/types.js';
import { countListed } from '../../src/tools/grep/verify.js';

const rgHere = await locateRg({ ...process.env, TOOLGATE_RG: '' });
const needsRg = rgHere ? false : 'needs ripgrep (rg) on PATH';
const skipOffLinux = process.platform === 'linux' ? false : 'needs Linux (/proc/self/fd)';

test('countListed: a listed name that is not a file in the searched folder now (only outside, a folder gone, a link) is not counted', { skip: skipOffLinux }, async (t) => {
  const d = tempDir('tg-asked-');
  t.after(d.cleanup);
  writeIn(d.dir, 'a/b/in.txt', 'x');
  writeIn(d.dir, 'a/b/dir/keep', 'x');
  const fd = openSync(d.dir, constants.O_RDONLY | constants.O_DIRECTORY);
  t.after(() => closeSync(fd));
  const { dev, ino } = fstatSync(fd);
  const counted: string[] = [];
  await countListed(['a/b/in.txt', 'a/b/only-outside.txt', 'gone/x.txt', 'a/b/dir', '../x', 'a/../a/b/in.txt'], d.dir, { dev, ino }, (rel) => counted.push(rel));
  assert.deepEqual(counted, ['a/b/in.txt']);
});

test('rgListFiles: a name that is not UTF-8 is left out, not decoded into another file\'s name', { skip: needsRg || (process.platform !== 'linux' && 'needs a file system that takes any bytes in a name') }, async (t) => {
  const d = tempDir('tg-asked-bytes-');
  t.after(d.cleanup);
  writeFileSync(Buffer.concat([Buffer.from(`${d.dir}/x`), Buffer.from([0xff]), Buffer.from('.txt')]), 'x');
  writeFileSync(path.join(d.dir, 'x\uFFFD.txt'), 'x');
  writeFileSync(path.join(d.dir, 'é.txt'), 'x');
  const q: Query = { pattern: 'x', fixed_strings: false, ignore_case: false, multiline: false, context: 0, mode: 'files_with_matches', hidden: false, globs: [], typeGlobs: [] };
  const listed = await rgListFiles({ q, bin: rgHere!, denyGlobs: [], cwd: d.dir, atWorkspaceRoot: true, signal: new AbortController().signal });
  assert.deepEqual(listed.sort(), ['x\uFFFD.txt', 'é.txt'].sort(), 'the real U+FFFD name and a UTF-8 name stay; the raw byte name is left out once, not twice');
});

test('control: an ask rule still counts the asked files grep leaves out through ripgrep', { skip: needsRg }, async (t) => {
  const d = tempDir('tg-asked-ctl-');
  t.after(d.cleanup);
  for (const rel of ['a.txt', 'asked/q.txt', 'asked/r.txt', 'sub/asked/s.txt']) writeIn(d.dir, rel, 'needle\n');
  mkdirSync(path.join(d.dir, 'empty'));
  const h = new Harness([d.dir], { policy: policyFromYaml('rules:\n  - { tool: "*", path: "**/asked/**", decision: ask }\n') });
  t.after(() => h.close());
  const r = await grep(h, 'rg', { pattern: 'needle' });
  assert.equal(r.data.engine, 'ripgrep', r.text);
  assert.deepEqual(r.data.files, ['a.txt'], r.text);
  const skipped = (e: typeof r) => (e.data as { skipped_by_policy?: number }).skipped_by_policy;
  assert.equal(skipped(r), 2, `the two asked folders counted once each: ${r.text}`);
  assert.equal(skipped(await grep(h, 'builtin', { pattern: 'needle' })), 2, 'as the built-in walk counts them');
});
