// Review (attacker) of grep's ripgrep engine, count mode. rg prints `path\0count\n` per file
// (--count --null --with-filename) and the output was split on '\n'. A file name may hold a
// newline (never a NUL or a slash): a file `sub/x\nREADME.md` splits into "sub/x" (no NUL: dropped)
// and "README.md\0<count>" — its count reported for README.md, a different file. The deny filter
// and the hard-link check then judge README.md, not the file rg read; in a quiet folder the count
// is not re-checked. So the count of a file in a denied folder, or of a hard link to a file
// outside the workspace, shows as README.md's (and, re-checked, README.md is kept exactly when
// the counts agree: an oracle on the outside file's content either way).
import assert from 'node:assert/strict';
import { linkSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';
import { grep } from '../../src/tools/grep/grep-fixture.js';
import { locateRg } from '../../src/tools/grep/rg.js';
import { RACY_MS } from '../../src/tools/walk/link-cache.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const skip = process.platform !== 'linux' ? 'names with newlines and quiet folders: Linux' : false;

async function setup(t: { after: (f: () => void) => void }, yaml = 'rules:\n  - tool: "*"\n    decision: allow\n') {
  const tmp = tempDir('tg-review-qcount-');
  const ws = path.join(tmp.dir, 'ws');
  const out = path.join(tmp.dir, 'outside');
  mkdirSync(path.join(ws, 'sub'), { recursive: true });
  mkdirSync(path.join(ws, 'private'), { recursive: true });
  mkdirSync(out);
  writeFileSync(path.join(ws, 'README.md'), 'needle\n');
  // Outside: a secret whose pattern counts the attacker wants to learn.
  writeFileSync(path.join(out, 'secret.txt'), 'needle A\nneedle B\nneedle C\n');
  // Planted ahead of the search (so every folder is quiet by the time rg runs):
  linkSync(path.join(out, 'secret.txt'), path.join(ws, 'sub', 'x\nREADME.md'));
  writeFileSync(path.join(ws, 'private', 'y\nREADME.md'), 'needle\n'.repeat(5));
  await sleep(RACY_MS + 200);
  const h = new Harness([ws], { policy: policyFromYaml(yaml) });
  t.after(() => { h.close(); tmp.cleanup(); });
  return { ws, out, h };
}

test('count mode: a name with a newline cannot lend its count to another file (hard link to outside, denied folder)', { skip }, async (t) => {
  if (!(await locateRg())) return t.skip('rg not on PATH');
  const { h } = await setup(t, 'paths:\n  deny: ["private/**"]\nrules:\n  - tool: "*"\n    decision: allow\n');
  const r = await grep(h, 'rg', { pattern: 'needle', output_mode: 'count' });
  assert.equal(r.data.engine, 'ripgrep');
  const counts = r.data.counts ?? [];
  // README.md holds one match; nothing else in the workspace may be listed under its name.
  assert.deepEqual(counts.filter((c) => c.file === 'README.md'), [{ file: 'README.md', count: 1 }], JSON.stringify(counts));
  for (const c of counts) assert.ok(!c.file.startsWith('private'), `denied file listed: ${JSON.stringify(c)}`);
  assert.ok(!counts.some((c) => c.count === 3 || c.count === 5), `a count of the outside or denied file leaked: ${JSON.stringify(counts)}`);
});

test('count mode: the oracle — README.md is listed (or not) independently of what the outside file holds', { skip }, async (t) => {
  if (!(await locateRg())) return t.skip('rg not on PATH');
  const { h, out } = await setup(t);
  const ask = async () => JSON.stringify((await grep(h, 'rg', { pattern: 'needle [AZ]', output_mode: 'count' })).data.counts ?? []);
  const before = await ask();
  // The outside file changes (content only: no folder in the workspace moves).
  writeFileSync(path.join(out, 'secret.txt'), 'needle Q\nneedle B\nneedle C\n');
  const after = await ask();
  assert.equal(after, before, 'the answer tells whether the outside file holds "needle A" or "needle Z"');
});
