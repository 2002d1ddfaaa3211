// Review (attacker): names that are not UTF-8. rg reports such a path as raw bytes (JSON "bytes",
// or the bytes themselves with --null), and grep decoded it lossily: "x\xff.txt" became
// "x\uFFFD.txt" — the name of ANOTHER file, whose UTF-8 bytes are EF BF BD. verifyHits and the
// hard-link check then judge that other file (one link, inside), and in a quiet folder rg's
// reading is not re-checked: the lines rg read in "x\xff.txt", a hard link to a file outside the
// workspace, were shown under the other file's name with paths.allow_hardlinks off.
import assert from 'node:assert/strict';
import { linkSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Harness, tempDir } from '../../src/testing/helpers.js';
import { grep } from '../../src/tools/grep/grep-fixture.js';
import { locateRg } from '../../src/tools/grep/rg.js';
import { RACY_MS } from '../../src/tools/walk/link-cache.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const skip = process.platform !== 'linux' ? 'byte names and quiet folders: Linux' : false;

test('a name that is not UTF-8 cannot pass for another file: no outside content through a hard link', { skip }, async (t) => {
  if (!(await locateRg())) return t.skip('rg not on PATH');
  const tmp = tempDir('tg-review-qbytes-');
  const ws = path.join(tmp.dir, 'ws');
  const out = path.join(tmp.dir, 'outside');
  mkdirSync(ws);
  mkdirSync(out);
  writeFileSync(path.join(out, 'secret.txt'), 'needle SECRET-LINE\n');
  const wsB = Buffer.from(ws);
  linkSync(Buffer.from(path.join(out, 'secret.txt')), Buffer.concat([wsB, Buffer.from('/x\xff.txt', 'latin1')]));
  writeFileSync(Buffer.concat([wsB, Buffer.from('/x\xef\xbf\xbd.txt', 'latin1')]), 'nothing here\n');
  writeFileSync(path.join(ws, 'ünï ✓.txt'), 'other\n');
  await sleep(RACY_MS + 200);
  const h = new Harness([ws]);
  t.after(() => { h.close(); tmp.cleanup(); });
  for (const output_mode of ['content', 'files_with_matches', 'count'] as const) {
    const r = await grep(h, 'rg', { pattern: 'needle', output_mode });
    assert.equal(r.data.engine, 'ripgrep');
    assert.equal(r.data.total_files, 0, `${output_mode}: ${JSON.stringify(r.data)}`);
    assert.ok(!JSON.stringify(r).includes('SECRET-LINE'), `${output_mode}: the outside line is shown`);
    // Control: a UTF-8 name that is not ASCII is still found, under its name.
    const u = await grep(h, 'rg', { pattern: 'other', output_mode });
    assert.equal(JSON.stringify(u.data).includes('ünï ✓.txt') && u.data.total_files, 1, `${output_mode}: ${JSON.stringify(u.data)}`);
  }
});
