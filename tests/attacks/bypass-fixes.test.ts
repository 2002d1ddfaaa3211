/**
 * Regression tests for bypasses found by the independent review (all got through at the
 * time): arithmetic / subscript evaluation, function shadowing, redirects the walker did not
 * collect, words hidden after a redirect target, heredoc delimiters bash reads differently,
 * secret reads without a sandbox, and pathological nesting. Every payload must be refused
 * and leave the workspace untouched, with the sandbox off and (when present) with bubblewrap.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { detectBwrap } from '../../src/exec/sandbox.js';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';
import { FIX_CREATE_PAYLOADS, FIX_SECRET_PAYLOADS } from './bypass-corpus.js';

const REFUSED = new Set(['ToolNotAllowed', 'ApprovalRequired']);
const bwrap = await detectBwrap();

const policy = (backend: string) => `
mode: ci
sandbox: { backend: ${backend} }
# These suites test the parser policy; the prefer_tools guardrail is tested on its own.
commands: { prefer_tools: false }
rules:
  - tool: run_command
    command: ["echo", "ls", "cat", "git status", "git log", "grep", "pwd", "true"]
    decision: allow
`;

function workspace() {
  const t = tempDir('tg-fixes-');
  writeFileSync(`${t.dir}/README.md`, 'hello\n');
  writeFileSync(`${t.dir}/.env`, 'SECRET=topsecret\n');
  mkdirSync(`${t.dir}/.git/hooks`, { recursive: true });
  return t;
}

for (const backend of ['none', 'bwrap']) {
  test(`review fixes, backend ${backend}: every payload is refused and creates nothing`, { skip: backend === 'bwrap' && !bwrap && 'bubblewrap is not available' }, async () => {
    const { dir, cleanup } = workspace();
    const h = new Harness([dir], { policy: policyFromYaml(policy(backend)) });
    const leaks: string[] = [];
    for (const payload of FIX_CREATE_PAYLOADS) {
      const env = await h.call('run_command', { command: payload });
      if (env.ok || !REFUSED.has(env.error!.code)) leaks.push(`${JSON.stringify(payload)} → ${env.ok ? 'ran' : `${env.error!.code}: ${env.error!.message.slice(0, 200)}`}`);
      if (existsSync(`${dir}/canary`)) leaks.push(`${JSON.stringify(payload)} created the canary`);
      if (existsSync(`${dir}/.git/hooks/pre-commit`)) leaks.push(`${JSON.stringify(payload)} wrote a hook`);
    }
    assert.deepEqual(leaks, []);
    h.close(); cleanup();
  });
}

test('review fixes, backend none: secret reads are refused (no sandbox masks them)', async () => {
  const { dir, cleanup } = workspace();
  const h = new Harness([dir], { policy: policyFromYaml(policy('none')) });
  const leaks: string[] = [];
  for (const payload of FIX_SECRET_PAYLOADS) {
    const env = await h.call('run_command', { command: payload });
    if (env.ok || !REFUSED.has(env.error!.code)) leaks.push(`${JSON.stringify(payload)} → ${env.ok ? 'ran' : env.error!.code}`);
    if (JSON.stringify(env).includes('topsecret')) leaks.push(`${JSON.stringify(payload)} leaked the secret`);
  }
  assert.deepEqual(leaks, []);
  h.close(); cleanup();
});

test('review fixes, backend bwrap: recursive grep is not made to ask (secrets are masked)', { skip: !bwrap && 'bubblewrap is not available' }, async () => {
  const { dir, cleanup } = workspace();
  const h = new Harness([dir], { policy: policyFromYaml(policy('bwrap')) });
  const env = await h.call('run_command', { command: 'grep -r hello .' });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  assert.ok(!JSON.stringify(env).includes('topsecret'));
  h.close(); cleanup();
});

test('review fixes: ordinary commands still run (literal arithmetic, heredocs, redirects at the end)', async () => {
  const { dir, cleanup } = workspace();
  const h = new Harness([dir], { policy: policyFromYaml(policy('none')) });
  for (const cmd of ['echo $((1+2))', 'cat <<EOF\nhi\nEOF', "cat <<'EOF'\n$(x)\nEOF", 'cat <<-EOF\n\thi\n\tEOF', 'ls 2>/dev/null', '[[ 1 -lt 2 ]] && echo yes', 'cat README.md', 'grep hello README.md']) {
    const env = await h.call('run_command', { command: cmd });
    assert.ok(env.ok, `${JSON.stringify(cmd)}: ${JSON.stringify(env.error)}`);
  }
  assert.equal(readFileSync(`${dir}/README.md`, 'utf8'), 'hello\n');
  h.close(); cleanup();
});

test('review fixes: ~2000 nested substitutions are a refusal, not an internal error', async () => {
  const { dir, cleanup } = workspace();
  const h = new Harness([dir], { policy: policyFromYaml(policy('none')) });
  for (const n of [500, 2000, 5000]) {
    const env = await h.call('run_command', { command: `echo ${'$(echo '.repeat(n)}hi${')'.repeat(n)}` });
    assert.equal(env.ok, false);
    assert.equal(env.error!.code, 'ToolNotAllowed', `${n}: ${env.error!.message.slice(0, 200)}`);
  }
  h.close(); cleanup();
});
