import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Harness, tempDir } from '../../testing/helpers.js';

test('display forwards the message and returns an ok envelope', async () => {
  const { dir, cleanup } = tempDir();
  const h = new Harness([dir]);
  const seen: unknown[] = [];
  const env = await h.call('display', { content: 'half way', level: 'success' }, { notify: async (level, data) => { seen.push({ level, data }); } });
  assert.equal(env.ok, true);
  assert.deepEqual(seen, [{ level: 'notice', data: { level: 'success', title: undefined, content: 'half way' } }]);
  h.close();
  const audit = readFileSync(`${dir}/.toolgate/audit.jsonl`, 'utf8').trim().split('\n');
  assert.equal(audit.length, 1);
  assert.equal(JSON.parse(audit[0]!).tool, 'display');
  cleanup();
});

test('display refuses unknown keys with InvalidArguments naming them', async () => {
  const { dir, cleanup } = tempDir();
  const h = new Harness([dir]);
  const env = await h.call('display', { content: 'x', colour: 'red' });
  assert.equal(env.ok, false);
  assert.equal(env.error?.code, 'InvalidArguments');
  assert.match(env.error!.message, /"colour"/);
  h.close();
  cleanup();
});
