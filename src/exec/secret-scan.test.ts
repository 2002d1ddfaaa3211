import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Harness, policyFromYaml, tempDir } from '../testing/helpers.js';
import { PathRules } from '../workspace/path-rules.js';
import { detectBwrap } from './sandbox.js';
import { scanSecrets } from './secret-scan.js';

// Works, not only installed (and TOOLGATE_SANDBOX=none hides it).
const hasBwrap = (await detectBwrap()) !== null;

function tree(dir: string): void {
  for (const d of ['sub/deeper', 'keys', 'home/.ssh', 'src']) mkdirSync(path.join(dir, d), { recursive: true });
  writeFileSync(path.join(dir, 'sub/deeper/.env'), 'NESTED_SECRET=hunter2\n');
  writeFileSync(path.join(dir, 'sub/.env.production'), 'PROD_SECRET=swordfish\n');
  writeFileSync(path.join(dir, 'keys/server.pem'), 'PEM_SECRET_BODY\n');
  writeFileSync(path.join(dir, 'home/.ssh/id_rsa'), 'SSH_SECRET_KEY\n');
  writeFileSync(path.join(dir, 'src/app.ts'), 'export const SECRET_NAME = "not a secret";\n');
}

test('scanSecrets finds nested secrets and masks a denied folder as a whole', async () => {
  const { dir, cleanup } = tempDir();
  try {
    tree(dir);
    const s = await scanSecrets([dir], PathRules.withDefaults());
    assert.deepEqual(s.paths, [
      path.join(dir, 'home/.ssh'), path.join(dir, 'keys/server.pem'),
      path.join(dir, 'sub/.env.production'), path.join(dir, 'sub/deeper/.env'),
    ]);
    assert.equal(s.incomplete, false);
  } finally {
    cleanup();
  }
});

test('bwrap: commands allowed to read cannot see nested secrets (grep -r, globs, cat)', { skip: !hasBwrap && 'bubblewrap is not available here' }, async () => {
  const { dir, cleanup } = tempDir();
  try {
    tree(dir);
    const policy = policyFromYaml('mode: ci\nsandbox: { backend: bwrap }\ncommands: { prefer_tools: false }\nrules:\n  - tool: run_command\n    command: ["grep", "cat", "find"]\n    decision: allow\n');
    const h = new Harness([dir], { policy });
    const payloads = ['grep -r SECRET .', 'cat sub/deeper/.e*', 'cat keys/*.pem', 'cat home/.s*/id_rsa', 'find . -type f -exec cat {} +'];
    for (const command of payloads) {
      const env = await h.call('run_command', { command });
      const out = JSON.stringify(env);
      for (const s of ['hunter2', 'swordfish', 'PEM_SECRET_BODY', 'SSH_SECRET_KEY']) assert.ok(!out.includes(s), `${command} leaked ${s}: ${out.slice(0, 400)}`);
      if (command === 'grep -r SECRET .') assert.match(out, /not a secret/, 'the ordinary file is still searched');
    }
    h.close();
  } finally {
    cleanup();
  }
});
