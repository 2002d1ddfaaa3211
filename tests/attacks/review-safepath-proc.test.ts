// Review 28 (93e3ce1): per-process PATH entries that safePath kept. The per-process test is a
// regex on the entry and on each link target as written, so a link whose target names /proc/self
// in another spelling, a link to /proc itself, and pids that are the command's own in bwrap's
// pid namespace all pass it; bash, run as a command (cwd in the workspace), then runs a program
// planted in the workspace by its bare name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';
import { bashRunsPlanted, keepsEntry } from '../../src/testing/path-oracles.js';
import { detectBwrap } from '../../src/exec/sandbox.js';

function lab(t: { after: (f: () => void) => void }) {
  const { dir, cleanup } = tempDir('tg-rv28-');
  t.after(cleanup);
  const real = realpathSync(dir);
  const ws = `${real}/ws`;
  const out = `${real}/out`;
  mkdirSync(ws); mkdirSync(out);
  return { ws, out };
}
const keeps = keepsEntry;

for (const [name, target] of [
  ['//proc/self/cwd', '//proc/self/cwd'],
  ['/proc/./self/cwd', '/proc/./self/cwd'],
  ['/proc//self/cwd', '/proc//self/cwd'],
  ['a relative target that climbs to /proc/self/cwd', 'REL'],
] as const) {
  test(`a link to ${name}, in a PATH entry: the command's own cwd; safePath drops it`, { skip: process.platform !== 'linux' }, (t) => {
    const { ws, out } = lab(t);
    const tgt = target === 'REL' ? `${'../'.repeat(out.split('/').length)}proc/self/cwd` : target;
    symlinkSync(tgt, `${out}/me`);
    const entry = `${out}/me/tools`;
    assert.equal(bashRunsPlanted(entry, `${ws}/tools`, ws), true, 'oracle: bash in the workspace runs the planted program');
    assert.equal(keeps(entry, ws), false, `safePath kept ${entry} (-> ${tgt})`);
  });
}

test('a link to /proc, then self/cwd in the entry: safePath drops it', { skip: process.platform !== 'linux' }, (t) => {
  const { ws, out } = lab(t);
  symlinkSync('/proc', `${out}/p`);
  const entry = `${out}/p/self/cwd/tools`;
  assert.equal(bashRunsPlanted(entry, `${ws}/tools`, ws), true, 'oracle');
  assert.equal(keeps(entry, ws), false, `safePath kept ${entry}`);
});

test('a link to /proc/self/cwd where the rest exists in the server\'s cwd: safePath drops it', { skip: process.platform !== 'linux' }, (t) => {
  const { ws, out } = lab(t);
  const { dir: srv, cleanup } = tempDir('tg-rv28-srv-');
  t.after(cleanup);
  mkdirSync(`${srv}/tools`);
  const before = process.cwd();
  process.chdir(srv); // the server's cwd has a `tools` folder (a home has bin, .local/bin…)
  t.after(() => process.chdir(before));
  symlinkSync('/proc/self/cwd', `${out}/me`);
  const entry = `${out}/me/tools`;
  assert.equal(bashRunsPlanted(entry, `${ws}/tools`, ws), true, 'oracle');
  assert.equal(keeps(entry, ws), false, `safePath kept ${entry}`);
});

test('bwrap: /proc/1/cwd and /proc/2/cwd are the sandbox\'s own processes (cwd: the workspace); a planted ls runs', { skip: process.platform !== 'linux' }, async (t) => {
  if (!(await detectBwrap())) { t.skip('no usable bubblewrap'); return; }
  const { ws } = lab(t);
  const saved = process.env.PATH;
  t.after(() => { process.env.PATH = saved; });
  const h = new Harness([ws], { policy: policyFromYaml('sandbox: { backend: bwrap }\nrules:\n  - tool: run_command\n    decision: allow\n') });
  t.after(() => h.close());
  const seen: string[] = [];
  for (const entry of ['/proc/1/cwd/bin', '/proc/2/cwd/bin']) {
    process.env.PATH = `${entry}:${saved}`;
    const env = await h.call('run_command', { command: 'mkdir -p bin && printf "#!/bin/sh\\necho PLANTED\\n" > bin/ls && chmod +x bin/ls && ls' });
    // The command's output only: its text (in the envelope's args) holds the word too.
    const text = String((env.data as { output?: string } | null)?.output ?? '');
    rmSync(`${ws}/bin`, { recursive: true, force: true });
    if (/PLANTED/.test(text)) seen.push(entry);
  }
  assert.deepEqual(seen, [], 'entries through which the command ran the ls it planted in the workspace');
});
