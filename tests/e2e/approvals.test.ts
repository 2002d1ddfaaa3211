// Approvals end to end (SPEC §8): the built server over stdio, the real SDK client declaring
// elicitation and answering the form. Also: clients without elicitation, ci mode, the replay
// command run from a shell, progress while waiting, and the audit records of grants and refusals.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema, type ElicitRequest, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { connectStdio, tempDir } from '../../src/testing/helpers.js';

type Env = { ok: boolean; error: { code: string; message: string; details?: Record<string, any> } | null; data: any };
type Answer = (req: ElicitRequest['params']) => ElicitResult | Promise<ElicitResult>;

async function server(dir: string, answer: Answer | null, extra: string[] = []) {
  const asked: ElicitRequest['params'][] = [];
  const conn = await connectStdio(['--workspace', dir, ...extra], answer ? { capabilities: { elicitation: { form: {} } } } : {});
  // Every call of server() is inside a test body: close after that test even when it fails early.
  after(() => conn.close().catch(() => undefined));
  if (answer) {
    conn.client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params);
      return answer(req.params);
    });
  }
  const call = async (name: string, args: Record<string, unknown>, opts: Parameters<Client['callTool']>[2] = {}) =>
    (await conn.client.callTool({ name, arguments: args }, undefined, opts)).structuredContent as unknown as Env;
  return { ...conn, asked, call };
}

function audit(dir: string): Array<Record<string, any>> {
  return readFileSync(path.join(dir, '.toolgate', 'audit.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
}

const once: Answer = () => ({ action: 'accept', content: { decision: 'allow_once' } });
const session: Answer = () => ({ action: 'accept', content: { decision: 'allow_session' } });

test('the form asks for decision: allow_once | allow_session | allow_always | deny, required, and shows the exact args and the grant', async () => {
  const { dir, cleanup } = tempDir('tg-appr-');
  const s = await server(dir, once);
  const content = 'x'.repeat(5000) + ' end';
  const env = await s.call('write_file', { path: 'a.txt', content });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  assert.equal(s.asked.length, 1);
  const p = s.asked[0]! as { message: string; requestedSchema: any; mode?: string };
  assert.deepEqual(p.requestedSchema.required, ['decision']);
  assert.deepEqual(p.requestedSchema.properties.decision.enum, ['allow_once', 'allow_session', 'allow_always', 'deny']);
  assert.match(p.message, /write_file/);
  assert.match(p.message, /medium risk/);
  assert.ok(p.message.includes(JSON.stringify({ path: 'a.txt', content, append: false, create_dirs: false, dry_run: false })), 'the exact args, not cut');
  assert.match(p.message, /grants: write_file \(write\) on "[^"]*\/a\.txt"/);
  await s.close();
  cleanup();
});

test('allow_once runs the call once and asks again the next time', async () => {
  const { dir, cleanup } = tempDir('tg-appr-');
  const s = await server(dir, once);
  assert.equal((await s.call('write_file', { path: 'a.txt', content: 'one' })).ok, true);
  assert.equal(readFileSync(`${dir}/a.txt`, 'utf8'), 'one');
  assert.equal((await s.call('write_file', { path: 'a.txt', content: 'two' })).ok, true);
  assert.equal(readFileSync(`${dir}/a.txt`, 'utf8'), 'two');
  assert.equal(s.asked.length, 2);
  await s.close();
  const recs = audit(dir).filter((r) => r.tool === 'write_file');
  assert.deepEqual(recs.map((r) => [r.decision, r.approval?.granted, r.approval?.scope]), [['ask', true, 'once'], ['ask', true, 'once']]);
  assert.deepEqual(recs.map((r) => r.approval?.source), ['elicitation', 'elicitation'], 'audited as answered through the form');
  cleanup();
});

test('allow_session stops asking for what the grant covers, and only that', async () => {
  const { dir, cleanup } = tempDir('tg-appr-');
  const s = await server(dir, session);
  assert.equal((await s.call('write_file', { path: 'a.txt', content: 'one\n' })).ok, true);
  assert.equal(s.asked.length, 1);
  assert.equal((await s.call('write_file', { path: 'a.txt', content: 'two\n' })).ok, true);
  assert.equal(s.asked.length, 1, 'the grant covers write_file on a.txt');
  assert.equal((await s.call('write_file', { path: 'b.txt', content: 'b\n' })).ok, true);
  assert.equal(s.asked.length, 2, 'a grant for a.txt does not cover b.txt');
  assert.equal((await s.call('write_file', { path: 'sub/a.txt', content: 'deep\n', create_dirs: true })).ok, true);
  assert.equal(s.asked.length, 3, 'a grant for a.txt does not cover sub/a.txt');
  assert.equal((await s.call('edit_file', { path: 'a.txt', old_string: 'two', new_string: 'three' })).ok, true);
  assert.equal(s.asked.length, 4, 'a grant for write_file does not cover edit_file');
  assert.equal(readFileSync(`${dir}/a.txt`, 'utf8'), 'three\n');
  await s.close();
  const recs = audit(dir).filter((r) => r.tool === 'write_file' || r.tool === 'edit_file');
  assert.deepEqual(recs.map((r) => r.approval?.scope), ['session', 'grant', 'session', 'session', 'session']);
  assert.deepEqual(recs[0]!.approval.grant.map((g: any) => [g.tool, g.path]), [['write_file', 'a.txt']]);
  cleanup();
});

test('decline → ApprovalDenied; deny → ApprovalDenied; nothing written; refusals are audited', async () => {
  const { dir, cleanup } = tempDir('tg-appr-');
  let reply: ElicitResult = { action: 'decline' };
  const s = await server(dir, () => reply);
  let env = await s.call('write_file', { path: 'a.txt', content: 'x' });
  assert.equal(env.error?.code, 'ApprovalDenied');
  reply = { action: 'accept', content: { decision: 'deny' } };
  env = await s.call('write_file', { path: 'a.txt', content: 'x' });
  assert.equal(env.error?.code, 'ApprovalDenied');
  assert.ok(env.error?.details?.replay?.command);
  assert.equal(existsSync(`${dir}/a.txt`), false);
  await s.close();
  const recs = audit(dir).filter((r) => r.tool === 'write_file');
  assert.deepEqual(recs.map((r) => [r.ok, r.error_code, r.approval?.granted]), [[false, 'ApprovalDenied', false], [false, 'ApprovalDenied', false]]);
  cleanup();
});

test('an accept without a decision (empty form), cancel, or an unknown value is never consent', async () => {
  const { dir, cleanup } = tempDir('tg-appr-');
  const replies: ElicitResult[] = [
    { action: 'accept', content: {} },
    { action: 'accept' },
    { action: 'cancel' },
    { action: 'accept', content: { decision: 'yes' } },
    { action: 'accept', content: { decision: 'allow_once ' } },
  ];
  let i = 0;
  const s = await server(dir, () => replies[i++]!);
  for (let k = 0; k < replies.length; k++) {
    const env = await s.call('write_file', { path: 'a.txt', content: 'x' });
    assert.equal(env.ok, false, `reply ${k} was taken as consent`);
    assert.ok(['ApprovalRequired', 'ApprovalDenied'].includes(env.error!.code), env.error!.code);
  }
  assert.equal(existsSync(`${dir}/a.txt`), false);
  await s.close();
  cleanup();
});

test('a client without elicitation waits in the inbox; when nobody answers it gets ApprovalRequired with a replay that works from a shell', async () => {
  const { dir, cleanup } = tempDir('tg-appr-');
  writeFileSync(`${dir}/old.txt`, 'before\n');
  const pol = tempDir('tg-appr-pol-');
  writeFileSync(`${pol.dir}/p.yaml`, 'approvals: { timeout_ms: 400 }\n');
  const s = await server(dir, null, ['--policy', `${pol.dir}/p.yaml`]);
  // A new file.
  let env = await s.call('write_file', { path: "it's new.txt", content: 'made by replay\n' });
  assert.equal(env.error?.code, 'ApprovalRequired');
  assert.match(env.error!.message, /nobody answered within/);
  assert.match(env.error!.message, new RegExp(`approve request ${env.error!.details!.approval_id} in the toolgate console`));
  const replay = env.error!.details!.replay as { rule: string; command: string };
  assert.match(replay.rule, /tool: write_file/);
  assert.match(replay.rule, /decision: allow/);
  assert.match(replay.command, /call write_file --args .* --approve/);
  let run = spawnSync('sh', ['-c', replay.command], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stdout + run.stderr);
  assert.equal(JSON.parse(run.stdout).ok, true);
  assert.equal(readFileSync(`${dir}/it's new.txt`, 'utf8'), 'made by replay\n');
  // An existing file this session read: the replay carries the hash of what was read.
  assert.equal((await s.call('read_file', { path: 'old.txt' })).ok, true);
  env = await s.call('edit_file', { path: 'old.txt', old_string: 'before', new_string: 'after' });
  assert.equal(env.error?.code, 'ApprovalRequired');
  const cmd = env.error!.details!.replay.command as string;
  assert.match(cmd, /expected_sha256/);
  run = spawnSync('sh', ['-c', cmd], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stdout + run.stderr);
  assert.equal(readFileSync(`${dir}/old.txt`, 'utf8'), 'after\n');
  // Run again, the file no longer holds what was read: refused, not applied twice.
  run = spawnSync('sh', ['-c', cmd], { encoding: 'utf8' });
  assert.notEqual(run.status, 0);
  assert.equal(JSON.parse(run.stdout).error.code, 'StaleRead');
  await s.close();
  const recs = audit(dir);
  assert.ok(recs.some((r) => r.tool === 'write_file' && r.approval?.scope === 'ApprovalRequired'));
  assert.ok(recs.some((r) => r.tool === 'write_file' && r.approval?.scope === 'cli' && r.ok));
  cleanup();
  pol.cleanup();
});

test('ci mode never asks: ApprovalRequired even when the client could answer', async () => {
  const { dir, cleanup } = tempDir('tg-appr-');
  const s = await server(dir, once, ['--mode', 'ci']);
  const env = await s.call('write_file', { path: 'a.txt', content: 'x' });
  assert.equal(env.error?.code, 'ApprovalRequired');
  assert.match(env.error!.message, /ci mode/);
  assert.equal(s.asked.length, 0);
  assert.equal(existsSync(`${dir}/a.txt`), false);
  await s.close();
  cleanup();
});

test('delete_file asks by default, and progress notifications keep the call alive while the user decides', async () => {
  const { dir, cleanup } = tempDir('tg-appr-');
  writeFileSync(`${dir}/doomed.txt`, 'bye\n');
  let sawProgress!: () => void;
  const progressed = new Promise<void>((r) => { sawProgress = r; });
  const messages: string[] = [];
  // The answer waits until the server has said it is waiting (or 30 s, and the test then fails).
  const s = await server(dir, async () => {
    await Promise.race([progressed, new Promise((r) => setTimeout(r, 30_000))]);
    return { action: 'accept', content: { decision: 'allow_once' } };
  });
  const env = await s.call('delete_file', { path: 'doomed.txt' }, {
    onprogress: (p) => { messages.push(String(p.message)); sawProgress(); },
    resetTimeoutOnProgress: true,
  });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  assert.equal(s.asked.length, 1);
  assert.ok(messages.some((m) => /waiting for the user to approve/.test(m)), messages.join('|'));
  assert.equal(existsSync(`${dir}/doomed.txt`), false);
  await s.close();
  cleanup();
});
