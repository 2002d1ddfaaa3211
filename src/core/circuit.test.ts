import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { z } from 'zod';
import { defaultPolicy } from '../policy/load.js';
import { SessionRoots } from '../server/session-roots.js';
import { tempDir } from '../testing/helpers.js';
import { CircuitBreaker, circuitFor, commandFailure } from './circuit.js';
import { defineTool } from './define-tool.js';
import type { Envelope } from './envelope.js';
import { ToolError, type ErrorCode } from './errors.js';
import { runCall } from './pipeline.js';
import { Runtime } from './runtime.js';

test('three consecutive infrastructure failures open the circuit for 300 s, then one trial call', () => {
  let now = 1_000_000;
  const c = new CircuitBreaker({ now: () => now });
  for (const code of ['IOError', 'Timeout'] as const) { c.check('t'); c.record('t', code); }
  c.check('t'); // still closed after two
  c.record('t', 'Internal');
  assert.throws(() => c.check('t'), (e: ToolError) => {
    assert.equal(e.code, 'CircuitOpen');
    assert.equal(e.details?.retry_at, new Date(1_000_000 + 300_000).toISOString());
    return true;
  });
  now += 299_999;
  assert.throws(() => c.check('t'), /paused until/);
  now += 1;
  c.check('t'); // half-open: this one runs
  c.record('t', 'IOError');
  assert.throws(() => c.check('t'), (e: ToolError) => e.code === 'CircuitOpen'); // one failure re-opens
  now += 300_000;
  c.check('t');
  c.record('t', null); // success closes it
  c.record('t', 'IOError');
  c.record('t', 'IOError');
  c.check('t');
});

test('user errors neither count nor reset; a success resets; tools are counted apart', () => {
  const c = new CircuitBreaker({ now: () => 0 });
  const user: ErrorCode[] = ['NoMatch', 'InvalidArguments', 'ExitNonZero', 'NotFound', 'ApprovalRequired', 'NetworkDenied', 'Cancelled', 'CircuitOpen'];
  c.record('t', 'IOError');
  c.record('t', 'IOError');
  for (const code of user) c.record('t', code);
  c.check('t');
  c.record('other', 'IOError');
  c.check('t');
  c.record('t', 'IOError'); // third infrastructure failure of t, user errors between did not reset
  assert.throws(() => c.check('t'), /paused/);
  c.check('other');
  const d = new CircuitBreaker({ now: () => 0 });
  d.record('t', 'IOError');
  d.record('t', 'IOError');
  d.record('t', null);
  d.record('t', 'IOError');
  d.check('t');
});

function flakyRuntime(outcomes: Array<ErrorCode | 'ok'>) {
  let calls = 0;
  const tool = defineTool({
    name: 'flaky', version: '1.0.0', title: 'Flaky', description: 'test tool',
    input: z.strictObject({}), output: z.object({ n: z.number() }),
    risk: 'low', permissions: [], side_effects: 'none',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    plan: () => ({ targets: [], summary: 'flaky' }),
    async execute() {
      const o = outcomes[calls++] ?? 'ok';
      if (o !== 'ok') throw new ToolError(o, `failed with ${o}`);
      return { data: { n: calls }, text: 'ok' };
    },
  });
  const ws = tempDir('tg-circuit-');
  const rt = new Runtime({ tools: [tool], policy: defaultPolicy(), log: pino({ level: 'silent' }), replay: { command: ['toolgate'], flags: [] } });
  const session = () => new SessionRoots(rt, [ws.dir]);
  const shared = session();
  const call = async (s = shared): Promise<Envelope> => (await runCall(rt, s, 'flaky', {}, { signal: new AbortController().signal })).envelope;
  return { rt, call, session, executed: () => calls, done: () => { rt.close(); ws.cleanup(); } };
}

test('pipeline: the fourth call after three IOErrors fails fast with CircuitOpen and retry_at, without running', async () => {
  const f = flakyRuntime(['IOError', 'Timeout', 'Internal']);
  for (let i = 0; i < 3; i++) assert.equal((await f.call()).ok, false);
  const env = await f.call();
  assert.equal(env.error?.code, 'CircuitOpen');
  const retryAt = Date.parse(String(env.error?.details?.retry_at));
  assert.ok(retryAt > Date.now() + 290_000 && retryAt <= Date.now() + 300_000, String(env.error?.details?.retry_at));
  assert.equal(f.executed(), 3);
  f.done();
});

test('pipeline: the circuit is per session — one session\'s failures never pause the tool for another', async () => {
  const f = flakyRuntime(['IOError', 'IOError', 'IOError']);
  const a = f.session();
  for (let i = 0; i < 3; i++) await f.call(a);
  assert.equal((await f.call(a)).error?.code, 'CircuitOpen');
  const b = f.session();
  const env = await f.call(b);
  assert.equal(env.ok, true, JSON.stringify(env.error));
  assert.equal((await f.call(a)).error?.code, 'CircuitOpen', 'a stays open');
  f.done();
});

test('a failure marked as the command\'s own (timeout, non-zero exit) neither counts nor resets', () => {
  const c = new CircuitBreaker();
  for (let i = 0; i < 10; i++) { c.check('run_command'); c.record('run_command', commandFailure(new ToolError('Timeout', 'command timed out'))); }
  assert.equal(c.isOpen('run_command'), false);
  c.record('run_command', new ToolError('Timeout', 'tool deadline'));
  c.record('run_command', new ToolError('Timeout', 'tool deadline'));
  c.record('run_command', commandFailure(new ToolError('ExitNonZero', 'exit 1')));
  c.record('run_command', new ToolError('IOError', 'spawn failed'));
  assert.equal(c.isOpen('run_command'), true, 'the tool\'s own failures still count across command failures');
});

test('circuitFor: one breaker per (runtime, session)', () => {
  const rt = {};
  assert.equal(circuitFor(rt, 's1'), circuitFor(rt, 's1'));
  assert.notEqual(circuitFor(rt, 's1'), circuitFor(rt, 's2'));
  assert.notEqual(circuitFor(rt, 's1'), circuitFor({}, 's1'));
});

test('pipeline: NoMatch and ExitNonZero do not open it; a success in between resets', async () => {
  const f = flakyRuntime(['NoMatch', 'ExitNonZero', 'NoMatch', 'IOError', 'IOError', 'ok', 'IOError', 'IOError', 'ok']);
  const codes: Array<string | undefined> = [];
  for (let i = 0; i < 9; i++) codes.push((await f.call()).error?.code);
  assert.deepEqual(codes, ['NoMatch', 'ExitNonZero', 'NoMatch', 'IOError', 'IOError', undefined, 'IOError', 'IOError', undefined]);
  f.done();
});
