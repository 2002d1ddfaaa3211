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

// Over HTTP: the Inspector CLI 0.16.8+ sends the bearer token with --header (0.15 could not).
async function overHttp(fn: (url: string, token: string) => void | Promise<void>) {
  const { spawnHttpServer } = await import('../../src/server/http-spawn.js');
  const srv = await spawnHttpServer(['--workspace', ws], {
    env: { XDG_STATE_HOME: path.join(base.dir, 'state'), XDG_RUNTIME_DIR: path.join(base.dir, 'run') },
  });
  try {
    await fn(`${srv.url}/mcp`, srv.token);
  } finally {
    await srv.stop();
  }
}

function inspectorHttp(url: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(INSPECTOR, ['--cli', url, ...args], { encoding: 'utf8', timeout: 90_000 });
}

test('inspector over HTTP (--transport http --header "Authorization: Bearer …"): tools/list and tools/call', async () => {
  await overHttp(async (url, token) => {
    const run = (...a: string[]) => new Promise<ReturnType<typeof inspectorHttp>>((r) => setImmediate(() => r(inspectorHttp(url, '--transport', 'http', '--header', `Authorization: Bearer ${token}`, ...a))));
    const list = await run('--method', 'tools/list');
    assert.ok(list.stdout.trim().startsWith('{'), `inspector printed no JSON (exit ${list.status}): ${list.stdout}\n${list.stderr}`);
    const names = JSON.parse(list.stdout).tools.map((t: { name: string }) => t.name);
    assert.ok(names.includes('read_file') && names.includes('grep'), names.join(','));
    const call = await run('--method', 'tools/call', '--tool-name', 'read_file', '--tool-arg', 'path=a.txt');
    const out = JSON.parse(call.stdout);
    assert.equal(out.structuredContent.ok, true);
    assert.match(out.content[0].text, /from the inspector/);
  });
});

test('inspector over HTTP without the token is refused (control)', async () => {
  await overHttp(async (url) => {
    const r = await new Promise<ReturnType<typeof inspectorHttp>>((res) => setImmediate(() => res(inspectorHttp(url, '--transport', 'http', '--method', 'tools/list'))));
    assert.notEqual(r.status, 0);
    assert.ok(!r.stdout.includes('read_file'), r.stdout);
  });
});
