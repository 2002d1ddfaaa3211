// Review 28 (93e3ce1, the gap is older): an entry whose walk passes through a workspace root
// and leaves it again (a link in the workspace, a folder in the workspace followed by `..`, a
// missing folder in the workspace followed by `..`) was kept: where the kernel finds programs
// *now* is outside the root, but what the walk read inside the root is the command's to change,
// and one command line can change it and then run a program by name. bash is the oracle.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import { safePath } from '../../src/exec/env.js';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';
import { detectBwrap } from '../../src/exec/sandbox.js';

function lab(t: { after: (f: () => void) => void }) {
  const { dir, cleanup } = tempDir('tg-rv28w-');
  t.after(cleanup);
  const D = realpathSync(dir);
  mkdirSync(`${D}/ws/sub`, { recursive: true });
  mkdirSync(`${D}/out/tools`, { recursive: true });
  return { D, ws: `${D}/ws`, out: `${D}/out` };
}
const keeps = (entry: string, ws: string) => safePath(`${entry}:/usr/bin`, [ws]).split(':').includes(entry);
const PLANT = (dir: string) => `mkdir -p ${dir} && printf '#!/bin/sh\\necho PLANTED\\n' > ${dir}/tgplanted && chmod +x ${dir}/tgplanted`;
/** What one command line (cwd: the workspace) can do: change the workspace, then run a program by name. */
const bashLine = (entry: string, ws: string, line: string) =>
  spawnSync('/bin/bash', ['--norc', '--noprofile', '-c', `${line} && tgplanted`], { env: { PATH: `${entry}:/usr/bin:/bin` }, cwd: ws, encoding: 'utf8' }).stdout;

test('a link in the workspace that leads out (entry reaches the workspace through a link): kept, and re-pointed by the command', (t) => {
  const { ws, out } = lab(t);
  symlinkSync(ws, `${out}/proj`); // e.g. ~/current -> the project
  symlinkSync(`${out}/tools`, `${ws}/tools`); // the project's tools folder is a link to a shared one
  const entry = `${out}/proj/tools`;
  const kept = keeps(entry, ws); // before the command changes the workspace
  assert.equal(bashLine(entry, ws, `rm tools && ${PLANT('tools')}`), 'PLANTED\n', 'oracle');
  assert.equal(kept, false, `safePath kept ${entry}`);
});

test('a folder in the workspace followed by `..` in the entry: kept, and replaced by a link by the command', (t) => {
  const { D, ws } = lab(t);
  const entry = `${ws}/sub/../../out/tools`; // path.resolve: D/out/tools; the kernel now: the same
  const kept = keeps(entry, ws); // before the command changes the workspace
  assert.equal(bashLine(entry, ws, `rm -r sub && mkdir -p a/b/c && ln -s a/b/c sub && ${PLANT('a/out/tools')}`), 'PLANTED\n', 'oracle');
  assert.equal(kept, false, `safePath kept ${entry.split(D).join('D')}`);
});

test('a missing folder in the workspace followed by `..`: "made as a plain folder" is not what the command makes', (t) => {
  const { D, ws, out } = lab(t);
  symlinkSync(ws, `${out}/proj`);
  const entry = `${out}/proj/new/../../out/tools`; // planned: ws/new/../.. = D, so D/out/tools
  const kept = keeps(entry, ws); // before the command changes the workspace
  assert.equal(bashLine(entry, ws, `mkdir -p a/b/c && ln -s a/b/c new && ${PLANT('a/out/tools')}`), 'PLANTED\n', 'oracle');
  assert.equal(kept, false, `safePath kept ${entry.split(D).join('D')}`);
});

for (const backend of ['none', 'bwrap']) test(`end to end (run_command, sandbox ${backend}): the command re-points the link and runs the ls it planted`, async (t) => {
  if (backend === 'bwrap' && !(await detectBwrap())) { t.skip('no usable bubblewrap'); return; }
  const { ws, out } = lab(t);
  symlinkSync(ws, `${out}/proj`);
  symlinkSync(`${out}/tools`, `${ws}/tools`);
  const saved = process.env.PATH;
  process.env.PATH = `${out}/proj/tools:${saved}`;
  t.after(() => { process.env.PATH = saved; });
  const h = new Harness([ws], { policy: policyFromYaml(`sandbox: { backend: ${backend} }\nrules:\n  - tool: run_command\n    decision: allow\n`) });
  t.after(() => h.close());
  const env = await h.call('run_command', { command: `rm tools && mkdir tools && printf '#!/bin/sh\\necho PLANTED\\n' > tools/ls && chmod +x tools/ls && ls` });
  // The command's output only: its text (in the envelope's args) holds the word too.
  assert.doesNotMatch(String((env.data as { output?: string } | null)?.output ?? ''), /PLANTED/, 'the planted ls ran');
});
