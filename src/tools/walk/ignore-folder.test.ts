import assert from 'node:assert/strict';
import { test } from 'node:test';
import ignore from 'ignore';
import { compileIgnore, folderTester, IgnoreCompileCache, testIgnore } from './ignore-cache.js';
import { IgnoreStack, RG_IGNORE_FILES } from './ignore-stack.js';

// IgnoreStack.folder answers ignored() for the entries of one folder by name, each level's answers
// remembered per folder (folderTester). These compare the two on generated stacks (rules at several
// depths and of each kind), folders and names, odd and invalid ones included, with the memos
// shared across stacks as the workspace's compile cache shares them, and emptied on the way.

let seed = 20261125;
const rnd = (n: number) => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return (seed >>> 8) % n; };
const pick = <T>(xs: readonly T[]) => xs[rnd(xs.length)]!;

const LINES = ['*.o', '!*.o', '*.h', '!keep.h', '/a', 'a/', 'a/**', '**/b', 'a/*/c', '/b/c', 'c', '!c', '*', '!*/', 'x.o/', '.*', '!.e',
  'b/', 'z?', 'foo', '!foo/', '# c', '', '*.e', '!a.e', 'a/b/', '/x', '!/x', 'é', 'x\u2028', '\\#x', 'a b', '**/z/', 'b/**/k.h'];
const SEGS = ['a', 'b', 'c', 'x', 'z', 'foo', 'x.o', 'keep.h', 'k.h', '.e', 'a.e', '#x', 'a b', 'é', 'x\u2028', 'zz'];
/** Entry names: plain, and ones a path could not be built from as one segment. */
const NAMES = [...SEGS, '', 'a/b', '/', '.', '..', 'b/', 'x\u2029'];

function randomDir(): string {
  return Array.from({ length: rnd(4) }, () => pick(SEGS.filter((s) => s !== '.e' || rnd(2)))).join('/');
}

function randomStack(cache: IgnoreCompileCache): IgnoreStack {
  let stack = IgnoreStack.empty(cache);
  // Levels from the root down one folder chain, each with the texts of some of the three kinds.
  const chain = ['', 'a', 'a/b', 'a/b/c', 'x', 'x/z'];
  for (const base of chain) {
    if (rnd(3) === 0) continue;
    const texts = RG_IGNORE_FILES.map(() => (rnd(3) === 0 ? Array.from({ length: 1 + rnd(4) }, () => pick(LINES)).join('\n') : null));
    stack = stack.with(base, texts);
  }
  return rnd(4) === 0 ? stack.admitting(pick(['a', 'a/b', 'x'])) : stack;
}

test('IgnoreStack.folder answers as ignored() for every entry of a folder', () => {
  const cache = new IgnoreCompileCache();
  const bad: string[] = [];
  let ignoredSeen = 0;
  let keptSeen = 0;
  for (let s = 0; s < 400; s++) {
    const stack = randomStack(cache);
    for (let d = 0; d < 6; d++) {
      const dir = pick(['', 'a', 'a/b', 'a/b/c', 'a/b/c/k', 'x', 'x/z', 'ab', 'a/bc', randomDir()]);
      const tester = stack.folder(dir);
      // Twice over: the second pass answers from the memos.
      const entries = Array.from({ length: 12 }, () => [pick(NAMES), rnd(2) === 0] as const);
      for (const [name, isDir] of [...entries, ...entries]) {
        const rel = dir === '' ? name : `${dir}/${name}`;
        const want = stack.ignored(rel, isDir);
        const got = tester(name, isDir);
        if (want) ignoredSeen++;
        else keptSeen++;
        if (want !== got && bad.length < 5) bad.push(`${JSON.stringify(dir)} / ${JSON.stringify(name)} (${isDir ? 'dir' : 'file'}): ignored() ${want}, folder() ${got}`);
      }
    }
  }
  assert.deepEqual(bad, []);
  assert.ok(ignoredSeen > 2000 && keptSeen > 2000, `both answers were compared (${ignoredSeen} ignored, ${keptSeen} kept)`);
});

test('folderTester: the same answers as the package, with the memos emptied on the way past their bound', () => {
  const text = ['*.o', '!keep.o', 'build/', '/top', 'a/**/deep', '!b/x.o'].join('\n');
  const c = compileIgnore(text, 50);
  const pkg = ignore({ ignorecase: false }).add(text);
  const bad: string[] = [];
  for (let round = 0; round < 3; round++) {
    for (let d = 0; d < 40; d++) {
      const dir = pick(['', 'a', 'b', 'build', 'a/q', 'a/q/r', 'top', `d${d}`]);
      const t = folderTester(c, dir);
      for (const name of ['x.o', 'keep.o', 'build', 'top', 'deep', 'k', `n${d}`]) {
        for (const isDir of [false, true]) {
          const key = isDir ? `${name}/` : name;
          const rel = (dir === '' ? '' : `${dir}/`) + key;
          const r = pkg.test(rel);
          const want = r.ignored ? 'ignored' : r.unignored ? 'unignored' : 'neither';
          const v = t(key);
          const got = v.ignored ? 'ignored' : v.unignored ? 'unignored' : 'neither';
          if (want !== got && bad.length < 5) bad.push(`${rel}: package ${want}, tester ${got}`);
          // The path memo and the folder memos stay within the bound between them.
          assert.ok(c.memo.size + c.count.leaves <= 50, `memos hold ${c.memo.size} + ${c.count.leaves}`);
          // And testIgnore, sharing the compiled set, still agrees.
          assert.equal(testIgnore(c, rel).ignored, r.ignored, rel);
        }
      }
    }
  }
  assert.deepEqual(bad, []);
  assert.ok(c.count.gen > 3, `the memos were emptied on the way (${c.count.gen} times)`);
});

test('folderTester remembers no answer from a path it could not test (a stack overflow on a very deep folder); odd folder paths are asked whole', () => {
  const segs = Array.from({ length: 20_000 }, (_, i) => `d${i % 10}`);
  const dir = segs.join('/');
  const stack = IgnoreStack.empty(new IgnoreCompileCache()).with('', ['*.o\n', null, null]);
  const early = stack.folder(dir);
  assert.equal(early('x.o', false), stack.ignored(`${dir}/x.o`, false), 'cold: both skip the level that threw');
  // The parents met shallow to deep (as a walk judging each folder on the way leaves them remembered).
  for (let i = 1; i <= segs.length; i++) stack.ignored(segs.slice(0, i).join('/'), true);
  assert.equal(stack.ignored(`${dir}/x.o`, false), true);
  assert.equal(early('x.o', false), true, 'the tester made before answers from the rules now, not from a remembered failure');
  assert.equal(stack.folder(dir)('x.o', false), true);
  // A folder path no walk gives: the same answer as ignored() on the joined path.
  const s2 = IgnoreStack.empty(new IgnoreCompileCache()).with('a', ['x.o\n', null, null]);
  for (const d of ['a/', 'a//b', '/a', 'a/b/']) assert.equal(s2.folder(d)('x.o', false), s2.ignored(`${d}/x.o`, false), d);
});

test('folderTester: each folder\'s own map counts against the bound', () => {
  const c = compileIgnore('*.o\n', 100);
  for (let d = 0; d < 1000; d++) {
    folderTester(c, `f${d}`)('x.o');
    assert.ok(c.memo.size + c.count.leaves <= 100, `${c.memo.size} + ${c.count.leaves}`);
    // A folder map is at most one per (1 + 4) counted: one-file folders cannot hold many times the bound.
    assert.ok(c.leaves.size <= 100 / 5, `${c.leaves.size} folder maps`);
  }
});
