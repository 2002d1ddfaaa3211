import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Parser, Tree } from 'web-tree-sitter';
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
    for (const cmd of ['echo hi', 'bash -c "ls | wc -l" && sh -c \'cat x\'', 'echo $(id) `whoami` <(ls)', 'for f in *.ts; do echo "$f"; done', 'if [ -e x ]; then rm x; fi']) {
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
