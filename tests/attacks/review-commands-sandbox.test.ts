import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { detectBwrap } from '../../src/exec/sandbox.js';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';

/**
 * Review of the sandbox side of issue 8 §3 under bubblewrap: the mask index stays current when
 * someone else changes the tree between two commands, and protected paths a command creates
 * at a new depth. (Static-analysis rows live in review-commands.test.ts.)
 */

const hasBwrap = (await detectBwrap()) !== null;
const hasPython = spawnSync('python3', ['-c', '0']).status === 0;
const skip = hasBwrap ? false : 'needs bubblewrap (bwrap) working here';

const policy = policyFromYaml(`mode: ci
sandbox: { backend: bwrap }
commands: { prefer_tools: false }
rules:
  - { tool: "*", path: "priv/**", decision: deny }
  - { tool: "*", path: "**/*.secret", decision: deny }
  - { tool: "*", decision: allow }
`);

test('mask index: what someone else creates or moves between two commands is masked for the very next one', { skip }, async () => {
  const { dir, cleanup } = tempDir('tg-revsb-');
  const h = new Harness([dir], { policy });
  const w = (rel: string, text: string) => { mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true }); writeFileSync(path.join(dir, rel), text); };
  const out = async (command: string) => {
    const env = await h.call('run_command', { command });
    return `${(env.data as { output?: string } | null)?.output ?? ''} ${env.error?.message ?? ''}`;
  };
  try {
    w('pub/a', 'PUBLIC_OK\n');
    assert.match(await out('cat pub/a'), /PUBLIC_OK/); // the index is built and watching
    const rows: Array<[string, () => void, string, string]> = [
      ['a new folder holding a secret', () => w('fresh/deep/k.secret', 'FRESH_1'), 'cat fresh/deep/*.sec*', 'FRESH_1'],
      ['a new file in a denied folder', () => w('priv/y', 'FRESH_2'), 'cat pr*/y', 'FRESH_2'],
      ['3,000 files then a secret', () => { for (let i = 0; i < 3000; i++) w(`big/d${i % 30}/f${i}`, 'x'); w('big/d29/z.secret', 'FRESH_3'); }, 'cat big/d29/*.sec*', 'FRESH_3'],
      ['a folder renamed into view', () => { w('stage/inner/q.secret', 'FRESH_4'); renameSync(path.join(dir, 'stage'), path.join(dir, 'moved')); }, 'cat moved/inner/*.sec*', 'FRESH_4'],
      ['25,000 files at once (past the pending cap: a rebuild)', () => { for (let i = 0; i < 25000; i++) w(`flood/d${i % 50}/f${i}`, 'x'); w('flood/d1/o.secret', 'FRESH_5'); }, 'cat flood/d1/*.sec*', 'FRESH_5'],
    ];
    const leaks: string[] = [];
    for (const [name, change, command, marker] of rows) {
      change();
      if ((await out(command)).includes(marker)) leaks.push(name);
    }
    assert.deepEqual(leaks, []);
    assert.match(await out('cat pub/a'), /PUBLIC_OK/, 'control');
  } finally { h.close(); cleanup(); }
});

/** Protected names a command creates where none existed: each must not be left behind. */
const CREATE_PROTECTED: Array<{ command: string; made: string }> = [
  { command: 'python3 -c "import os; os.makedirs(\'pub/.vscode\'); open(\'pub/.vscode/tasks.json\',\'w\').write(\'{}\')"', made: 'pub/.vscode/tasks.json' },
  { command: 'python3 -c "import os; os.makedirs(\'pub/d/.git/hooks\'); open(\'pub/d/.git/hooks/post-checkout\',\'w\').write(\'x\')"', made: 'pub/d/.git/hooks/post-checkout' },
  { command: 'python3 -c "import subprocess; subprocess.run([\'git\',\'init\',\'-q\',\'pub/n\'])"', made: 'pub/n/.git/config' },
  { command: 'python3 -c "open(\'pub/.mcp.json\',\'w\').write(\'{}\')"', made: 'pub/.mcp.json' },
];

for (const row of CREATE_PROTECTED) {
  test(`protected path created at a new depth by a script: ${row.made}`, {
    skip: skip || (!hasPython ? 'needs python3' : false),
    todo: 'a protected name (.vscode, .git, .mcp.json…) below a folder where none existed is only bound read-only from the next command on; a script creates it freely (shell text is refused statically). Needs a post-run check of new protected paths (quarantine) or an LSM; not fixed in this review',
  }, async () => {
    const { dir, cleanup } = tempDir('tg-revsb-');
    const h = new Harness([dir], { policy });
    try {
      mkdirSync(path.join(dir, 'pub'));
      await h.call('run_command', { command: row.command });
      const left = (() => { try { lstatSync(path.join(dir, row.made)); return true; } catch { return false; } })();
      assert.equal(left, false, `${row.made} was left behind`);
    } finally { h.close(); cleanup(); }
  });
}

test('control: the same scripts write ordinary files', { skip: skip || (!hasPython ? 'needs python3' : false) }, async () => {
  const { dir, cleanup } = tempDir('tg-revsb-');
  const h = new Harness([dir], { policy });
  try {
    mkdirSync(path.join(dir, 'pub'));
    const env = await h.call('run_command', { command: 'python3 -c "import os; os.makedirs(\'pub/vscode\'); open(\'pub/vscode/tasks.json\',\'w\').write(\'{}\')"' });
    assert.equal(env.ok, true, JSON.stringify(env.error));
    assert.equal(existsSync(path.join(dir, 'pub/vscode/tasks.json')), true);
  } finally { h.close(); cleanup(); }
});
