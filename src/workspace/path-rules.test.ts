import { test } from 'node:test';
import assert from 'node:assert/strict';
import picomatch from 'picomatch';
import { compileGlobs, DEFAULT_DENY, DEFAULT_PROTECT, INSIDE, requiredLiterals } from './path-rules.js';

/** compileGlobs before the literal pre-check: picomatch over the two groups of patterns. */
function reference(input: string[]): (p: string) => boolean {
  const cleaned = input.map((p) => (p.length > 1 ? p.replace(/\/+$/, '') : p));
  const bare = cleaned.filter((p) => !p.includes('/'));
  const rooted = cleaned.filter((p) => p.includes('/')).map((p) => p.replace(/^\/+/, ''));
  const byName = bare.length ? picomatch(bare, { dot: true, basename: true }) : () => false;
  const byPath = rooted.length ? picomatch(rooted, { dot: true }) : () => false;
  return (p) => byName(p) || byPath(p);
}

const PATTERNS = [
  ...DEFAULT_DENY, ...DEFAULT_PROTECT,
  '*.log', 'secret*', 'a?c', 'src/**', 'build/', '**/node_modules/**', 'docs/*.md', '.env*',
  '{a,b}.txt', '**/*.{pem,crt}', '[ab]*.key', '!(x).y', '+(z).q', 'dir\\*x', './rel/file', 'a/../b',
  '**/.ssh', '**/id_*', 'tmp/**/cache', '**', '*',
];
const PATHS = [
  '', 'a', '.env', '.env.local', 'x/.env', 'x/.env.prod', 'x/y/.envrc', 'key.pem', 'a/b/c.pem', 'c.pem/inner',
  'a.key', 'dir/a.key', 'a.keys', '.ssh', '.ssh/id_rsa', 'home/u/.ssh/config', 'x/.sshd/y', '.aws/credentials',
  '.netrc', 'x/.npmrc', '.npmrc.bak', '.git', '.git/config', 'sub/.git/hooks/pre-commit', '.toolgate/audit.jsonl',
  'app.log', 'logs/app.log', 'secrets.txt', 'src/secret', 'abc', 'x/abc', 'src/a/b.ts', 'build', 'build/out.js',
  'node_modules/x/index.js', 'a/node_modules/b', 'docs/readme.md', 'docs/sub/readme.md', 'a.txt', 'c.txt',
  'x.crt', 'b1.key', 'c1.key', 'w.y', 'x.y', 'zz.q', 'dirx', 'dir*x', 'rel/file', 'b', 'id_ed25519', 'k/id_rsa.pub',
  'tmp/cache', 'tmp/a/b/cache', 'work/bench/pkg000/mod0/file1.c', `x/.ssh/${INSIDE}`, `d/${INSIDE}`, '.vscode/settings.json',
];

test('compileGlobs with the literal pre-check answers exactly as plain picomatch, pattern by pattern and all together', () => {
  for (const pat of PATTERNS) {
    const ours = compileGlobs([pat]);
    const ref = reference([pat]);
    for (const p of PATHS) assert.equal(ours(p), ref(p), `pattern ${JSON.stringify(pat)} on ${JSON.stringify(p)}`);
  }
  const ours = compileGlobs(PATTERNS);
  const ref = reference(PATTERNS);
  for (const p of PATHS) assert.equal(ours(p), ref(p), `all patterns on ${JSON.stringify(p)}`);
});

test('the secrets list still catches its names at any depth, absolute paths included', () => {
  const deny = compileGlobs(DEFAULT_DENY);
  for (const p of ['srv/app/.env', 'home/u/.ssh/id_rsa', 'x/server.key', 'a/b.pem', 'p/.aws/config', 'q/.env.local', 'r/.netrc', 's/.npmrc', 't/.gnupg/k']) {
    assert.equal(deny(p), true, p);
  }
  for (const p of ['srv/app/env', 'src/key.ts', 'pem/x', 'a/.environment']) assert.equal(deny(p), false, p);
});

test('requiredLiterals gives up on any syntax beyond * ? and /', () => {
  assert.deepEqual(requiredLiterals('**/*.pem'), ['.pem']);
  assert.deepEqual(requiredLiterals('**/.ssh/**'), ['.ssh']);
  assert.deepEqual(requiredLiterals('src/*/a?c.ts'), ['src', 'a', 'c.ts']);
  for (const p of ['{a,b}', '[ab]', '!(x)', '+(x)', '@(x)', 'a\\*', './a', 'a/../b', '**', '*']) assert.deepEqual(requiredLiterals(p), [], p);
});

/** Every part of `s` between two characters ('' included), alone and followed by "/" INSIDE. */
function partsOf(s: string): string[] {
  const out = new Set<string>(['', `/${INSIDE}`]);
  for (let i = 0; i < s.length; i++) for (let j = i + 1; j <= s.length; j++) { const t = s.slice(i, j); out.add(t); out.add(`${t}/${INSIDE}`); }
  return [...out];
}

test('noneWithin says "no match" only when no part of the path can match, for each pattern and for all together', () => {
  const sets = [...PATTERNS.map((p) => [p]), PATTERNS, DEFAULT_DENY, DEFAULT_PROTECT, ['**/*.pem', 'x/**'], ['.env']];
  let sure = 0;
  for (const set of sets) {
    const m = compileGlobs(set);
    for (const p of PATHS) {
      if (!m.noneWithin(p)) continue;
      sure++;
      for (const part of partsOf(p)) assert.equal(m(part), false, `${JSON.stringify(set)} matched ${JSON.stringify(part)} within ${JSON.stringify(p)}`);
    }
  }
  assert.ok(sure > 100, `noneWithin was sure only ${sure} times: the quick path would never be taken`);
});

test('noneWithin on random patterns and paths never hides a match', () => {
  let seed = 7;
  const rnd = (n: number) => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed % n; };
  const pick = <T>(xs: readonly T[]) => xs[rnd(xs.length)]!;
  const segs = ['a', 'b', '.e', 'ab', '*', '**', '?', 'a*', '*.b', '.e*', 'x?y'];
  const names = ['a', 'b', '.e', 'ab', 'ba', 'xay', '.eb', 'a.b', 'e'];
  let sure = 0;
  for (let k = 0; k < 300; k++) {
    const pats = Array.from({ length: 1 + rnd(3) }, () => Array.from({ length: 1 + rnd(3) }, () => pick(segs)).join('/'));
    const m = compileGlobs(pats);
    for (let i = 0; i < 20; i++) {
      const p = Array.from({ length: 1 + rnd(4) }, () => pick(names)).join('/');
      if (!m.noneWithin(p)) continue;
      sure++;
      for (const part of partsOf(p)) assert.equal(m(part), false, `${JSON.stringify(pats)} matched ${JSON.stringify(part)} within ${JSON.stringify(p)}`);
    }
  }
  assert.ok(sure > 200, `only ${sure} sure answers`);
});

test('noneWithin is never sure when a pattern names no literal text', () => {
  for (const set of [['*'], ['**'], ['{a,b}.txt', '**/*.pem'], ['**/.env', '[ab]*'], ['a\u0000b']]) {
    const m = compileGlobs(set);
    for (const p of ['', 'a', 'x/y.pem', 'zzz']) assert.equal(m.noneWithin(p), false, `${JSON.stringify(set)} on ${p}`);
  }
  // The default secrets list is sure for ordinary paths, and never for one holding a secret's name.
  const deny = compileGlobs(DEFAULT_DENY);
  assert.equal(deny.noneWithin('work/bench/pkg000/mod0/file1.c'), true);
  for (const p of ['x/.env', 'home/u/.ssh', 'a/b.pem', 'k.key', '.npmrc']) assert.equal(deny.noneWithin(p), false, p);
});
