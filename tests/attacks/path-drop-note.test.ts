// A command not found (exit 127) because the PATH check dropped the folder that holds it gets a
// note naming the dropped folders; a workspace root of /usr (every PATH folder inside it) says that
// no folder was left, instead of a bare "command not found".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';
import { pathDropNote } from '../../src/exec/env.js';

const policy = policyFromYaml('sandbox: { backend: none }\nrules:\n  - tool: run_command\n    decision: allow\n');

test('not found in a PATH folder inside the workspace: the note names the dropped folder', async (t) => {
  const { dir, cleanup } = tempDir('tg-pathnote-');
  t.after(cleanup);
  const D = realpathSync(dir);
  mkdirSync(`${D}/node_modules/.bin`, { recursive: true });
  writeFileSync(`${D}/node_modules/.bin/mytool`, '#!/bin/sh\necho ran\n');
  chmodSync(`${D}/node_modules/.bin/mytool`, 0o755);
  const saved = process.env.PATH;
  process.env.PATH = `${D}/node_modules/.bin:${saved}`;
  t.after(() => { process.env.PATH = saved; });
  const h = new Harness([D], { policy });
  t.after(() => h.close());
  const env = await h.call('run_command', { command: 'mytool' });
  assert.equal(env.ok, false);
  assert.equal(env.error?.code, 'ExitNonZero');
  assert.match(env.error!.message, new RegExp(`PATH lost a folder: ${D}/node_modules/\\.bin: inside a workspace root.*by its path`));
  // The program never ran, and running it by path works (the hint is true).
  assert.doesNotMatch(String((env.data as { output?: string }).output), /ran/);
  const byPath = await h.call('run_command', { command: './node_modules/.bin/mytool' });
  assert.equal(byPath.ok, true, JSON.stringify(byPath.error));
  // A failure that is not "not found" carries no note.
  const other = await h.call('run_command', { command: 'exit 3' });
  assert.doesNotMatch(other.error!.message, /PATH lost/);
});

test('a workspace root of /usr: the note says no PATH folder was left', async (t) => {
  const h = new Harness(['/usr'], { policy });
  t.after(() => h.close());
  const env = await h.call('run_command', { command: 'date' });
  assert.equal(env.ok, false, JSON.stringify(env.data));
  assert.match(env.error!.message, /PATH lost \d+ folders: .*inside a workspace root.*The system's program folders are among them: a workspace root of \/ or \/usr/);
});

test('pathDropNote: nothing dropped, nothing said; many dropped, three named', () => {
  assert.equal(pathDropNote('/usr/bin:/bin', '/usr/bin:/bin'), null);
  assert.match(pathDropNote('/a:/b:/c:/d:/e:/usr/bin', '/usr/bin')!, /^PATH lost 5 folders: \/a, \/b, \/c, and 2 more: .*by its path/);
  assert.match(pathDropNote('/usr/bin:/bin', '/dev/null/no-safe-path')!, /^The command got no PATH folder \(\/usr\/bin, \/bin dropped\).*narrower workspace/);
});
