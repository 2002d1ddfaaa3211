import assert from 'node:assert/strict';
import { test } from 'node:test';
import picomatch from 'picomatch';
import { globTooCostly } from './glob-cost.js';

test('globTooCostly: the globs models and ignore files use pass; many wildcards in one segment or three "**" do not', () => {
  for (const g of ['*.ts', '**/*.test.ts', '**/{src,lib}/**/*.{ts,tsx}', '{src,lib}/{x,y}/**/*.md', 'src/**/*.{ts,tsx}', '**/test/**/*.ts', '!**/node_modules/**', '*.test.*', '*/*/*/*/*/*.md',
    '[*][*][*][*]x', '\\*\\*\\*\\*a', 'a/**/b/**', '{a,b}/{c,d}/{e,f}/{g,h}', '*a*a.{txt,md}', '.env*', 'build/', '*(a|b)']) {
    assert.equal(globTooCostly(g), false, g);
  }
  for (const g of ['*a*a*a*a*b', 'x*y*z*{a,b}', '**/a/**/b/**', '{a,b}{c,d}*@(e|f)*', 'a**b**c**d**e', '*{a,/b*}*c*d']) assert.equal(globTooCostly(g), true, g);
});

test('what globTooCostly lets through stays fast in picomatch on a long name and a deep path (worst cases of three wildcards)', () => {
  const name = `${'a'.repeat(250)}c`;
  const deep = `${'a/'.repeat(2040)}c`;
  for (const [g, s] of [['*a*a*b', name], ['*?*?*b', name], ['*{a,aa}*b', name], ['**/a*/**/*b', deep], ['**/a/**/{a,aa}', deep], ['{a,aa}{a,aa}{a,aa}b', name]] as const) {
    assert.equal(globTooCostly(g), false, g);
    const m = picomatch(g, { dot: true });
    const t = performance.now();
    m(s);
    assert.ok(performance.now() - t < 200, `${g}: ${(performance.now() - t).toFixed(0)} ms`);
  }
});

test('globTooCostly: raw regex syntax picomatch passes on, globstars in groups, and segments that multiply are refused', () => {
  for (const g of ['(a+)+b', '[a]+[a]+b', '{a,aa}+b', '@(a+)', '@(a)?x', '+(a|[a])b', '+(a|a)b', '+(ab|a)', '"["*a*a*a*a*b]', '[a]""+', '@(a|aa)\0+b',
    'x/\\\\\\\\+b', '[]a?a?', '[[:alpha:]a?', '*a*a*a/*a*b', '{**,z}/{**,z}/{**,z}/b', '{a,a}/{a,a}/{a,a}/{a,a}/{a,a}/b', `*.{${'a,'.repeat(40)}b}`]) {
    assert.equal(globTooCostly(g), true, g);
  }
  for (const g of ['c++', 'a+b.txt', '*(a|b)', '+(foo)', '"(x)"*', 'src/**/test/**/*.{ts,tsx}', '**/{a,b}/**/*.ts', '*a*a/*a*b', '[[]x', '\\(x\\)']) {
    assert.equal(globTooCostly(g), false, g);
  }
});

test('globTooCostly: a +(…) over plain names none of which begins another reads a name one way and passes; one with a prefix among them does not', () => {
  for (const g of ['+(priv|pub)/**', '*(x|y|z)', '+(foo)']) assert.equal(globTooCostly(g), false, g);
  for (const g of ['+(a|aa)b', '+(ab|a|b)x', '+(a|a)b', '+(a|[a])b']) assert.equal(globTooCostly(g), true, g);
});
