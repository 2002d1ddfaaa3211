// Review 27 (helper-75): plainCommand must give what tree-sitter + collectCommands give for every
// line it takes. It did not for a line whose first word is `-` after blanks, followed by a word
// ending in % or @ (or holding one after a letter): the grammar misreads those (an ERROR node and
// a second "command"), and the gate's answer moved from "does not parse" to a judged program "-"
// (the approval text ` - x@ rm -rf .` reached a person). Such a first word is now left to the grammar.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { plainCommand } from '../../src/shell/plain.js';
import { loadShellParser } from '../../src/shell/parser.js';
import { collectCommands } from '../../src/shell/walk.js';

const LINES = [' - a@', ' - 1%', ' - 99%', '\t- a@', ' - a@b', ' - a%b', '\t- T%mZgq6 for', ' - x@ rm -rf .'];

test('bash runs these lines as the program "-" with its arguments (what the fast path says)', () => {
  for (const line of LINES) {
    const r = spawnSync('/bin/bash', ['--norc', '--noprofile', '-c', line], { env: { PATH: '/nonexistent' }, encoding: 'utf8' });
    assert.equal(r.status, 127, line);
    assert.match(r.stderr, /-: command not found/, line);
  }
});

test('plainCommand leaves a first word that starts with - or + to the grammar, after blanks too', async () => {
  const parser = await loadShellParser();
  const diff = LINES.filter((line) => {
    const mine = plainCommand(line);
    return mine !== null && JSON.stringify(mine) !== JSON.stringify(parser.parse(line, collectCommands));
  });
  assert.deepEqual(diff, []);
  for (const line of [...LINES, ' -x', '\t+x y', '  --help']) assert.equal(plainCommand(line), null, JSON.stringify(line));
  assert.deepEqual(plainCommand(' x -y'), [{ assigns: [], words: [{ text: 'x', literal: true }, { text: '-y', literal: true }], redirects: [], text: 'x -y' }]);
});
