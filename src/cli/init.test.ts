import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { loadPolicyFile } from '../policy/load.js';
import { CLI, tempDir } from '../testing/helpers.js';
import { CLIENTS, clientSnippet, initCommand } from './init.js';
import { UsageError } from './setup.js';

test('init writes a starter toolgate.yaml that loads as a valid policy', async () => {
  const { dir, cleanup } = tempDir('tg-init-');
  let out = '';
  assert.equal(await initCommand({ workspace: [dir], client: 'cursor' }, (s) => { out += s; }, '/opt/toolgate/dist/cli.js'), 0);
  const file = path.join(dir, 'toolgate.yaml');
  const policy = await loadPolicyFile(file);
  assert.equal(policy.profile, 'edit');
  assert.equal(policy.mode, 'interactive');
  assert.equal(policy.data.network.allow_private, false);
  assert.match(readFileSync(file, 'utf8'), /^# toolgate policy/);
  assert.match(out, /\.cursor\/mcp\.json/);
  assert.ok(out.includes(dir));
  cleanup();
});

test('init never overwrites an existing toolgate.yaml', async () => {
  const { dir, cleanup } = tempDir('tg-init-');
  writeFileSync(path.join(dir, 'toolgate.yaml'), 'mine\n');
  await assert.rejects(initCommand({ workspace: [dir] }, () => {}), (e: Error) => e instanceof UsageError && /already exists/.test(e.message));
  assert.equal(readFileSync(path.join(dir, 'toolgate.yaml'), 'utf8'), 'mine\n');
  cleanup();
});

test('init refuses an unknown client and a missing folder', async () => {
  const { dir, cleanup } = tempDir('tg-init-');
  await assert.rejects(initCommand({ workspace: [dir], client: 'emacs' }, () => {}), /--client must be one of/);
  await assert.rejects(initCommand({ workspace: [path.join(dir, 'nope')] }, () => {}), /does not exist/);
  cleanup();
});

test('every client snippet names the workspace, the policy, and both transports; JSON blocks parse', () => {
  for (const c of CLIENTS) {
    const s = clientSnippet(c, '/home/u/app', '/opt/tg/dist/cli.js');
    assert.ok(s.includes('/home/u/app/toolgate.yaml'), c);
    assert.ok(s.includes('http://127.0.0.1:3333/mcp'), c);
    assert.match(s, /Bearer/, c);
    // Each JSON object in the snippet is valid JSON.
    const blocks = s.split('\n').reduce<{ cur: string[]; all: string[] }>((acc, line) => {
      if (line === '{') acc.cur = [line];
      else if (acc.cur.length) { acc.cur.push(line); if (line === '}') { acc.all.push(acc.cur.join('\n')); acc.cur = []; } }
      return acc;
    }, { cur: [], all: [] }).all;
    if (c !== 'claude-code') assert.equal(blocks.length, 2, c);
    for (const b of blocks) JSON.parse(b);
  }
});

test('the built CLI: toolgate init --client vscode prints the snippet on stdout, the file on disk', () => {
  const { dir, cleanup } = tempDir('tg-init-');
  const r = spawnSync(process.execPath, [CLI, 'init', '--client', 'vscode', '--workspace', dir], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /"servers"/);
  assert.match(r.stdout, /"type": "http"/);
  assert.match(r.stderr, /wrote .*toolgate\.yaml/);
  const again = spawnSync(process.execPath, [CLI, 'init', '--workspace', dir], { encoding: 'utf8' });
  assert.equal(again.status, 2);
  assert.match(again.stderr, /already exists/);
  const validate = spawnSync(process.execPath, [CLI, 'policy', 'validate', path.join(dir, 'toolgate.yaml')], { encoding: 'utf8' });
  assert.equal(validate.status, 0, validate.stderr + validate.stdout);
  cleanup();
});
