import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Harness, tempDir, writeIn } from '../../testing/helpers.js';
import { comparable, grep } from './grep-fixture.js';
import { locateRg } from './rg.js';
import { grepWalkMax, DEFAULT_GREP_WALK_MAX, sameInBothEngines, SMALL_GREP_BYTES } from './small.js';
import type { Query } from './types.js';

// grep searches a small folder or file itself when ripgrep is present, for patterns both engines
// read alike (small.ts). Each case compares the default ('auto') with ripgrep forced.

const rgHere = await locateRg({ ...process.env, TOOLGATE_RG: '' });
const needsRg = rgHere ? false : 'needs ripgrep (rg) on PATH: the small-folder choice only exists beside it';

const q = (pattern: string, more: Partial<Query> = {}): Query => ({
  pattern, fixed_strings: false, ignore_case: false, multiline: false, context: 0, mode: 'files_with_matches', hidden: false, globs: [], typeGlobs: [], ...more,
});

test('sameInBothEngines: literal text and plain regex yes; Unicode-wide classes, non-ASCII case folding, multiline, U+FFFD no', () => {
  assert.deepEqual(sameInBothEngines(q('TODO'))?.literal, true);
  assert.deepEqual(sameInBothEngines(q('a.b|c'))?.literal, false);
  assert.equal(sameInBothEngines(q('a.b|c+')), null, 'repetition: JavaScript backtracks (linearInJs)');
  assert.deepEqual(sameInBothEngines(q('Foo() {', { fixed_strings: true }))?.literal, true);
  assert.ok(sameInBothEngines(q('todo', { ignore_case: true })));
  assert.ok(sameInBothEngines(q('[[:alpha:]]x')));
  assert.ok(sameInBothEngines(q('naïve')), 'non-ASCII text, case kept, is the same code points in both');
  for (const p of ['\\w+', 'a\\b', '\\d', '\\s', '\\pL', '\\p{Greek}']) assert.equal(sameInBothEngines(q(p)), null, p);
  assert.ok(sameInBothEngines(q('\\w', { fixed_strings: true })), 'fixed strings: a backslash is a character');
  assert.equal(sameInBothEngines(q('naïve', { ignore_case: true })), null);
  assert.equal(sameInBothEngines(q('(?i)naïve')), null);
  assert.equal(sameInBothEngines(q('needle', { multiline: true })), null);
  assert.equal(sameInBothEngines(q('a\uFFFDb')), null);
  assert.equal(sameInBothEngines(q('(?=x)y')), null, 'what the translation refuses goes to ripgrep, which says why');
  assert.equal(grepWalkMax({}), DEFAULT_GREP_WALK_MAX);
  assert.equal(grepWalkMax({ TOOLGATE_GREP_WALK_MAX: '0' }), 0);
  assert.equal(grepWalkMax({ TOOLGATE_GREP_WALK_MAX: 'many' }), DEFAULT_GREP_WALK_MAX);
});

/** A workspace with `files` (path → content), a harness on it, and a grep that runs the default and ripgrep forced and checks they agree. */
function setup(files: Record<string, string | Buffer>) {
  const t = tempDir('tg-grep-small-');
  for (const [rel, c] of Object.entries(files)) writeIn(t.dir, rel, c);
  const h = new Harness([t.dir]);
  const both = async (args: Record<string, unknown>, env: Record<string, string> = {}) => {
    const auto = await grep(h, 'auto', args, env);
    const rg = await grep(h, 'rg', args);
    assert.deepEqual(comparable(auto), comparable(rg), `same answer for ${JSON.stringify(args)}`);
    return auto;
  };
  return { dir: t.dir, h, both, done: () => { h.close(); t.cleanup(); } };
}

test('a folder within the entry budget is searched here; past it, and once it grew past it, by ripgrep, with the same answer', { skip: needsRg }, async () => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 4; i++) files[`small/f${i}.txt`] = `needle ${i}\n`;
  for (let i = 0; i < 30; i++) files[`big/d${i % 3}/f${i}.txt`] = `needle ${i}\n`;
  const s = setup(files);
  try {
    const env = { TOOLGATE_GREP_WALK_MAX: '10' };
    const small = await s.both({ pattern: 'needle', path: 'small', output_mode: 'count' }, env);
    assert.equal(small.data.engine, 'builtin');
    assert.equal(small.status, 'ok');
    assert.match(small.data.fallback_reason ?? '', /folder is small \(4 entries, at most 10\)/);
    assert.doesNotMatch(small.text, /Built-in search used/);
    const big = await s.both({ pattern: 'needle', path: 'big', output_mode: 'count' }, env);
    assert.equal(big.data.engine, 'ripgrep');
    assert.equal(big.data.total_files, 30);
    assert.ok((await s.h.roots.workspace()).treeSizes.over(`${s.dir}/big`, 10), 'the big folder is remembered: the next grep goes straight to ripgrep');
    // The small folder grows past the budget: the search here gives up and ripgrep answers, new files included.
    for (let i = 4; i < 20; i++) writeIn(s.dir, `small/f${i}.txt`, `needle ${i}\n`);
    const grown = await s.both({ pattern: 'needle', path: 'small', output_mode: 'count' }, env);
    assert.equal(grown.data.engine, 'ripgrep');
    assert.equal(grown.data.total_files, 20);
  } finally {
    s.done();
  }
});

test('more bytes than the budget, a NUL past the first block, invalid UTF-8 under a regex: ripgrep answers', { skip: needsRg }, async () => {
  const s = setup({
    'bytes/big.txt': `${'x'.repeat(SMALL_GREP_BYTES)}\nneedle\n`,
    'nul/late.txt': Buffer.concat([Buffer.from(`${'line\n'.repeat(20_000)}needle early\n`), Buffer.from([0]), Buffer.from('\nneedle late\n')]),
    'utf/x.txt': Buffer.from([0x61, 0xff, 0x62, 0x20, 0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65, 0x0a]), // a<FF>b needle
    'utf/y.txt': 'a-b\n',
  });
  try {
    for (const path of ['bytes', 'nul']) {
      const r = await s.both({ pattern: 'needle', path, output_mode: 'content' });
      assert.equal(r.data.engine, 'ripgrep', path);
    }
    // ripgrep's "." never matches an invalid byte; JavaScript's would match the U+FFFD the decoder puts there.
    const dot = await s.both({ pattern: 'a.b', path: 'utf' });
    assert.equal(dot.data.engine, 'ripgrep');
    assert.deepEqual(dot.data.files, ['utf/y.txt']);
    // Literal text cannot match differently around an invalid byte: searched here.
    const lit = await s.both({ pattern: 'needle', path: 'utf', output_mode: 'content' });
    assert.equal(lit.data.engine, 'builtin');
    assert.deepEqual(lit.data.matches?.map((m) => m.file), ['utf/x.txt']);
  } finally {
    s.done();
  }
});

test('one small file is searched here, a big one by ripgrep; a Unicode-wide class or non-ASCII case folding by ripgrep', { skip: needsRg }, async () => {
  const s = setup({ 'one.txt': 'Naïve needle\nNAÏVE\n', 'big.txt': `${'y'.repeat(SMALL_GREP_BYTES)}\nneedle\n` });
  try {
    const one = await s.both({ pattern: 'needle', path: 'one.txt', output_mode: 'content' });
    assert.equal(one.data.engine, 'builtin');
    assert.match(one.data.fallback_reason ?? '', /file is small/);
    assert.equal((await s.both({ pattern: 'needle', path: 'big.txt', output_mode: 'count' })).data.engine, 'ripgrep');
    for (const args of [{ pattern: '\\w+ve', output_mode: 'content' }, { pattern: 'naïve', ignore_case: true, output_mode: 'count' }]) {
      assert.equal((await s.both({ ...args, path: 'one.txt' })).data.engine, 'ripgrep', JSON.stringify(args));
      assert.equal((await s.both(args)).data.engine, 'ripgrep', JSON.stringify(args));
    }
  } finally {
    s.done();
  }
});

test('a subfolder search goes to ripgrep when a folder above the workspace root holds an ignore file (rg reads those; the built-in engine stops at the root)', { skip: needsRg }, async () => {
  const t = tempDir('tg-grep-above-');
  writeIn(t.dir, '.gitignore', '*.log\n');
  const ws = `${t.dir}/ws`;
  writeIn(ws, 'sub/a.log', 'needle in a log\n');
  writeIn(ws, 'sub/b.txt', 'needle in text\n');
  const h = new Harness([ws]);
  try {
    const args = { pattern: 'needle', path: 'sub' };
    const auto = await grep(h, 'auto', args);
    const rg = await grep(h, 'rg', args);
    assert.deepEqual(comparable(auto), comparable(rg));
    assert.deepEqual(rg.data.files, ['sub/b.txt'], 'ripgrep applies the .gitignore above the root');
    assert.equal(auto.data.engine, 'ripgrep');
  } finally {
    h.close();
    t.cleanup();
  }
});
