import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';
import { ALLOWED, CI_POLICY, CREATE_PAYLOADS, REMOVE_PAYLOADS } from './bypass-corpus.js';

const REFUSED = new Set(['ToolNotAllowed', 'ApprovalRequired']);

function workspace() {
  const t = tempDir('tg-bypass-');
  writeFileSync(`${t.dir}/README.md`, 'hello\n');
  mkdirSync(`${t.dir}/.git/hooks`, { recursive: true });
  return t;
}

test(`the bypass corpus (${CREATE_PAYLOADS.length + REMOVE_PAYLOADS.length} payloads) is refused and the canary is untouched`, async () => {
  const { dir, cleanup } = workspace();
  const h = new Harness([dir], { policy: policyFromYaml(CI_POLICY) });
  const leaks: string[] = [];
  for (const payload of CREATE_PAYLOADS) {
    const env = await h.call('run_command', { command: payload });
    if (env.ok || !REFUSED.has(env.error!.code)) leaks.push(`${JSON.stringify(payload)} → ${env.ok ? 'ran' : env.error!.code}`);
    if (existsSync(`${dir}/canary`)) leaks.push(`${JSON.stringify(payload)} created the canary`);
  }
  for (const payload of REMOVE_PAYLOADS) {
    writeFileSync(`${dir}/canary`, 'x');
    const env = await h.call('run_command', { command: payload });
    if (env.ok || !REFUSED.has(env.error!.code)) leaks.push(`${JSON.stringify(payload)} → ${env.ok ? 'ran' : env.error!.code}`);
    if (!existsSync(`${dir}/canary`)) leaks.push(`${JSON.stringify(payload)} removed the canary`);
  }
  assert.deepEqual(leaks, []);
  h.close(); cleanup();
});

test('the allowed commands still run under the same policy', async () => {
  const { dir, cleanup } = workspace();
  const h = new Harness([dir], { policy: policyFromYaml(CI_POLICY) });
  for (const cmd of ALLOWED) {
    const env = await h.call('run_command', { command: cmd });
    assert.ok(env.ok || env.error?.code === 'ExitNonZero', `${cmd}: ${JSON.stringify(env.error)}`);
  }
  assert.equal(existsSync(`${dir}/canary`), false);
  h.close(); cleanup();
});

test('control: the same harness does see a canary when the policy allows touch', async () => {
  const { dir, cleanup } = workspace();
  const h = new Harness([dir], { policy: policyFromYaml(`${CI_POLICY}\n  - tool: run_command\n    command: ["touch"]\n    decision: allow\n  - tool: run_command\n    path: "canary"\n    decision: allow\n`) });
  const env = await h.call('run_command', { command: 'echo ok; touch canary' });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  assert.equal(existsSync(`${dir}/canary`), true);
  h.close(); cleanup();
});
