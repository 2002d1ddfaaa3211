import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Node, Parser, Tree } from 'web-tree-sitter';
import { analyzeCommand } from './analyze.js';
import { loadShellParser } from './parser.js';

// Trees live in the grammar's wasm memory, which no garbage collector frees: a tree not deleted
// stays for the server's life (~2.5 KB a command was measured: 50 MB over 20,000 commands).
test('every tree a command analysis parses is freed, nested scripts and a throwing reader included', async () => {
  const parser = await loadShellParser();
  let parsed = 0;
  let freed = 0;
  const parse = Parser.prototype.parse;
  const del = Tree.prototype.delete;
  Parser.prototype.parse = function (...a: Parameters<typeof parse>) { parsed++; return parse.apply(this, a); };
  Tree.prototype.delete = function () { freed++; return del.call(this); };
  try {
    // Not plain lines (those are read without the grammar: plainCommand), nested ones neither.
    for (const cmd of ['echo "hi"', 'bash -c "ls | wc -l" && sh -c \'cat "x"\'', 'echo $(id) `whoami` <(ls)', 'for f in *.ts; do echo "$f"; done', 'if [ -e x ]; then rm x; fi']) {
      analyzeCommand(parser, cmd);
    }
    assert.ok(parsed >= 7, `nested scripts parse too (${parsed} parses)`);
    assert.equal(freed, parsed, 'a tree left undeleted leaks its wasm memory');
    assert.throws(() => parser.parse('echo hi', () => { throw new Error('reader failed'); }), /reader failed/);
    assert.equal(freed, parsed, 'freed when the reader throws too');
  } finally {
    Parser.prototype.parse = parse;
    Tree.prototype.delete = del;
  }
});

test('a reader may not hand a syntax node out of parse (it would be read after its tree is freed)', async () => {
  const parser = await loadShellParser();
  // @ts-expect-error -- the reader's type refuses a node too
  assert.throws(() => parser.parse('echo hi', (root) => root.child(0)), /returned a syntax node/);
  assert.equal(parser.parse('echo hi', (root) => root.text), 'echo hi');
});

// A node read after its tree was deleted does not fail in web-tree-sitter: it reads wasm memory
// the next parse reuses (an empty walk, another command's text), which could let a command through
// unjudged. Here every node getter and method throws once its tree is gone, and the analysis of
// the commands the shell tests use, nested scripts and refusals included, must not trip it.
test('no analysis reads a syntax node after its tree is freed', async () => {
  const parser = await loadShellParser();
  const proto = Node.prototype as unknown as Record<string, unknown>;
  const saved = new Map<string, PropertyDescriptor>();
  let reads = 0;
  for (const key of Object.getOwnPropertyNames(proto)) {
    const d = Object.getOwnPropertyDescriptor(proto, key)!;
    if (key === 'constructor' || (!d.get && typeof d.value !== 'function')) continue;
    saved.set(key, d);
    const check = (self: { tree: Tree }) => {
      reads++;
      if ((self.tree as unknown as Record<number, number>)[0] === 0) throw new Error(`Node.${key} read after its tree was deleted`);
    };
    if (d.get) Object.defineProperty(proto, key, { ...d, get(this: { tree: Tree }) { check(this); return d.get!.call(this); } });
    else Object.defineProperty(proto, key, { ...d, value(this: { tree: Tree }, ...a: unknown[]) { check(this); return (d.value as (...x: unknown[]) => unknown).apply(this, a); } });
  }
  try {
    // The guard itself works: a node kept past parse() trips it.
    let kept: Node | null = null;
    parser.parse('echo kept', (root) => { kept = root.child(0); return 0; });
    assert.throws(() => kept!.text, /read after its tree was deleted/);
    // Every quoted command line of the shell and run_command tests, and a few deep ones.
    const sources = ['./analyze.test.ts', './guardrails.test.ts', './differential.test.ts', '../tools/run-command/run-command.test.ts'].map((f) => new URL(f, import.meta.url));
    const lines = new Set<string>();
    for (const f of sources) {
      for (const m of readFileSync(f, 'utf8').matchAll(/'((?:[^'\\\n]|\\.){1,400})'/g)) lines.add(m[1]!.replace(/\\(.)/g, '$1'));
    }
    for (const deep of [`${'$('.repeat(300)}id${')'.repeat(300)}`, `echo $((${'('.repeat(2000)}1${')'.repeat(2000)}))`, `bash -c ${JSON.stringify('sh -c "eval x; cat <<E\nhi\nE"')}`]) lines.add(deep);
    assert.ok(lines.size > 300, `a corpus of command lines (${lines.size})`);
    for (const line of lines) analyzeCommand(parser, line);
    assert.ok(reads > 10_000, `the analyses read the trees (${reads} reads)`);
  } finally {
    for (const [key, d] of saved) Object.defineProperty(proto, key, d);
  }
});
