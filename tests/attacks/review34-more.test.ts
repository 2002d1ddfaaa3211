// Review 34, the smaller items fixed with the rest:
//  - /proc/keys and /proc/key-users listed the keys of the server's uid (names, payload sizes):
//    they read as empty in the sandbox;
//  - a protected path below a file (`.github` a file, `.github/workflows` protected) failed every
//    command (bwrap cannot make a mount point below a file): the file is bound read-only instead,
//    and a command can neither replace it nor make the path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Harness, policyFromYaml } from '../../src/testing/helpers.js';
import { detectBwrap } from '../../src/exec/sandbox.js';

const output = (env: { data: unknown }) => String((env.data as { output?: string } | null)?.output ?? '');

test('bwrap: /proc/keys and /proc/key-users read as empty', async (t) => {
  if (!(await detectBwrap())) { t.skip('no usable bubblewrap'); return; }
  if (!existsSync('/proc/keys')) { t.skip('this kernel has no /proc/keys'); return; }
  const ws = realpathSync(mkdtempSync('/var/tmp/tg-rv34m-'));
  t.after(() => rmSync(ws, { recursive: true, force: true }));
  const h = new Harness([ws], { policy: policyFromYaml('sandbox: { backend: bwrap }\nrules:\n  - tool: run_command\n    decision: allow\n') });
  t.after(() => h.close());
  const env = await h.call('run_command', { command: 'wc -c < /proc/keys; wc -c < /proc/key-users' });
  assert.equal(output(env), '0\n0\n', JSON.stringify(env));
});

test('bwrap: a protected path below a file: commands run, and the file stays', async (t) => {
  if (!(await detectBwrap())) { t.skip('no usable bubblewrap'); return; }
  const ws = realpathSync(mkdtempSync('/var/tmp/tg-rv34f-'));
  t.after(() => rmSync(ws, { recursive: true, force: true }));
  writeFileSync(path.join(ws, '.github'), 'a file\n');
  writeFileSync(path.join(ws, 'x.sh'), 'rm -f .github 2>&1; mkdir -p .github/workflows 2>&1 && echo x > .github/workflows/ci.yml; echo done\n');
  const h = new Harness([ws], { policy: policyFromYaml('sandbox: { backend: bwrap }\npaths:\n  protect: [".github/workflows"]\nrules:\n  - tool: run_command\n    decision: allow\n') });
  t.after(() => h.close());
  const env = await h.call('run_command', { command: 'bash x.sh' });
  assert.match(output(env), /done/, JSON.stringify(env));
  assert.equal(statSync(path.join(ws, '.github')).isFile(), true);
  assert.equal(readFileSync(path.join(ws, '.github'), 'utf8'), 'a file\n');
});
