// CI (.ci/run) runs everything where the tools are installed, then the suite again with
// bubblewrap and ripgrep hidden, and fails when any step fails.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT } from '../../src/testing/helpers.js';

const CI = path.join(REPO_ROOT, '.ci', 'run');

test('.ci/run: valid bash, stops on the first failing step, installs ripgrep, bubblewrap and chromium', () => {
  assert.equal(spawnSync('bash', ['-n', CI]).status, 0, 'bash -n .ci/run');
  const text = readFileSync(CI, 'utf8');
  assert.match(text, /^set -euo pipefail$/m);
  for (const pkg of ['ripgrep', 'bubblewrap', 'chromium']) assert.match(text, new RegExp(`need\\+=\\(${pkg}\\)`), `${pkg} is installed with apt`);
  assert.match(text, /^npm test$/m, "the README's test command");
});

test('.ci/run: a second pass with bubblewrap and ripgrep hidden', () => {
  const text = readFileSync(CI, 'utf8');
  const second = text.split('\n').find((l) => /TOOLGATE_SANDBOX=none/.test(l) && /node scripts\/run-tests\.mjs/.test(l));
  assert.ok(second, 'a run of the suite with TOOLGATE_SANDBOX=none');
  assert.match(second, /TOOLGATE_RG=off/);
  assert.ok(!/\|\|\s*true/.test(second), 'its failure is not ignored');
});
