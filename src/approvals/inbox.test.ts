import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Inbox, requestKey, type NewRequest } from './inbox.js';

const req = (tool = 'write_file'): NewRequest => ({
  session_id: 's', tool, risk: 'medium', args: { path: 'a' }, rule: 'r', grant: [], grant_rule: '', diff: null, summary: 'x',
});

test('an answer resolves the waiting call once; a second answer is refused as already answered', async () => {
  const ib = new Inbox(60_000);
  const e = ib.open(req(), 'write_file', { path: 'a' })!;
  assert.deepEqual(ib.answer(e.id, 'allow_once', 'cli'), { ok: true, applied: 'now' });
  assert.deepEqual(await e.answered, { id: e.id, decision: 'allow_once', source: 'cli' });
  const again = ib.answer(e.id, 'deny', 'console');
  assert.equal(again.ok, false);
  assert.equal(!again.ok && again.reason, 'answered');
  assert.deepEqual(ib.pending(), []);
});

test('unknown ids, non-decisions and look-alikes are refused', () => {
  const ib = new Inbox(60_000);
  const e = ib.open(req(), 'write_file', { path: 'a' })!;
  for (const d of ['allow', 'ALLOW_ONCE', 'allow_once ', '', null, undefined, ['allow_once'], true]) {
    const r = ib.answer(e.id, d, 'console');
    assert.equal(r.ok, false, JSON.stringify(d));
  }
  const r = ib.answer('zzzzzz', 'allow_once', 'cli');
  assert.equal(!r.ok && r.reason, 'unknown');
  assert.equal(ib.pending().length, 1, 'still waiting');
});

test('after the wait ends, an answer applies once to a retry of exactly the same call (keys in any order)', () => {
  const ib = new Inbox(60_000);
  const e = ib.open(req(), 'write_file', { path: 'a', content: 'x' })!;
  ib.expire(e.id);
  assert.equal(ib.pending()[0]!.waiting, false);
  assert.deepEqual(ib.answer(e.id, 'allow_once', 'cli'), { ok: true, applied: 'retry' });
  assert.equal(ib.takeLate('write_file', { path: 'a', content: 'y' }, 's'), undefined, 'other args');
  assert.equal(ib.takeLate('edit_file', { path: 'a', content: 'x' }, 's'), undefined, 'other tool');
  assert.equal(ib.takeLate('write_file', { content: 'x', path: 'a' }, 's')?.decision, 'allow_once');
  assert.equal(ib.takeLate('write_file', { path: 'a', content: 'x' }, 's'), undefined, 'used once');
});

test('the retry window closes: an expired request can no longer be answered, a late answer no longer used', () => {
  let now = 1_000;
  const ib = new Inbox(10_000, () => now);
  const a = ib.open(req(), 'write_file', { path: 'a' })!;
  ib.expire(a.id);
  now += 10_001;
  assert.equal(ib.answer(a.id, 'allow_once', 'cli').ok, false);
  const b = ib.open(req(), 'write_file', { path: 'b' })!;
  ib.expire(b.id);
  ib.answer(b.id, 'allow_once', 'cli');
  now += 10_001;
  assert.equal(ib.takeLate('write_file', { path: 'b' }, 's'), undefined);
});

test('a waiting request never expires by the clock; close withdraws it; listeners hear every change', () => {
  let now = 0;
  const ib = new Inbox(10, () => now);
  let changes = 0;
  ib.onChange(() => changes++);
  const e = ib.open(req(), 'write_file', { path: 'a' })!;
  now += 1_000_000;
  assert.equal(ib.pending().length, 1);
  ib.close(e.id);
  assert.equal(ib.pending().length, 0);
  assert.equal(changes, 2);
  assert.equal(requestKey('t', { a: 1, b: [1, { c: 2, d: 3 }] }), requestKey('t', { b: [1, { d: 3, c: 2 }], a: 1 }));
  assert.notEqual(requestKey('t', { a: 1 }), requestKey('t', { a: '1' }));
});
