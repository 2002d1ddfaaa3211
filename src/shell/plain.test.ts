import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyzeCommand } from './analyze.js';
import { loadShellParser } from './parser.js';
import { plainCommand, plainWords } from './plain.js';
import { collectCommands } from './walk.js';

// A small seeded generator: the same corpus every run.
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PLAIN_CHARS = 'abcxyzABZ0123456789_./:@%+,-';
const NAME_CHARS = 'abcxyzABZ0123456789_.+-';
const PROGRAMS = ['echo', 'git', 'ls', 'npm', 'node', 'rg', 'make', 'python3', 'cat', 'a', 'x1', 'a.b', 'a+b', 'a-b', '9', '10', '1.5', '_', 'time', 'if', 'do', 'cd', 'eval', 'exec', 'true', 'in', 'coproc', 'select', 'function'];
const ARGS = ['hi', '-n', '--', '-', '--x1', 'a:b', '@x', '%1', '50%', '1', '0', '007', '1.5', '0x1f', '1,2', './x', '../y', '/abs/p', 'x/', '.', '..', '+x', 'a,b', 'src/a.test.ts', '--run', '-la', 'HEAD1', '--help', '--version', 'e', 'E'];
const SEPS = [' ', '\t', '  ', ' \t ', '\t\t'];

test('a plain line read without the grammar is the command tree-sitter finds in it (generated corpus)', async () => {
  const parser = await loadShellParser();
  const next = rng(20261124);
  const pick = <T>(xs: T[]): T => xs[Math.floor(next() * xs.length)]!;
  const word = (chars: string) => Array.from({ length: 1 + Math.floor(next() * 6) }, () => chars[Math.floor(next() * chars.length)]).join('');
  let fast = 0;
  let lines = 0;
  for (let i = 0; i < 4000; i++) {
    const program = next() < 0.6 ? pick(PROGRAMS) : word(NAME_CHARS);
    const args = Array.from({ length: Math.floor(next() * 5) }, () => (next() < 0.5 ? pick(ARGS) : word(PLAIN_CHARS)));
    let line = [program, ...args].map((w, k) => (k === 0 ? w : pick(SEPS) + w)).join('');
    if (next() < 0.2) line = pick(SEPS) + line;
    if (next() < 0.2) line += pick(SEPS);
    lines++;
    const mine = plainCommand(line);
    if (!mine) continue;
    fast++;
    assert.deepEqual(mine, parser.parse(line, collectCommands), JSON.stringify(line));
  }
  // The corpus reaches the fast path for most lines, and leaves it for the rest (keywords, builtins, a leading -).
  assert.ok(fast > lines * 0.5 && fast < lines, `${fast} of ${lines}`);
});

test('lines that are not plain are left to the grammar', () => {
  for (const line of ['', '   ', 'echo $HOME', 'echo "a b"', "echo 'a'", 'echo a;ls', 'ls | wc', 'a=1 ls', 'ls > x', 'echo ~', 'echo *.ts', 'echo {a,b}', 'ls\nrm x',
    'echo a#b', 'cd x', 'eval ls', 'time ls', 'if x', '-x', '+x', './run', '/bin/ls', 'echo --help', 'ls\r', 'echo `id`', 'echo !x', 'echo a\\ b']) {
    assert.equal(plainCommand(line), null, JSON.stringify(line));
  }
  assert.deepEqual(plainWords(' git\tstatus  --short '), ['git', 'status', '--short']);
});

test('the analysis of a plain line is what it was through the grammar, wrappers included', async () => {
  const parser = await loadShellParser();
  // Through the grammar: a parser whose lines never look plain (a trailing newline is no plain line; the grammar ignores it).
  for (const line of ['echo hi', 'git status --short', 'timeout 5 rm -rf build', 'env rm -rf x', 'xargs rm', 'nice -n 5 git push', 'sudo ls', 'npx tsx x.ts', 'node x.js', 'python3 -m pip install x', 'git -C .. push', 'find . -delete', 'rm -rf ./src']) {
    assert.notEqual(plainCommand(line), null, line);
    assert.deepEqual(analyzeCommand(parser, line), analyzeCommand(parser, `${line}\n`), line);
  }
});
