// Review 33. A missing protected path gets a read-only stand-in "so it cannot be created". For a
// paths.protect entry of more than one component (`.github/workflows`, `config/prod.yaml`) the
// folders above the stand-in are plain folders (bwrap makes the missing ones; an existing one is
// not pinned: ancestorsToPin walks the hidden and read-only paths only). A command renames the
// parent away (the stand-in mount travels with it) and creates the protected path itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Harness, policyFromYaml } from '../../src/testing/helpers.js';
import { detectBwrap } from '../../src/exec/sandbox.js';

const POLICY = 'sandbox: { backend: bwrap }\npaths:\n  protect: [".github/workflows", "config/prod.yaml"]\nrules:\n  - tool: run_command\n    decision: allow\n';

for (const parentExists of [false, true]) {
  test(`bwrap: a missing multi-component protected path cannot be created by moving its parent away (parent ${parentExists ? 'exists' : 'missing'})`, async (t) => {
    if (!(await detectBwrap())) { t.skip('no usable bubblewrap'); return; }
    if (spawnSync('python3', ['-c', '0']).status !== 0) { t.skip('python3 is missing'); return; }
    const ws = mkdtempSync('/var/tmp/tg-rv33-standin-');
    t.after(() => rmSync(ws, { recursive: true, force: true }));
    if (parentExists) { mkdirSync(path.join(ws, '.github')); mkdirSync(path.join(ws, 'config')); }
    writeFileSync(path.join(ws, 'x.py'), [
      'import os',
      "for d in ['.github', 'config']:",
      '    try: os.rename(d, d + ".moved")',
      '    except OSError as e: print(d, e)',
      'try:',
      "    os.makedirs('.github/workflows', exist_ok=True); open('.github/workflows/evil.yml', 'w').write('on: push\\n')",
      "    os.makedirs('config', exist_ok=True); open('config/prod.yaml', 'w').write('evil: 1\\n')",
      'except OSError as e: print(e)', ''].join('\n'));
    const h = new Harness([ws], { policy: policyFromYaml(POLICY) });
    t.after(() => h.close());
    const env = await h.call('run_command', { command: 'python3 x.py' });
    assert.equal((env.data as { sandbox?: string } | null)?.sandbox, 'bwrap', JSON.stringify(env));
    // (An empty folder may stand at config/prod.yaml for a second: the stand-in's mount point.)
    const isFile = (p: string) => existsSync(p) && statSync(p).isFile();
    assert.deepEqual({ workflow: existsSync(path.join(ws, '.github/workflows/evil.yml')), prod: isFile(path.join(ws, 'config/prod.yaml')) },
      { workflow: false, prod: false });
  });
}
