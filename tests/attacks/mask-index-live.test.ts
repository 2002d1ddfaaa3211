import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { detectBwrap } from '../../src/exec/sandbox.js';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';

// The sandbox's mask set comes from an index built once and kept current by file watchers.
// Secrets that appear AFTER it was built (created, renamed in, inside a moved-in folder, or a
// file that was harmless and is renamed to a secret name) must be hidden from the next command.
const hasBwrap = await detectBwrap();

test('secrets that appear after the mask index was built are hidden from the next command', { skip: !hasBwrap && 'needs bubblewrap (detectBwrap found none, or TOOLGATE_SANDBOX=none)' }, async (t) => {
  const { dir, cleanup } = tempDir('tg-maskidx-');
  const h = new Harness([dir], { policy: policyFromYaml('sandbox: { backend: bwrap }\nrules:\n  - tool: "*"\n    decision: allow\n') });
  t.after(async () => { await h.session.dispose(); h.close(); cleanup(); });
  mkdirSync(`${dir}/sub`);
  writeFileSync(`${dir}/sub/notes.txt`, 'harmless\n');
  const first = await h.call('run_command', { command: 'echo built' });
  assert.equal(first.ok, true, JSON.stringify(first.error));
  // After the index exists: a new secret, a folder moved in holding one, a file renamed to one.
  writeFileSync(`${dir}/sub/.env`, 'SECRET_A=1\n');
  mkdirSync(`${dir}/outside-tmp/deep`, { recursive: true });
  writeFileSync(`${dir}/outside-tmp/deep/.env`, 'SECRET_B=1\n');
  renameSync(`${dir}/outside-tmp`, `${dir}/moved`);
  writeFileSync(`${dir}/sub/plain.txt`, 'SECRET_C=1\n');
  renameSync(`${dir}/sub/plain.txt`, `${dir}/sub/server.pem`);
  // Content changes of an ordinary file are not structure changes, and must not hide it.
  appendFileSync(`${dir}/sub/notes.txt`, 'more\n');
  // Names built at run time: only the sandbox can stop these reads.
  const r = await h.call('run_command', { command: 'e=.en; for f in sub/${e}v moved/deep/${e}v sub/server.p""em sub/notes.txt; do cat "$f" 2>&1; done; true' });
  assert.equal(r.ok, true, JSON.stringify(r.error));
  const out = String((r.data as { output: string }).output);
  assert.doesNotMatch(out, /SECRET_A|SECRET_B|SECRET_C/, out);
  assert.match(out, /harmless\nmore/, 'an ordinary file was hidden');
});
