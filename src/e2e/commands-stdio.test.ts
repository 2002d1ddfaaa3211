import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { connectStdio, tempDir } from '../testing/helpers.js';
import { ALLOWED, CI_POLICY, CREATE_PAYLOADS, REMOVE_PAYLOADS } from './bypass-corpus.js';

type Env = { ok: boolean; error: { code: string } | null; data: Record<string, unknown> | null };

test('over stdio with the real SDK client: the bypass corpus is refused, allowed commands run, secrets stay out', async () => {
  const { dir, cleanup } = tempDir('tg-stdio-');
  writeFileSync(`${dir}/README.md`, 'hello\n');
  mkdirSync(`${dir}/.git/hooks`, { recursive: true });
  const pdir = tempDir('tg-stdio-policy-');
  const policy = `${pdir.dir}/policy.yaml`;
  writeFileSync(policy, CI_POLICY);
  const { client, close } = await connectStdio(['--workspace', dir, '--policy', policy], { env: { MY_API_TOKEN: 'stdio-should-not-leak', AWS_ACCESS_KEY_ID: 'AKIA-should-not-leak' } });
  try {
    const tools = (await client.listTools()).tools.map((t) => t.name);
    for (const t of ['run_command', 'process_list', 'process_output', 'process_write', 'process_kill']) assert.ok(tools.includes(t), t);
    const call = async (command: string) => (await client.callTool({ name: 'run_command', arguments: { command } })).structuredContent as Env;
    const leaks: string[] = [];
    for (const p of CREATE_PAYLOADS) {
      const env = await call(p);
      if (env.ok || !['ToolNotAllowed', 'ApprovalRequired'].includes(env.error!.code) || existsSync(`${dir}/canary`)) leaks.push(p);
    }
    for (const p of REMOVE_PAYLOADS) {
      writeFileSync(`${dir}/canary`, 'x');
      const env = await call(p);
      if (env.ok || !existsSync(`${dir}/canary`)) leaks.push(p);
    }
    assert.deepEqual(leaks, []);
    for (const cmd of ALLOWED) {
      const env = await call(cmd);
      assert.ok(env.ok || env.error?.code === 'ExitNonZero', `${cmd}: ${JSON.stringify(env.error)}`);
    }
    const secret = await call('echo "[$MY_API_TOKEN][$AWS_ACCESS_KEY_ID]"');
    assert.equal(secret.ok, true);
    assert.equal(secret.data!.output, '[][]\n');
  } finally {
    await close();
    cleanup();
    pdir.cleanup();
  }
});
