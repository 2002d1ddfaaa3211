// The MCP contract over stdio with the real SDK client: tools/list shape, envelopes on every
// call (validated with ajv against each tool's outputSchema, errors included), stdout purity,
// one audit record per call, and the workspace rules for roots.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ListRootsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { ERROR_CODES } from '../../src/core/errors.js';
import { CLI, connectStdio, tempDir } from '../../src/testing/helpers.js';

type CallResult = Awaited<ReturnType<Client['callTool']>>;
const ajv = new AjvJsonSchemaValidator();

let ws: { dir: string; cleanup: () => void };
let client: Client;
let close: () => Promise<void>;
let tools: Tool[];

before(async () => {
  ws = tempDir('tg-contract-');
  writeFileSync(path.join(ws.dir, 'a.txt'), 'alpha\nbeta\n');
  mkdirSync(path.join(ws.dir, 'sub'));
  writeFileSync(path.join(ws.dir, 'sub', 'b.txt'), 'bee\n');
  ({ client, close } = await connectStdio(['--workspace', ws.dir]));
  tools = (await client.listTools()).tools;
});
after(async () => {
  await close?.();
  ws?.cleanup();
});

function toolNamed(name: string): Tool {
  const t = tools.find((x) => x.name === name);
  assert.ok(t, `${name} is not listed`);
  return t;
}

/** The envelope of SPEC §3, checked field by field, and against the tool's own outputSchema. */
function checkEnvelope(r: CallResult, toolName: string | null): Record<string, any> {
  const env = r.structuredContent as Record<string, any>;
  assert.ok(env && typeof env === 'object', 'no structuredContent');
  for (const k of ['tool_call_id', 'trace_id', 'tool', 'version', 'ok', 'status', 'data', 'error', 'text', 'stats', 'artifacts', 'context']) assert.ok(k in env, `envelope lacks ${k}`);
  assert.match(env.tool_call_id, /^tc_/);
  assert.match(env.trace_id, /^tr_/);
  assert.equal(r.isError === true, env.ok === false, 'isError exactly when ok is false');
  assert.ok(['ok', 'partial', 'error'].includes(env.status));
  assert.equal(env.status === 'error', !env.ok);
  if (env.ok) assert.equal(env.error, null);
  else {
    assert.ok((ERROR_CODES as readonly string[]).includes(env.error.code), `code ${env.error.code} outside the closed set`);
    assert.ok(env.error.message.length > 10);
  }
  assert.ok(Array.isArray(env.artifacts.files_changed) && Array.isArray(env.artifacts.commands_run));
  assert.equal(typeof env.stats.duration_ms, 'number');
  const content = r.content as Array<{ type: string; text?: string }>;
  assert.ok(content.some((c) => c.type === 'text' && c.text && c.text.length > 0), 'a text block a model can read on its own');
  if (toolName) {
    const v = ajv.getValidator(toolNamed(toolName).outputSchema as never)(env);
    assert.ok(v.valid, `structuredContent does not match ${toolName}'s outputSchema: ${v.errorMessage}`);
  }
  return env;
}

async function call(name: string, args: unknown, meta?: Record<string, unknown>): Promise<CallResult> {
  return client.callTool({ name, arguments: args as Record<string, unknown>, ...(meta ? { _meta: meta } : {}) }, undefined, { timeout: 60_000 });
}

describe('tools/list', () => {
  test('every entry carries the SPEC fields', () => {
    assert.ok(tools.length >= 1);
    for (const t of tools) {
      assert.match(t.name, /^[a-z][a-z0-9_]*$/, t.name);
      assert.ok(t.title && t.title.length > 0, `${t.name}: title`);
      assert.ok(t.description && t.description.length > 40, `${t.name}: description`);
      assert.equal(t.inputSchema.type, 'object');
      assert.equal((t.inputSchema as Record<string, unknown>).additionalProperties, false, `${t.name}: inputSchema.additionalProperties`);
      assert.ok(t.outputSchema && t.outputSchema.type === 'object', `${t.name}: outputSchema`);
      for (const h of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
        assert.equal(typeof t.annotations?.[h], 'boolean', `${t.name}: annotations.${h}`);
      }
      const meta = t._meta as Record<string, unknown>;
      assert.match(String(meta['toolgate/version']), /^\d+\.\d+\.\d+$/);
      assert.ok(['low', 'medium', 'high'].includes(meta['toolgate/risk'] as string), `${t.name}: risk`);
      assert.ok(Array.isArray(meta['toolgate/permissions']), `${t.name}: permissions`);
      for (const p of meta['toolgate/permissions'] as string[]) assert.ok(['fs.read', 'fs.write', 'fs.delete', 'proc.exec', 'net.connect'].includes(p), p);
      assert.equal(typeof meta['toolgate/side_effects'], 'string');
    }
  });

  test('no two tools share a name', () => {
    assert.equal(new Set(tools.map((t) => t.name)).size, tools.length);
  });

  test('every outputSchema compiles and describes the envelope', () => {
    for (const t of tools) {
      const props = (t.outputSchema as { properties: Record<string, unknown> }).properties;
      for (const k of ['ok', 'status', 'data', 'error', 'text', 'artifacts']) assert.ok(k in props, `${t.name}: outputSchema lacks ${k}`);
      assert.doesNotThrow(() => ajv.getValidator(t.outputSchema as never));
    }
  });
});

describe('every call returns the envelope', () => {
  test('an allowed call (display)', async () => {
    const env = checkEnvelope(await call('display', { content: 'hi' }), 'display');
    assert.equal(env.ok, true);
    assert.equal(env.tool, 'display');
  });

  test('read_file ok, and its data keys', async () => {
    const env = checkEnvelope(await call('read_file', { path: 'a.txt' }), 'read_file');
    assert.equal(env.ok, true);
    for (const k of ['content', 'offset', 'limit', 'total_lines', 'size', 'mtime_ms', 'sha256', 'truncated']) assert.ok(k in env.data, `read_file data lacks ${k}`);
  });

  test('list_dir ok', async () => {
    checkEnvelope(await call('list_dir', { path: '.' }), 'list_dir');
  });

  const errorRows: Array<[string, string, unknown, string]> = [
    ['path outside → PathTraversalBlocked', 'read_file', { path: '../x' }, 'PathTraversalBlocked'],
    ['secret → PathDenied', 'read_file', { path: '.env' }, 'PathDenied'],
    ['missing file → NotFound', 'read_file', { path: 'nope.txt' }, 'NotFound'],
    ['a folder for read_file → InvalidArguments', 'read_file', { path: 'sub' }, 'InvalidArguments'],
    ['wrong type → InvalidArguments', 'read_file', { path: 42 }, 'InvalidArguments'],
    ['missing required → InvalidArguments', 'read_file', {}, 'InvalidArguments'],
    ['bad enum → InvalidArguments', 'display', { content: 'x', level: 'loud' }, 'InvalidArguments'],
  ];
  for (const [name, tool, args, code] of errorRows) {
    test(name, async () => {
      const env = checkEnvelope(await call(tool, args), tool);
      assert.equal(env.ok, false);
      assert.equal(env.error.code, code, env.error.message);
    });
  }

  test('unknown key → InvalidArguments naming the key', async () => {
    const env = checkEnvelope(await call('read_file', { path: 'a.txt', colour: 'red' }), 'read_file');
    assert.equal(env.error.code, 'InvalidArguments');
    assert.match(env.error.message, /"colour"/);
  });

  test('unknown tool → ToolNotFound envelope, not a protocol error', async () => {
    const r = await call('no_such_tool', {});
    const env = checkEnvelope(r, null);
    assert.equal(r.isError, true);
    assert.equal(env.error.code, 'ToolNotFound');
    assert.match(env.error.message, /tools\/list/);
  });

  test('a near miss suggests the tool', async () => {
    const env = checkEnvelope(await call('read_flie', {}), null);
    assert.equal(env.error.code, 'ToolNotFound');
    assert.match(env.error.message, /read_file/);
  });

  test('a major version mismatch → VersionMismatch', async () => {
    const env = checkEnvelope(await call('display', { content: 'x' }, { 'toolgate/version': '9.0.0' }), 'display');
    assert.equal(env.error.code, 'VersionMismatch');
  });

  test('arguments that are not an object → InvalidArguments or a clean protocol error', async () => {
    try {
      const r = await call('display', 'just a string');
      const env = checkEnvelope(r, 'display');
      assert.equal(env.error.code, 'InvalidArguments');
    } catch (e) {
      assert.match(String(e), /-32602|Invalid/);
    }
  });
});

describe('audit', () => {
  test('one record per call (allowed, denied, invalid, unknown) and the log verifies', async () => {
    const file = path.join(ws.dir, '.toolgate', 'audit.jsonl');
    const before = readFileSync(file, 'utf8').split('\n').filter(Boolean).length;
    await call('display', { content: 'audit me' });
    await call('read_file', { path: '.env' });
    await call('read_file', { path: 'a.txt', bogus: 1 });
    await call('nope_tool', {});
    await call('read_file', { path: 'a.txt', api_key: 'sk-abcdefghijklmnopqrstuvwxyz' });
    const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    const fresh = lines.slice(before);
    assert.equal(fresh.length, 5);
    assert.deepEqual(fresh.map((r) => [r.tool, r.ok, r.error_code]), [
      ['display', true, null], ['read_file', false, 'PathDenied'], ['read_file', false, 'InvalidArguments'], ['nope_tool', false, 'ToolNotFound'], ['read_file', false, 'InvalidArguments'],
    ]);
    assert.equal(fresh[0].decision, 'allow');
    assert.ok(!JSON.stringify(fresh).includes('sk-abcdefghijklmnopqrstuvwxyz'), 'a secret reached the audit log');
    const v = spawnSync(process.execPath, [CLI, 'audit', 'verify', file], { encoding: 'utf8' });
    assert.equal(v.status, 0, v.stdout + v.stderr);
    assert.match(v.stdout, /intact/);
  });
});

describe('stdout carries only JSON-RPC', () => {
  test('a raw session: every stdout line parses as JSON-RPC 2.0', async () => {
    const child = spawn(process.execPath, [CLI, '--workspace', ws.dir], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, TOOLGATE_LOG_LEVEL: 'debug' } });
    let stdout = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.resume();
    const send = (m: unknown) => child.stdin.write(JSON.stringify(m) + '\n');
    const waitFor = async (id: number) => {
      for (let i = 0; i < 400 && !stdout.split('\n').some((l) => l.includes(`"id":${id}`)); i++) await new Promise((r) => setTimeout(r, 25));
    };
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } });
    await waitFor(1);
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'read_file', arguments: { path: 'a.txt' } } });
    send({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'read_file', arguments: { path: '../../etc/passwd' } } });
    send({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'display', arguments: { content: 'shown', level: 'warning' } } });
    send({ jsonrpc: '2.0', id: 6, method: 'no/such/method' });
    // Answers come in any order (a bad method is answered at once): wait for every one.
    for (const id of [2, 3, 4, 5, 6]) await waitFor(id);
    child.stdin.end();
    await new Promise((r) => child.once('exit', r));
    const lines = stdout.split('\n').filter((l) => l.length > 0);
    assert.ok(lines.length >= 6);
    for (const l of lines) {
      const m = JSON.parse(l);
      assert.equal(m.jsonrpc, '2.0', l);
      assert.ok('id' in m || 'method' in m, l);
    }
    const ids = lines.map((l) => JSON.parse(l).id).filter((x) => x !== undefined);
    for (const id of [1, 2, 3, 4, 5, 6]) assert.ok(ids.includes(id), `no answer to ${id}`);
  });
});

describe('workspace from roots', () => {
  test('no --workspace and a client without roots: calls fail with a clear error', async () => {
    const { dir, cleanup } = tempDir('tg-noroots-');
    const s = await connectStdio(['--state-dir', path.join(dir, 'state')]);
    try {
      const r = await s.client.callTool({ name: 'read_file', arguments: { path: 'a.txt' } });
      const env = r.structuredContent as Record<string, any>;
      assert.equal(env.ok, false);
      assert.match(env.error.message, /workspace/);
      assert.match(env.error.message, /--workspace|roots/);
      const abs = await s.client.callTool({ name: 'read_file', arguments: { path: '/etc/hostname' } });
      assert.equal((abs.structuredContent as Record<string, any>).ok, false, 'no workspace must not mean "/"');
    } finally {
      await s.close();
      cleanup();
    }
  });

  test('client roots narrow the ceiling: outside the client root but inside the ceiling is refused', async () => {
    // The roots/list handler must be in place before connect: the server asks right after initialized.
    const { Client: C } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const c = new C({ name: 'roots-client', version: '1' }, { capabilities: { roots: { listChanged: true } } });
    c.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: pathToFileURL(path.join(ws.dir, 'sub')).href }] }));
    const tr = new StdioClientTransport({ command: process.execPath, args: [CLI, '--workspace', ws.dir], stderr: 'pipe', env: { ...(process.env as Record<string, string>), TOOLGATE_LOG_LEVEL: 'warn' } });
    await c.connect(tr);
    try {
      const inside = (await c.callTool({ name: 'read_file', arguments: { path: 'b.txt' } })).structuredContent as Record<string, any>;
      assert.equal(inside.ok, true, JSON.stringify(inside.error));
      const outsideClient = (await c.callTool({ name: 'read_file', arguments: { path: path.join(ws.dir, 'a.txt') } })).structuredContent as Record<string, any>;
      assert.equal(outsideClient.ok, false, 'a path outside the client root was read');
      assert.equal(outsideClient.error.code, 'PathTraversalBlocked');
      const up = (await c.callTool({ name: 'read_file', arguments: { path: '../a.txt' } })).structuredContent as Record<string, any>;
      assert.equal(up.ok, false);
    } finally {
      await c.close();
    }
  });

  test('client roots cannot widen the ceiling', async () => {
    const { Client: C } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const c = new C({ name: 'roots-client', version: '1' }, { capabilities: { roots: {} } });
    c.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///' }, { uri: pathToFileURL(path.dirname(ws.dir)).href }] }));
    const tr = new StdioClientTransport({ command: process.execPath, args: [CLI, '--workspace', path.join(ws.dir, 'sub')], stderr: 'pipe', env: { ...(process.env as Record<string, string>), TOOLGATE_LOG_LEVEL: 'warn' } });
    await c.connect(tr);
    try {
      const r = (await c.callTool({ name: 'read_file', arguments: { path: path.join(ws.dir, 'a.txt') } })).structuredContent as Record<string, any>;
      assert.equal(r.ok, false, 'a client root widened the ceiling');
      const inside = (await c.callTool({ name: 'read_file', arguments: { path: 'b.txt' } })).structuredContent as Record<string, any>;
      assert.equal(inside.ok, true, JSON.stringify(inside.error));
    } finally {
      await c.close();
    }
  });

});
