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
