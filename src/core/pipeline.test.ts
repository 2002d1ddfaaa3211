// The pipeline in-process (Harness): every stage returns an envelope, and every call is audited.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { z } from 'zod';
import pino from 'pino';
import { defineTool } from './define-tool.js';
import { withDeadline } from './deadline.js';
import { ToolError, fromSystemError, isToolError } from './errors.js';
import { formatZodError, shellQuote, shortArgs } from './format.js';
import { newId } from './ids.js';
import { limitText, spillTo, storageRef } from './output.js';
import { runCall } from './pipeline.js';
import { Runtime } from './runtime.js';
import { Session } from './session.js';
import { SessionRoots } from '../server/session-roots.js';
import { defaultPolicy } from '../policy/load.js';
import { Harness, policyFromYaml, tempDir } from '../testing/helpers.js';

function auditLines(dir: string): Array<Record<string, any>> {
  return readFileSync(path.join(dir, '.toolgate', 'audit.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

describe('pipeline (Harness)', () => {
  test('ToolNotFound, InvalidArguments and hidden tools are envelopes, each audited', async () => {
    const { dir, cleanup } = tempDir();
    writeFileSync(path.join(dir, 'a.txt'), 'x\n');
    const h = new Harness([dir], { policy: policyFromYaml('profile: readonly') });
    const notFound = await h.call('nope', {});
    assert.equal(notFound.error?.code, 'ToolNotFound');
    const invalid = await h.call('display', { content: 1 });
    assert.equal(invalid.error?.code, 'InvalidArguments');
    const hidden = await h.call('write_file', { path: 'a.txt', content: 'y' });
    assert.ok(hidden.error?.code === 'ToolNotAllowed' || hidden.error?.code === 'ToolNotFound', hidden.error?.code);
    assert.equal(readFileSync(path.join(dir, 'a.txt'), 'utf8'), 'x\n');
    h.close();
    const lines = auditLines(dir);
    assert.equal(lines.length, 3);
    assert.deepEqual(lines.map((l) => l.ok), [false, false, false]);
    cleanup();
  });

  test('a tool-only deny rule refuses the call even by an alias or another case', async () => {
    const { dir, cleanup } = tempDir();
    writeFileSync(path.join(dir, 'a.txt'), 'x\n');
    const h = new Harness([dir], { policy: policyFromYaml('rules:\n  - {tool: read_file, decision: deny}') });
    for (const name of ['read_file', 'Read_File', 'read', 'READ-FILE']) {
      const env = await h.call(name, { path: 'a.txt' });
      assert.equal(env.ok, false, name);
      assert.ok(env.error?.code === 'ToolNotAllowed' || env.error?.code === 'ToolNotFound', `${name}: ${env.error?.code}`);
    }
    h.close();
    cleanup();
  });

  test('a path rule deny in the policy refuses the call', async () => {
    const { dir, cleanup } = tempDir();
    writeFileSync(path.join(dir, 'private.txt'), 'x\n');
    const h = new Harness([dir], { policy: policyFromYaml('rules:\n  - {tool: "*", path: "private.txt", decision: deny}') });
    const env = await h.call('read_file', { path: 'private.txt' });
    assert.equal(env.error?.code, 'ToolNotAllowed');
    h.close();
    cleanup();
  });

  test('secrets in arguments are redacted in the envelope and the audit', async () => {
    const { dir, cleanup } = tempDir();
    const h = new Harness([dir]);
    const token = 'ghp_' + 'abcdefghijklmnopqrstuvwxyz0123456789';
    const env = await h.call('display', { content: `token ${token}` });
    assert.ok(!JSON.stringify(env).includes(token));
    h.close();
    assert.ok(!readFileSync(path.join(dir, '.toolgate', 'audit.jsonl'), 'utf8').includes(token));
    cleanup();
  });

  test('a tool whose result breaks its output schema gives Internal, not bad data', async () => {
    const { dir, cleanup } = tempDir();
    const liar = defineTool({
      name: 'liar', version: '1.0.0', title: 'Liar', description: 'Returns data that does not match its schema. Example: liar {}',
      input: z.strictObject({}), output: z.object({ n: z.number() }),
      risk: 'low', permissions: [], side_effects: 'none',
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      plan: () => ({ targets: [], summary: 'lie' }),
      execute: async () => ({ data: { n: 'not a number' } as never, text: 'lied' }),
    });
    const rt = new Runtime({ tools: [liar], policy: defaultPolicy(), log: pino({ level: 'silent' }), replay: { command: [], flags: [] } });
    const { envelope } = await runCall(rt, new SessionRoots(rt, [dir], new Session()), 'liar', {}, { signal: new AbortController().signal });
    assert.equal(envelope.ok, false);
    assert.equal(envelope.error?.code, 'Internal');
    assert.equal(envelope.data, null);
    rt.close();
    cleanup();
  });

  test('a tool that throws a plain Error gives Internal with the tool named', async () => {
    const { dir, cleanup } = tempDir();
    const boom = defineTool({
      name: 'boom', version: '1.0.0', title: 'Boom', description: 'Throws. Example: boom {}',
      input: z.strictObject({}), output: z.object({}),
      risk: 'low', permissions: [], side_effects: 'none',
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      plan: () => ({ targets: [], summary: 'boom' }),
      execute: async () => { throw new Error('kaput'); },
    });
    const rt = new Runtime({ tools: [boom], policy: defaultPolicy(), log: pino({ level: 'silent' }), replay: { command: [], flags: [] } });
    const { envelope } = await runCall(rt, new SessionRoots(rt, [dir], new Session()), 'boom', {}, { signal: new AbortController().signal });
    assert.equal(envelope.error?.code, 'Internal');
    assert.match(envelope.error!.message, /boom/);
    rt.close();
    cleanup();
  });

  test('two tools with one name are refused at start', () => {
    const mk = () => defineTool({
      name: 'twin', version: '1.0.0', title: 'T', description: 'x', input: z.strictObject({}), output: z.object({}),
      risk: 'low', permissions: [], side_effects: 'none',
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      plan: () => ({ targets: [], summary: '' }), execute: async () => ({ data: {}, text: '' }),
    });
    assert.throws(() => new Runtime({ tools: [mk(), mk()], policy: defaultPolicy(), log: pino({ level: 'silent' }), replay: { command: [], flags: [] } }), /duplicate/);
  });

  test('defineTool refuses a name that is not snake_case', () => {
    assert.throws(() => defineTool({
      name: 'Bad-Name', version: '1.0.0', title: 'T', description: 'x', input: z.strictObject({}), output: z.object({}),
      risk: 'low', permissions: [], side_effects: 'none',
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      plan: () => ({ targets: [], summary: '' }), execute: async () => ({ data: {}, text: '' }),
    }));
  });
});

describe('withDeadline', () => {
  test('a call past its time limit is Timeout, even when the work ignores the signal', async () => {
    await assert.rejects(withDeadline(new AbortController().signal, 20, () => new Promise(() => {})), (e: unknown) => isToolError(e) && e.code === 'Timeout');
  });
  test('a cancelled call is Cancelled', async () => {
    const ctrl = new AbortController();
    const p = withDeadline(ctrl.signal, 60_000, () => new Promise(() => {}));
    ctrl.abort();
    await assert.rejects(p, (e: unknown) => isToolError(e) && e.code === 'Cancelled');
  });
  test('an already aborted signal never starts the work', async () => {
    const ctrl = new AbortController();
    ctrl.abort();
    let started = false;
    await assert.rejects(withDeadline(ctrl.signal, 1000, async () => { started = true; }), (e: unknown) => isToolError(e) && e.code === 'Cancelled');
    assert.equal(started, false);
  });
  test('the work sees its signal abort on timeout', async () => {
    let seen: AbortSignal | undefined;
    await assert.rejects(withDeadline(new AbortController().signal, 10, (s) => { seen = s; return new Promise(() => {}); }));
    assert.equal(seen?.aborted, true);
  });
  test('a result in time is returned', async () => {
    assert.equal(await withDeadline(new AbortController().signal, 1000, async () => 42), 42);
  });
});

describe('output limits', () => {
  const limits = { output_lines: 10, output_bytes: 1000 };
  test('under the limits nothing is cut', () => {
    const r = limitText('a\nb\n', limits);
    assert.deepEqual(r, { text: 'a\nb\n', truncated: false, total_lines: 2, total_bytes: 4 });
  });
  test('head keeps the first lines', () => {
    const text = Array.from({ length: 50 }, (_, i) => `line ${i}`).join('\n');
    const r = limitText(text, limits);
    assert.equal(r.truncated, true);
    assert.equal(r.text.split('\n').filter(Boolean).length, 10);
    assert.ok(r.text.startsWith('line 0'));
    assert.equal(r.total_lines, 50);
  });
  test('head_tail keeps the start and the end', () => {
    const text = Array.from({ length: 50 }, (_, i) => `line ${i}`).join('\n');
    const r = limitText(text, limits, 'head_tail');
    assert.ok(r.text.includes('line 0'));
    assert.ok(r.text.includes('line 49'));
    assert.ok(!r.text.includes('line 25'));
  });
  test('the byte limit holds for one huge line, without splitting a character', () => {
    const r = limitText('é'.repeat(5000), limits);
    assert.ok(Buffer.byteLength(r.text) <= 1000);
    assert.ok(!r.text.includes('\uFFFD'));
  });
  test('spill writes the full output and names it workspace-relative', async () => {
    const { dir, cleanup } = tempDir();
    const ref = await spillTo(path.join(dir, '.toolgate'), 'r_1', 'tc_1', 'full output', 'txt', dir);
    assert.equal(ref.storage_ref, '.toolgate/runs/r_1/observations/tc_1.txt');
    assert.equal(readFileSync(path.join(dir, ref.storage_ref), 'utf8'), 'full output');
    assert.match(ref.sha256, /^[0-9a-f]{64}$/);
    cleanup();
  });
  test('storageRef is absolute outside the root, and not fooled by a prefix sibling', () => {
    assert.equal(storageRef('/state/x.txt', '/ws'), '/state/x.txt');
    assert.equal(storageRef('/ws-evil/x.txt', '/ws'), '/ws-evil/x.txt');
  });
});

describe('errors, format, ids', () => {
  const rows: Array<[string, string]> = [['ENOENT', 'NotFound'], ['EEXIST', 'AlreadyExists'], ['EISDIR', 'InvalidArguments'], ['ELOOP', 'PathTraversalBlocked'], ['EACCES', 'IOError'], ['EIO', 'IOError']];
  for (const [sys, code] of rows) {
    test(`${sys} maps to ${code}`, () => {
      const e = Object.assign(new Error(sys), { code: sys });
      assert.equal(fromSystemError(e, 'a.txt').code, code);
    });
  }
  test('a ToolError passes through fromSystemError unchanged', () => {
    const e = new ToolError('StaleRead', 'x');
    assert.equal(fromSystemError(e, 'a'), e);
  });
  test('unknown keys are named in the message', () => {
    const r = z.strictObject({ a: z.string() }).safeParse({ a: 'x', colour: 1 });
    assert.ok(!r.success);
    assert.match(formatZodError(r.error), /"colour"/);
  });
  test('shellQuote survives quotes and metacharacters', () => {
    assert.equal(shellQuote('plain'), 'plain');
    assert.equal(shellQuote(`it's; rm -rf /`), `'it'\\''s; rm -rf /'`);
  });
  test('shortArgs cuts long strings but keeps short ones exact', () => {
    assert.equal(shortArgs('abc'), 'abc');
    assert.match(shortArgs('x'.repeat(1000)) as string, /\(1000 chars\)$/);
  });
  test('ids are prefixed, unique and sortable by time', () => {
    const a = newId('tc');
    const b = newId('tc');
    assert.match(a, /^tc_[0-9A-Z]{26}$/);
    assert.notEqual(a, b);
  });
});
