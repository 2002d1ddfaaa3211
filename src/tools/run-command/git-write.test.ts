import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Harness, policyFromYaml, tempDir } from '../../testing/helpers.js';

const yaml = (perms: string) => `mode: ci
profile: reviewer
profiles:
  reviewer:
    base: full
    permissions: [${perms}]
sandbox: { backend: none }
rules:
  - { tool: run_command, decision: allow }
`;

test('git.write: a profile without it runs git status but not git push/commit/config', async () => {
  const { dir, cleanup } = tempDir('tg-gitw-');
  const h = new Harness([dir], { policy: policyFromYaml(yaml('fs.read, proc.exec')) });
  try {
    for (const command of ['git status', 'git log -1', 'git --version']) {
      const env = await h.call('run_command', { command });
      assert.notEqual(env.error?.code, 'ToolNotAllowed', `${command}: ${env.error?.message}`);
    }
    for (const command of ['git push', 'git commit -m x', 'git -C . tag v1', 'echo x && git reset --hard', 'sh -c "git push"']) {
      const env = await h.call('run_command', { command });
      assert.equal(env.error?.code, 'ToolNotAllowed', command);
      assert.match(env.error!.message, /git\.write/, command);
    }
  } finally {
    h.close();
    cleanup();
  }
});

test('git.write: a profile with it (and the built-in full) may push as far as the policy goes', async () => {
  const { dir, cleanup } = tempDir('tg-gitw-');
  const h = new Harness([dir], { policy: policyFromYaml(yaml('fs.read, proc.exec, git.write')) });
  try {
    const env = await h.call('run_command', { command: 'git push' });
    assert.notEqual(env.error?.code, 'ToolNotAllowed', env.error?.message);
  } finally {
    h.close();
    cleanup();
  }
});
