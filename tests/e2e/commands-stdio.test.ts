import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { connectStdio, tempDir } from '../../src/testing/helpers.js';
import { ALLOWED, CI_POLICY, CREATE_PAYLOADS, REMOVE_PAYLOADS } from '../attacks/bypass-corpus.js';

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

test('over stdio: closing the client (server stdin) kills the background processes', async () => {
  const { dir, cleanup } = tempDir('tg-stdio-');
  const pdir = tempDir('tg-stdio-policy-');
  writeFileSync(`${pdir.dir}/p.yaml`, 'sandbox: { backend: none }\nrules:\n  - tool: "*"\n    decision: allow\n');
  const marker = `tgmarkstdio${process.pid}`;
  const { client, close } = await connectStdio(['--workspace', dir, '--policy', `${pdir.dir}/p.yaml`]);
  try {
    const r = (await client.callTool({ name: 'run_command', arguments: { command: `sleep 320; : ${marker}`, background: true } })).structuredContent as Env;
    assert.equal(r.ok, true, JSON.stringify(r.error));
    assert.ok(alive(marker).length > 0);
  } finally {
    await close();
  }
  for (let i = 0; i < 100 && alive(marker).length; i++) await new Promise((res) => setTimeout(res, 50));
  assert.deepEqual(alive(marker), []);
  cleanup(); pdir.cleanup();
});

function alive(marker: string): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (readFileSync(`/proc/${e}/cmdline`, 'utf8').includes(marker) && !/\) Z /.test(readFileSync(`/proc/${e}/stat`, 'utf8'))) out.push(Number(e));
    } catch { /* gone */ }
  }
  return out;
}
