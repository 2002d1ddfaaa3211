// Review (attacker): grep's sort: "mtime" stat'ed each hit by path (sort.ts), after the checks
// that pin rg's folder and before verifyHits. A folder swapped for a link to outside while the
// hits are sorted (and back before they are verified) makes the ORDER of the answer follow an
// outside file's mtime — or its existence (a missing file sorts last). Here the inside hit
// a/f.txt is the oldest file; an outside copy of a/ holds f.txt with a future mtime: an answer
// that lists a/f.txt first tells that the outside file exists and is newer than every hit.
import assert from 'node:assert/strict';
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Harness, startRaceLoop, tempDir } from '../../src/testing/helpers.js';
import { grep } from '../../src/tools/grep/grep-fixture.js';
import { locateRg } from '../../src/tools/grep/rg.js';

const skip = process.platform !== 'linux' ? 'the swapper and pinned folders: Linux' : false;

test('sort mtime: a folder swapped for a link to outside while hits are sorted cannot order them by the outside file', { skip }, async (t) => {
  if (!(await locateRg())) return t.skip('rg not on PATH');
  const tmp = tempDir('tg-review-qsort-');
  const ws = path.join(tmp.dir, 'ws');
  const out = path.join(tmp.dir, 'outside');
  mkdirSync(path.join(ws, 'a'), { recursive: true });
  mkdirSync(out);
  const old = new Date('2001-01-01T00:00:00Z');
  const mid = new Date('2010-01-01T00:00:00Z');
  const future = new Date('2090-01-01T00:00:00Z');
  writeFileSync(path.join(ws, 'a', 'f.txt'), 'needle\n');
  utimesSync(path.join(ws, 'a', 'f.txt'), old, old);
  for (let i = 0; i < 40; i++) {
    writeFileSync(path.join(ws, `b${i}.txt`), 'needle\n');
    utimesSync(path.join(ws, `b${i}.txt`), mid, mid);
  }
  writeFileSync(path.join(out, 'f.txt'), 'needle\n');
  utimesSync(path.join(out, 'f.txt'), future, future);
  const h = new Harness([ws]);
  t.after(() => { h.close(); tmp.cleanup(); });
  const control = await grep(h, 'rg', { pattern: 'needle', sort: 'mtime', head_limit: 100 });
  assert.equal(control.data.files?.at(-1), 'a/f.txt', `control: ${JSON.stringify(control.data.files)}`);
  let leaked = 0;
  let shown = 0;
  // The swapper dwells a little in each state (a link for ~1 ms, the real folder for ~3 ms).
  const nap = 'Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);';
  const swapper = await startRaceLoop(`let ms = 1; fs.renameSync(real, real + '.d'); fs.symlinkSync(out, real); ${nap} fs.unlinkSync(real); fs.renameSync(real + '.d', real); ms = 3; ${nap}`, { real: path.join(ws, 'a'), out });
  let runs = 0;
  try {
    for (const end = Date.now() + 8000; Date.now() < end; runs++) {
      const r = await grep(h, 'rg', { pattern: 'needle', sort: 'mtime', head_limit: 100 });
      const files = r.data.files ?? [];
      if (files.includes('a/f.txt')) shown++;
      if (files[0] === 'a/f.txt') leaked++;
    }
  } finally { await swapper.stop(); }
  assert.ok(shown > 0, `a/f.txt never shown in ${runs} runs: the race was not exercised`);
  assert.equal(leaked, 0, `${leaked} of ${runs} answers (${shown} with a/f.txt) ordered a/f.txt by the outside file's mtime`);
});
