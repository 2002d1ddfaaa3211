import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newId } from './ids.js';

test('newId: 16 random characters, every one of the 32 symbols at every position, no repeats', () => {
  const seen = new Set<string>();
  const perPos = Array.from({ length: 16 }, () => new Set<string>());
  for (let i = 0; i < 20_000; i++) {
    const id = newId('tc');
    assert.match(id, /^tc_[0-9A-HJKMNP-TV-Z]{26}$/);
    seen.add(id);
    const rand = id.slice(13);
    for (let p = 0; p < 16; p++) perPos[p]!.add(rand[p]!);
  }
  assert.equal(seen.size, 20_000);
  // A fixed digit (a UUID's version or variant) would show as a position with 1–4 symbols.
  for (let p = 0; p < 16; p++) assert.equal(perPos[p]!.size, 32, `position ${p}`);
});

test('newId: the time part sorts by creation time', async () => {
  const a = newId('tr');
  await new Promise((r) => setTimeout(r, 5));
  const b = newId('tr');
  assert.ok(a.slice(3, 13) < b.slice(3, 13), `${a} < ${b}`);
});
