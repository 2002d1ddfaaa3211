// Review (helper-43): variables that hold code or change what a name runs, set without a literal `NAME=` word
// (printf -v, read, mapfile, subscripts), bash's hash/alias tables as arrays, exported functions via
// env, and builtins that run text (mapfile -C, fc -s). Each ran `touch` under a policy that never allows it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';

const allow = (names: string[]) => names.map((n) => `  - { tool: run_command, command: ["${n}"], decision: allow }\n`).join('');
const ALLOWLIST = policyFromYaml(`mode: ci\nsandbox: { backend: none }\ncommands: { prefer_tools: false }\nrules:\n${allow(['cat', 'echo', 'printf', 'read', 'mapfile', 'set', 'history', 'fc'])}`);
const DENYLIST = policyFromYaml('mode: ci\nsandbox: { backend: none }\ncommands: { prefer_tools: false }\nrules:\n  - { tool: run_command, command: ["touch"], decision: deny }\n  - { tool: "*", decision: allow }\n');

async function ran(policy: ReturnType<typeof policyFromYaml>, lines: string[]): Promise<string[]> {
  process.env.TOOLGATE_STARTER = 'off';
  const { dir, cleanup } = tempDir('tg-r43-cv-');
  writeFileSync(path.join(dir, 'a.txt'), 'line\n');
  const h = new Harness([dir], { policy });
  const bad: string[] = [];
  try {
    assert.equal((await h.call('run_command', { command: 'touch P' })).ok, false, 'control');
    for (const command of lines) {
      rmSync(path.join(dir, 'P'), { force: true });
      await h.call('run_command', { command });
      if (existsSync(path.join(dir, 'P'))) bad.push(command);
    }
  } finally { h.close(); cleanup(); delete process.env.TOOLGATE_STARTER; }
  return bad;
}

test('an allow-list of cat/echo/printf/read/mapfile/set/history/fc does not run touch', async () => {
  const bad = await ran(ALLOWLIST, [
    "printf -v 'BASH_CMDS[cat]' %s /usr/bin/touch; cat P",       // BASH_CMDS is the hash table: `cat` runs touch
    "read 'BASH_CMDS[cat]' <<< /usr/bin/touch; cat P",
    "printf -v PS4 %s%s '$' '(touch P)'; set -x; echo",           // PS4 set without a PS4= word
    "read PS4 <<< '$(touch P)'; set -x; echo",
    "mapfile -t PS4 <<< '$(touch P)'; set -x; echo",
    "mapfile -C 'touch P; :' -c 1 < a.txt",                       // the callback is code
    "history -s 'touch P'; fc -s touch",                          // fc -s runs a history line
  ]);
  assert.deepEqual(bad, []);
});

test('a deny rule on touch is not passed by code variables, hash/alias arrays or exported functions', async () => {
  const bad = await ran(DENYLIST, [
    "BASH_CMDS[cat]=/usr/bin/touch; cat P",
    "shopt -s expand_aliases\nBASH_ALIASES[x]='touch P'\nx",
    "PS4[0]='$(touch P)'; set -x; :",                             // CODE_VARS misses a subscript
    "declare -n r=PS4; r='$(touch P)'; set -x; :",                // nameref
    "env 'BASH_FUNC_cat%%=() { touch P; }' bash -c 'cat a.txt'",  // exported function replaces cat
  ]);
  assert.deepEqual(bad, []);
});

test('common lines still pass', async () => {
  process.env.TOOLGATE_STARTER = 'off';
  const { dir, cleanup } = tempDir('tg-r43-ok-');
  writeFileSync(path.join(dir, 'a.txt'), 'line\n');
  const h = new Harness([dir], { policy: DENYLIST });
  try {
    for (const command of ['for f in *.txt; do wc -l "$f"; done', 'x=$(date); echo "$x"', "cat <<'EOF'\nhello\nEOF"]) {
      const r = await h.call('run_command', { command });
      assert.ok(r.ok, `${command}: ${r.error?.message}`);
    }
  } finally { h.close(); cleanup(); delete process.env.TOOLGATE_STARTER; }
});
