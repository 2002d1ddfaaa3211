// grep: sort "mtime" (newest first) and "path", the structured fallback_reason, and long
// lines cut around the match — for both engines.
import assert from 'node:assert/strict';
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { Envelope } from '../../core/envelope.js';
import { Harness, tempDir, withEngine } from '../../testing/helpers.js';
import { locateRg } from './rg.js';
import { cutLine } from './search-text.js';
import { MAX_LINE_CHARS } from './types.js';

type Data = { files?: string[]; matches?: Array<{ file: string; line: number; text: string }>; counts?: Array<{ file: string }>; engine: string; fallback_used: boolean; fallback_reason: string | null };

async function grep(h: Harness, engine: 'rg' | 'builtin', args: Record<string, unknown>): Promise<Envelope & { data: Data }> {
  return withEngine(engine, async () => {
    const env = await h.call('grep', args);
    assert.equal(env.ok, true, JSON.stringify(env.error));
    assert.ok(h.rt.tools.get('grep')!.envelope.safeParse(env).success, 'envelope matches the output schema');
    return env as Envelope & { data: Data };
  });
}

function setup() {
  const { dir, cleanup } = tempDir('tg-grep-sort-');
  mkdirSync(path.join(dir, 'd'));
  const now = Date.now() / 1000;
  // Path order a, b, c, d/e; mtime order (newest first) c, a, d/e, b.
  const files: Array<[string, number]> = [['a.txt', now - 100], ['b.txt', now - 300], ['c.txt', now - 10], ['d/e.txt', now - 200]];
  for (const [rel, t] of files) {
    writeFileSync(path.join(dir, rel), `needle in ${rel}\n`);
    utimesSync(path.join(dir, rel), t, t);
  }
  const long = `${'x'.repeat(5000)}NEEDLE_AT_5000${'y'.repeat(5000)}`;
  writeFileSync(path.join(dir, 'min.js'), `${long}\n`);
  utimesSync(path.join(dir, 'min.js'), now - 1000, now - 1000);
  const h = new Harness([dir]);
  return { dir, h, done: () => { h.close(); cleanup(); } };
}

const rgHere = await locateRg({ ...process.env, TOOLGATE_RG: '' });

for (const engine of ['rg', 'builtin'] as const) {
  const skip = engine === 'rg' && !rgHere ? 'needs ripgrep (rg): not installed here' : false;

  test(`grep (${engine}): sort "mtime" lists the newest files first, "path" by path, in every mode`, { skip }, async () => {
    const s = setup();
    try {
      const byPath = await grep(s.h, engine, { pattern: 'needle' });
      assert.deepEqual(byPath.data.files, ['a.txt', 'b.txt', 'c.txt', 'd/e.txt']);
      const byTime = await grep(s.h, engine, { pattern: 'needle', sort: 'mtime' });
      assert.deepEqual(byTime.data.files, ['c.txt', 'a.txt', 'd/e.txt', 'b.txt']);
      const content = await grep(s.h, engine, { pattern: 'needle', sort: 'mtime', output_mode: 'content' });
      assert.deepEqual(content.data.matches!.map((m) => m.file), ['c.txt', 'a.txt', 'd/e.txt', 'b.txt']);
      const counts = await grep(s.h, engine, { pattern: 'needle', sort: 'mtime', output_mode: 'count' });
      assert.deepEqual(counts.data.counts!.map((c) => c.file), ['c.txt', 'a.txt', 'd/e.txt', 'b.txt']);
      const paged = await grep(s.h, engine, { pattern: 'needle', sort: 'mtime', head_limit: 2, offset: 1 });
      assert.deepEqual(paged.data.files, ['a.txt', 'd/e.txt'], 'paging follows the mtime order');
    } finally { s.done(); }
  });

  test(`grep (${engine}): a 10 KB line with the match at character 5,000 shows the match, cut around it with … marks`, { skip }, async () => {
    const s = setup();
    try {
      const env = await grep(s.h, engine, { pattern: 'NEEDLE_AT_\\d+', output_mode: 'content' });
      const m = env.data.matches!.find((x) => x.file === 'min.js');
      assert.ok(m, JSON.stringify(env.data.matches));
      assert.ok(m.text.includes('NEEDLE_AT_5000'), `the match is shown: ${m.text.slice(0, 80)}…`);
      assert.ok(m.text.startsWith('…x') && m.text.endsWith('y…'), 'both cut sides are marked');
      assert.ok(m.text.length <= MAX_LINE_CHARS + 2, `bounded: ${m.text.length}`);
    } finally { s.done(); }
  });
}

test('grep: fallback_reason says why the built-in engine ran, and is null with ripgrep', async (t) => {
  const s = setup();
  try {
    const off = await grep(s.h, 'builtin', { pattern: 'needle' });
    assert.equal(off.data.engine, 'builtin');
    assert.equal(off.data.fallback_used, true);
    assert.match(String(off.data.fallback_reason), /TOOLGATE_RG=off/);
    if (!rgHere) return t.skip('needs ripgrep (rg) for the ripgrep half: not installed here');
    const on = await grep(s.h, 'rg', { pattern: 'needle' });
    assert.equal(on.data.engine, 'ripgrep');
    assert.equal(on.data.fallback_reason, null);
  } finally { s.done(); }
});

test('cutLine: short lines whole; long ones around the match, at the start or the end of the line', () => {
  assert.equal(cutLine('short', 3), 'short');
  assert.equal(cutLine('abc\r'), 'abc');
  const line = 'a'.repeat(2000);
  assert.equal(cutLine(line, 0), `${'a'.repeat(MAX_LINE_CHARS)}…`);
  assert.equal(cutLine(line, 1999), `…${'a'.repeat(MAX_LINE_CHARS)}`);
  const mid = cutLine(`${'a'.repeat(1000)}M${'b'.repeat(1000)}`, 1000);
  assert.ok(mid.startsWith('…a') && mid.endsWith('b…') && mid.includes('M'));
  // A surrogate pair at the cut is kept whole.
  const emoji = cutLine('😀'.repeat(600), 400);
  assert.ok(!/^…[\udc00-\udfff]/.test(emoji) && !/[\ud800-\udbff]…$/.test(emoji), 'no half pair');
});
