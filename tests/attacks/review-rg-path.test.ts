// Pre-existing, found while listing spawn sites (grep's rg, secret-scan's rg): locateRg takes
// relative PATH entries (node_modules/.bin, bin, .) and returns a relative path, resolved against
// the server's cwd for the check and the child's cwd (the searched folder) for the exec. A command
// (even under bubblewrap) can plant `rg` there; grep then runs it outside the sandbox.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';
import { detectBwrap } from '../../src/exec/sandbox.js';

test('an rg planted by a sandboxed command on a relative PATH entry is not run by grep', async (t) => {
  if (!(await detectBwrap())) { t.skip('no working bubblewrap'); return; }
  const { dir, cleanup } = tempDir('tg-r41-rg-');
  const saved = { cwd: process.cwd(), PATH: process.env.PATH, WALK: process.env.TOOLGATE_GREP_WALK_MAX, STARTER: process.env.TOOLGATE_STARTER };
  const mark = path.join(dir, '..', `${path.basename(dir)}-rg-ran`);
  const h = new Harness([dir], { policy: policyFromYaml('sandbox: { backend: bwrap }\nrules:\n  - { tool: "*", decision: allow }\n') });
  t.after(() => {
    process.chdir(saved.cwd); process.env.PATH = saved.PATH;
    if (saved.WALK === undefined) delete process.env.TOOLGATE_GREP_WALK_MAX; else process.env.TOOLGATE_GREP_WALK_MAX = saved.WALK;
    if (saved.STARTER === undefined) delete process.env.TOOLGATE_STARTER; else process.env.TOOLGATE_STARTER = saved.STARTER;
    h.close(); cleanup(); rmSync(mark, { force: true });
  });
  process.chdir(dir); // a server started in its workspace
  process.env.PATH = `node_modules/.bin:${saved.PATH}`; // a common developer PATH
  process.env.TOOLGATE_GREP_WALK_MAX = '0'; // as in a workspace too big for the built-in walk
  process.env.TOOLGATE_STARTER = 'off';
  writeFileSync(path.join(dir, 'a.txt'), 'hello\n');
  const plant = await h.call('run_command', { command: `mkdir -p node_modules/.bin && printf '#!/bin/sh\\ntouch ${mark}\\nexec /bin/false\\n' > node_modules/.bin/rg && chmod +x node_modules/.bin/rg` });
  assert.equal(plant.ok, true, JSON.stringify(plant.error));
  await h.call('grep', { pattern: 'hello' });
  assert.equal(existsSync(mark), false, 'grep ran the rg a sandboxed command wrote into the workspace, outside the sandbox');
});
