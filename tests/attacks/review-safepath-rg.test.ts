// Review 28 (93e3ce1 area, older): rg is looked up once in safePath's PATH and run outside any
// sandbox. With a PATH entry that reaches the workspace through a link and leaves it through a
// link in the workspace (kept: it resolves outside), a command in bwrap re-points that link and
// the next grep runs the rg it planted, unsandboxed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { Harness, policyFromYaml, tempDir, withEngine } from '../../src/testing/helpers.js';
import { detectBwrap } from '../../src/exec/sandbox.js';

test('bwrap: a command re-points a link the rg lookup went through; grep then runs the planted rg outside the sandbox', { skip: process.platform !== 'linux' }, async (t) => {
  if (!(await detectBwrap())) { t.skip('no usable bubblewrap'); return; }
  if (!existsSync('/usr/bin/rg')) { t.skip('no /usr/bin/rg'); return; }
  const { dir, cleanup } = tempDir('tg-rv28rg-');
  t.after(cleanup);
  const D = realpathSync(dir);
  const ws = `${D}/ws`, out = `${D}/out`;
  mkdirSync(ws); mkdirSync(`${out}/tools`, { recursive: true });
  writeFileSync(`${ws}/a.txt`, 'hello\n');
  symlinkSync('/usr/bin/rg', `${out}/tools/rg`); // a shared tools folder that has rg
  symlinkSync(ws, `${out}/proj`); // the user's PATH names the project through a link
  symlinkSync(`${out}/tools`, `${ws}/tools`); // and the project's tools folder is a link to the shared one
  const saved = process.env.PATH;
  process.env.PATH = `${out}/proj/tools:${saved}`;
  t.after(() => { process.env.PATH = saved; });
  const h = new Harness([ws], { policy: policyFromYaml('sandbox: { backend: bwrap }\nrules:\n  - tool: run_command\n    decision: allow\n') });
  t.after(() => h.close());
  const marker = `${out}/escaped`;
  await withEngine('rg', async () => {
    const g1 = await h.call('grep', { pattern: 'hello' });
    assert.equal(g1.ok, true, JSON.stringify(g1).slice(0, 300));
    // In the sandbox: / is read-only, so the command cannot write `marker` itself.
    const r = await h.call('run_command', { command: `rm tools && mkdir tools && printf '#!/bin/sh\\ntouch ${marker}\\nexec /usr/bin/rg "$@"\\n' > tools/rg && chmod +x tools/rg && touch ${marker}; true` });
    assert.equal(existsSync(marker), false, `the sandbox let the command write outside: ${JSON.stringify(r).slice(0, 300)}`);
    await h.call('grep', { pattern: 'hello' });
  });
  assert.equal(existsSync(marker), false, 'grep ran the rg the command planted, outside the sandbox');
});
