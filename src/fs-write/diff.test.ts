import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyPatch, parsePatch } from 'diff';
import { unifiedDiff } from './diff.js';

const lines = (n: number, f = (k: number) => `line ${k}`) => Array.from({ length: n }, (_, k) => f(k)).join('\n') + '\n';

const CASES: Array<[string, string, string]> = [
  ['one line changed in the middle', lines(100), lines(100).replace('line 50\n', 'LINE 50\n')],
  ['first and last lines', lines(10), lines(10).replace('line 0\n', 'zero\n').replace('line 9\n', 'nine\n')],
  ['every line changed (block hunk)', lines(3000), lines(3000, (k) => `changed ${k}`)],
  ['half the lines changed', lines(2000), lines(2000, (k) => (k % 2 ? `line ${k}` : `other ${k}`))],
  ['newline added at EOF', 'a\nb', 'a\nb\n'],
  ['newline removed at EOF', 'a\nb\n', 'a\nb'],
  ['no newline either side', 'a\nb', 'a\nc'],
  ['everything removed', lines(5), ''],
  ['new content', '', lines(5)],
  ['big new file (block)', '', lines(5000)],
  ['lines inserted', lines(20), lines(20).replace('line 10\n', 'line 10\nnew a\nnew b\n')],
];

for (const [name, a, b] of CASES) {
  test(`the diff applies back: ${name}`, () => {
    const { diff, stats } = unifiedDiff([{ from: 'f.txt', to: 'f.txt', oldText: a, newText: b }]);
    assert.ok(diff.startsWith('--- a/f.txt\n+++ b/f.txt\n'), diff.slice(0, 80));
    const [p] = parsePatch(diff);
    assert.equal(applyPatch(a, p!), b);
    assert.ok(stats.added + stats.removed > 0);
  });
}

test('no change, no diff', () => {
  assert.equal(unifiedDiff([{ from: 'f', to: 'f', oldText: 'x\n', newText: 'x\n' }]).diff, '');
});

test('added and deleted files use /dev/null', () => {
  assert.match(unifiedDiff([{ from: null, to: 'n.txt', oldText: null, newText: 'a\n' }]).diff, /^--- \/dev\/null\n\+\+\+ b\/n\.txt\n@@ -0,0 \+1(,1)? @@\n\+a\n$/);
  assert.match(unifiedDiff([{ from: 'o.txt', to: null, oldText: 'a\n', newText: null }]).diff, /^--- a\/o\.txt\n\+\+\+ \/dev\/null\n@@ -1(,1)? \+0,0 @@\n-a\n$/);
});
