// glob's pattern and list_dir's ignore globs are matched with picomatch on the server's one
// thread, in every engine (ripgrep's list is filtered by the same matcher). Its regexes
// backtrack: `*a*a*a*a*a*b` as glob's pattern held the thread 9 s against one 100-character name
// (helper-35's finding for grep's glob argument, open for these two until now). Both are refused
// at once, with how to narrow, by the limit grep's glob argument has (glob-cost.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Harness, tempDir, writeIn } from '../../src/testing/helpers.js';
import { longestStall } from '../../src/testing/stall.js';

const LONG_NAME = `${'a'.repeat(100)}.txt`;
const STALL_MS = 1000;

function setup(t: { after: (f: () => void) => void }) {
  const d = tempDir('tg-globcost-');
  t.after(d.cleanup);
  writeIn(d.dir, LONG_NAME, 'x\n');
  writeIn(d.dir, 'b.txt', 'x\n');
  writeIn(d.dir, `${'d/'.repeat(200)}c.txt`, 'x\n');
  const h = new Harness([d.dir]);
  t.after(() => h.close());
  return h;
}

type Result = { ok: boolean; error?: { code: string; message: string }; text: string; data: { files?: string[]; entries?: Array<{ name: string }> } };

test('glob: a pattern with many wildcards in one segment, or three "**", is refused at once (InvalidArguments), not matched for seconds', { timeout: 120_000 }, async (t) => {
  const h = setup(t);
  for (const engine of ['', 'off']) {
    const saved = process.env.TOOLGATE_RG;
    process.env.TOOLGATE_RG = engine;
    try {
      for (const pattern of ['*a*a*a*a*a*b', '**/*a*a*a*a*a*b', '{a,b}{c,d}*@(e|f)*', '**/d/**/d/**/c.txt']) {
        const { value, stall } = await longestStall(() => h.call('glob', { pattern }));
        const r = value as unknown as Result;
        assert.ok(stall < STALL_MS, `${engine || 'rg'} ${pattern}: the event loop stalled ${stall.toFixed(0)} ms`);
        assert.equal(r.error?.code, 'InvalidArguments', `${engine || 'rg'} ${pattern}: ${r.text}`);
        assert.match(r.error!.message, /too many wildcards.*set path/);
      }
      // Controls: patterns as models write them still run, with the right answers.
      const three = await h.call('glob', { pattern: '*a*a.{txt,md}' }) as unknown as Result;
      assert.deepEqual(three.data.files, [LONG_NAME], three.text);
      const two = await h.call('glob', { pattern: '**/d/**/c.txt' }) as unknown as Result;
      assert.equal(two.data.files?.length, 1, two.text);
    } finally {
      if (saved === undefined) delete process.env.TOOLGATE_RG; else process.env.TOOLGATE_RG = saved;
    }
  }
});

test('list_dir: an ignore glob with many wildcards is refused at once; simple ones still leave names out', { timeout: 60_000 }, async (t) => {
  const h = setup(t);
  for (const ignore of [['*a*a*a*a*a*b'], ['*.log', '!*a*a*a*a*a*b']]) {
    const { value, stall } = await longestStall(() => h.call('list_dir', { path: '.', ignore }));
    const r = value as unknown as Result;
    assert.ok(stall < STALL_MS, `${ignore}: the event loop stalled ${stall.toFixed(0)} ms`);
    assert.equal(r.error?.code, 'InvalidArguments', `${ignore}: ${r.text}`);
  }
  const ok = await h.call('list_dir', { path: '.', ignore: ['*a*a.txt'] }) as unknown as Result;
  assert.deepEqual(ok.data.entries?.map((e) => e.name).sort(), ['b.txt', 'd'], ok.text);
});

test('grep: a costly glob is refused the same way whether the path exists or not (before the path is looked at)', async (t) => {
  const h = setup(t);
  const a = await h.call('grep', { pattern: 'x', path: 'b.txt', glob: '*a*a*a*a*a*b' }) as unknown as Result;
  const b = await h.call('grep', { pattern: 'x', path: 'missing.txt', glob: '*a*a*a*a*a*b' }) as unknown as Result;
  assert.equal(a.error?.code, 'InvalidArguments', a.text);
  assert.equal(b.error?.code, 'InvalidArguments', `a missing path answers the same: ${b.text}`);
  assert.equal(a.error?.message, b.error?.message);
});
