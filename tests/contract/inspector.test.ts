// A client nobody here wrote: @modelcontextprotocol/inspector in CLI mode lists and calls the tools.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { CLI, REPO_ROOT, tempDir } from '../../src/testing/helpers.js';

const INSPECTOR = path.join(REPO_ROOT, 'node_modules', '.bin', 'mcp-inspector');
let base: { dir: string; cleanup: () => void };
let ws: string;

before(() => {
  base = tempDir('tg-insp-');
  ws = path.join(base.dir, 'ws');
  mkdirSync(ws);
  writeFileSync(path.join(ws, 'a.txt'), 'from the inspector\nsecond line\n');
  writeFileSync(path.join(base.dir, 'outside.txt'), 'CANARY-inspector\n');
});
after(() => base?.cleanup());

function inspector(...args: string[]): any {
  const r = spawnSync(INSPECTOR, ['--cli', process.execPath, CLI, '--workspace', ws, ...args], {
    encoding: 'utf8', timeout: 90_000, env: { ...process.env, TOOLGATE_LOG_LEVEL: 'warn' },
  });
  assert.ok(r.stdout.trim().startsWith('{'), `inspector printed no JSON (exit ${r.status}): ${r.stdout}\n${r.stderr}`);
  return JSON.parse(r.stdout);
}

test('inspector --method tools/list sees the tools with their schemas', () => {
  const out = inspector('--method', 'tools/list');
  const names = out.tools.map((t: { name: string }) => t.name);
  for (const n of ['read_file', 'list_dir', 'display']) assert.ok(names.includes(n), `${n} missing from ${names}`);
  const rf = out.tools.find((t: { name: string }) => t.name === 'read_file');
  assert.equal(rf.inputSchema.additionalProperties, false);
  assert.equal(rf._meta['toolgate/risk'], 'low');
});

test('inspector --method tools/call read_file returns the envelope', () => {
  const out = inspector('--method', 'tools/call', '--tool-name', 'read_file', '--tool-arg', 'path=a.txt');
  assert.notEqual(out.isError, true);
  assert.equal(out.structuredContent.ok, true);
  assert.match(out.structuredContent.data.content, /from the inspector/);
  assert.ok(out.content.some((c: { type: string }) => c.type === 'text'));
});

test('inspector: a path outside is refused, as an envelope', () => {
  const out = inspector('--method', 'tools/call', '--tool-name', 'read_file', '--tool-arg', 'path=../outside.txt');
  assert.equal(out.isError, true);
  assert.equal(out.structuredContent.error.code, 'PathTraversalBlocked');
  assert.ok(!JSON.stringify(out).includes('CANARY-inspector'));
});

test('inspector: display and list_dir', () => {
  const shown = inspector('--method', 'tools/call', '--tool-name', 'display', '--tool-arg', 'content=hello');
  assert.equal(shown.structuredContent.ok, true);
  const listed = inspector('--method', 'tools/call', '--tool-name', 'list_dir', '--tool-arg', 'path=.');
  assert.equal(listed.structuredContent.ok, true);
  assert.ok(listed.structuredContent.data.entries.some((e: { name: string }) => e.name === 'a.txt'));
});
