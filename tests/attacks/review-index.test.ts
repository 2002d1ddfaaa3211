// Review of glob's index engine (helper-53): the index walked the link cache's records by path, so
// a folder on the way swapped for a link to outside while it ran brought outside folders and files
// into the walk. Their names never came back (each was re-checked through pinned folders), but they
// were counted: `stats.visited` told how many entries lay outside (300 of 300 through a folder
// above the start, up to 1,531 against 61 below it), and an ask rule would count outside names.
// Now every folder the index entered must be proven unchanged from before its walk until after it,
// by looks through the pinned start; otherwise the walker answers the call.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Envelope } from '../../src/core/envelope.js';
import { Harness, policyFromYaml, settle, startFolderSwapper, tempDir, withEngine, writeIn } from '../../src/testing/helpers.js';

process.env.TOOLGATE_GLOB_WALK_MAX = '0';
const skipOffLinux = process.platform !== 'linux' ? 'pinned folders through /proc: Linux only' : false;

type Glob = Envelope & { data: { files: string[]; engine: string; skipped_by_policy?: number }; stats: { visited?: number } };

async function race(h: Harness, args: Record<string, unknown>, ms: number) {
  let runs = 0;
  let maxVisited = 0;
  let maxSkipped = 0;
  const engines = new Set<string>();
  const outside: string[] = [];
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const r = await withEngine('index', () => h.call('glob', args)) as Glob;
    runs++;
    if (!r.ok) continue;
    engines.add(r.data.engine);
    maxVisited = Math.max(maxVisited, r.stats.visited ?? 0);
    maxSkipped = Math.max(maxSkipped, r.data.skipped_by_policy ?? 0);
    outside.push(...r.data.files.filter((f) => f.includes('OUT')));
  }
  return { runs, maxVisited, maxSkipped, engines, outside };
}

test('index: a folder ABOVE the start swapped for a link to outside never makes glob count what lies outside', { skip: skipOffLinux, timeout: 60_000 }, async (t) => {
  const d = tempDir('tg-rix-');
  t.after(d.cleanup);
  const ws = `${d.dir}/ws`;
  const out = `${d.dir}/out`;
  writeIn(ws, 'a/b/in.txt');
  for (let i = 0; i < 300; i++) writeIn(out, `b/OUT${i}.txt`);
  const h = new Harness([ws]);
  t.after(() => h.close());
  await settle([ws]);
  const calm = await withEngine('index', () => h.call('glob', { pattern: '**', path: 'a/b' })) as Glob;
  assert.equal(calm.data.engine, 'index', 'control: on a settled tree the index answers');
  assert.deepEqual(calm.data.files, ['a/b/in.txt']);
  const inside = calm.stats.visited ?? 0;
  const sw = await startFolderSwapper(`${ws}/a`, out);
  let r;
  try { r = await race(h, { pattern: '**', path: 'a/b' }, 3000); } finally { await sw.stop(); }
  assert.deepEqual(r.outside.slice(0, 3), [], 'an outside name was returned');
  assert.ok(r.maxVisited <= inside + 1, `visited reached ${r.maxVisited} (the inside tree gives ${inside}): outside entries were counted (${r.runs} calls)`);
});

test('index: a folder BELOW the start swapped for a link to outside, over and over: no outside name, count or asked entry', { skip: skipOffLinux, timeout: 60_000 }, async (t) => {
  const d = tempDir('tg-rix-');
  t.after(d.cleanup);
  const ws = `${d.dir}/ws`;
  const out = `${d.dir}/out`;
  for (let k = 0; k < 30; k++) writeIn(ws, `x/y${k}/in${k}.txt`);
  for (let k = 0; k < 30; k++) {
    for (let i = 0; i < 50; i++) writeIn(out, `y${k}/OUT${i}.txt`);
    writeIn(out, `y${k}/key.ask`);
  }
  const h = new Harness([ws], { policy: policyFromYaml('mode: ci\nrules:\n  - { tool: "*", path: "**/*.ask", decision: ask }\n  - { tool: "*", decision: allow }\n') });
  t.after(() => h.close());
  await settle([ws]);
  const calm = await withEngine('index', () => h.call('glob', { pattern: '**' })) as Glob;
  assert.equal(calm.data.engine, 'index', 'control: on a settled tree the index answers');
  assert.equal(calm.data.files.length, 30);
  assert.equal(calm.data.skipped_by_policy ?? 0, 0, 'control: nothing inside is asked');
  const inside = calm.stats.visited ?? 0;
  const sw = await startFolderSwapper(`${ws}/x`, out);
  let r;
  try { r = await race(h, { pattern: '**' }, 4000); } finally { await sw.stop(); }
  assert.deepEqual(r.outside.slice(0, 3), [], 'an outside name was returned');
  assert.ok(r.maxVisited <= inside + 1, `visited reached ${r.maxVisited} (the inside tree gives ${inside}): outside entries were counted (${r.runs} calls)`);
  assert.equal(r.maxSkipped, 0, 'an outside entry was counted as asked');
  assert.ok(r.engines.has('builtin'), `control: calls that met the swap were walked instead (${[...r.engines].join(', ')})`);
});
