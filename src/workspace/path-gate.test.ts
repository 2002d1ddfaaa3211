// The gate's pure parts: which folder a glob starts in, and whether a delete of a folder reaches it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { globStartsBelow, literalBase } from './path-gate.js';

test('literalBase: the folder a glob starts with, empty when it may match at any depth', () => {
  const rows: Array<[string, string]> = [
    ['d1/d2/d3/**', 'd1/d2/d3'], ['priv/**', 'priv'], ['priv/*.txt', 'priv'], ['**/x', ''], ['*.key', ''], ['priv', ''],
    ['a/*/b/**', 'a'], ['src/{a,b}/**', 'src'], ['a/b', 'a/b'], ['[ab]/c', ''],
  ];
  for (const [g, want] of rows) assert.equal(literalBase(g), want, g);
});

test('globStartsBelow: a rule naming an area strictly inside the folder, rooted or absolute', () => {
  const rows: Array<[string, string, string, boolean]> = [
    ['d1/d2/d3/**', 'd1', '/w/d1', true],
    ['d1/d2/d3/**', 'd1/d2', '/w/d1/d2', true],
    ['d1/d2/d3/**', 'd1/d2/d3', '/w/d1/d2/d3', false], // the folder itself: resolve() judges it
    ['d1/d2/d3/**', 'd10', '/w/d10', false],
    ['**/x', 'd1', '/w/d1', false],
    ['/w/d1/d2/**', 'd1', '/w/d1', true],
    ['/d1/d2/**', 'd1', '/w/d1', true],
    ['/elsewhere/d1/**', 'd1', '/w/d1', false],
    ['config/secrets/', 'config', '/w/config', true],
  ];
  for (const [g, rel, abs, want] of rows) assert.equal(globStartsBelow(g, rel, abs), want, `${g} under ${rel}`);
});
