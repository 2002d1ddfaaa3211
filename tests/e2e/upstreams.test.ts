// Upstream MCP servers nobody here wrote (@modelcontextprotocol/server-everything and
// server-filesystem) mounted behind the BUILT server (SPEC §12): listing, calls through the
// gate, deny and ask rules, elicitation forwarded from the upstream, progress, cancellation,
// sampling declined, and every call in the audit (which verifies).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema, type ElicitRequest, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { CLI, connectStdio, tempDir } from '../../src/testing/helpers.js';

const require = createRequire(import.meta.url);
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const FILESYSTEM = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');

type Env = { ok: boolean; status: string; error: { code: string; message: string; details?: Record<string, any> } | null; data: any; text: string; artifacts: any };

function setupDirs() {
  const t = tempDir('tg-up-');
  const ws = path.join(t.dir, 'ws');
  const state = path.join(t.dir, 'state');
  const run = path.join(t.dir, 'run');
  for (const d of [ws, state, run]) spawnSync('mkdir', ['-p', d]);
  writeFileSync(path.join(ws, 'hello.txt'), 'hello from the workspace\n');
  return { ...t, ws, env: { XDG_STATE_HOME: state, XDG_RUNTIME_DIR: run } };
}

async function start(d: ReturnType<typeof setupDirs>, policy: string, opts: { elicit?: (p: any) => ElicitResult; caps?: Record<string, unknown> } = {}) {
  const file = path.join(d.dir, 'policy.yaml');
  writeFileSync(file, policy);
  const caps = opts.caps ?? (opts.elicit ? { elicitation: { form: {} } } : {});
  const conn = await connectStdio(['--workspace', d.ws, '--policy', file], { capabilities: caps, env: d.env });
  const asked: ElicitRequest['params'][] = [];
  if (opts.elicit) {
    const answer = opts.elicit;
    conn.client.setRequestHandler(ElicitRequestSchema, async (req) => { asked.push(req.params); return answer(req.params); });
  }
  const call = async (name: string, args: Record<string, unknown>, o: Parameters<Client['callTool']>[2] = {}) => {
    const r = await conn.client.callTool({ name, arguments: args }, undefined, o);
    return { env: r.structuredContent as unknown as Env, content: r.content as Array<{ type: string; text?: string; mimeType?: string }> };
  };
  return { ...conn, call, asked, policyFile: file };
}

const upstreams = (ws: string) => `
upstreams:
  everything:
    command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(EVERYTHING)}, "stdio"]
  files:
    command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(FILESYSTEM)}, ${JSON.stringify(ws)}]
`;

function audit(ws: string): Array<Record<string, any>> {
  return readFileSync(path.join(ws, '.toolgate', 'audit.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
}

async function waitFor<T>(fn: () => Promise<T | undefined> | T | undefined, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('server-everything and server-filesystem: listed with prefixed names, risk from annotations, called through the gate, audited', async () => {
  const d = setupDirs();
  // A short approval wait: a client without elicitation waits in the inbox, and nobody answers here.
  const s = await start(d, `${upstreams(d.ws)}
approvals: { timeout_ms: 1000 }
rules:
  - { tool: "everything__*", decision: allow }
`);
  const list = await waitFor(async () => {
    const l = (await s.client.listTools()).tools;
    return l.some((t) => t.name === 'files__list_directory') && l.some((t) => t.name === 'everything__echo') ? l : undefined;
  });
  const echo = list.find((t) => t.name === 'everything__echo')!;
  assert.match(echo.description!, /^\[upstream MCP server "everything"\] /);
  assert.equal(echo._meta?.['toolgate/risk'], 'low', 'readOnlyHint → low');
  assert.deepEqual(echo._meta?.['toolgate/permissions'], ['upstream']);
  assert.equal((echo.inputSchema as any).additionalProperties, false);
  assert.deepEqual((echo.inputSchema as any).required, ['message']);
  assert.equal(echo.annotations?.readOnlyHint, true);
  assert.ok(echo.outputSchema, 'the envelope is the output schema');
  assert.equal(list.find((t) => t.name === 'files__write_file')?._meta?.['toolgate/risk'], 'high', 'destructiveHint → high');
  assert.equal(list.find((t) => t.name === 'files__create_directory')?._meta?.['toolgate/risk'], 'medium');
  assert.ok(list.some((t) => t.name === 'read_file'), 'the built-in tools are still there');

  const r = await s.call('everything__echo', { message: 'hi there' });
  assert.equal(r.env.ok, true, JSON.stringify(r.env.error));
  assert.equal(r.env.data.content, 'Echo: hi there');
  assert.match(r.content[0]!.text!, /Echo: hi there/, 'the upstream text is in the text block');

  const structured = await s.call('everything__get-structured-content', { location: 'Chicago' });
  assert.equal(structured.env.ok, true, JSON.stringify(structured.env.error));
  assert.equal(typeof structured.env.data.temperature, 'number', 'structuredContent is data');

  const img = await s.call('everything__get-tiny-image', {});
  assert.equal(img.env.ok, true);
  assert.ok(img.content.some((c) => c.type === 'image' && c.mimeType === 'image/png'), 'the image block is passed on');

  const bad = await s.call('everything__echo', { message: 'x', extra: 1 });
  assert.equal(bad.env.error?.code, 'InvalidArguments', 'unknown keys are refused against the upstream schema');
  const wrongType = await s.call('everything__get-sum', { a: 'one', b: 2 });
  assert.equal(wrongType.env.error?.code, 'InvalidArguments');

  // files__* has no rule: a low-risk tool runs by default, a destructive one asks (nobody answers → refused).
  const ls = await s.call('files__list_directory', { path: d.ws });
  assert.equal(ls.env.ok, true, JSON.stringify(ls.env.error));
  assert.match(ls.env.data.content, /hello\.txt/);
  const w = await s.call('files__write_file', { path: path.join(d.ws, 'x.txt'), content: 'nope' });
  assert.equal(w.env.error?.code, 'ApprovalRequired');
  await s.close();

  const recs = audit(d.ws);
  const byTool = (n: string) => recs.filter((x) => x.tool === n);
  assert.equal(byTool('everything__echo').length, 2);
  assert.deepEqual(byTool('everything__echo').map((x) => [x.decision, x.ok, x.error_code]), [['allow', true, null], ['deny', false, 'InvalidArguments']]);
  assert.equal(byTool('files__write_file')[0]!.decision, 'ask');
  assert.equal(byTool('files__list_directory')[0]!.risk, 'low');
  const v = spawnSync(process.execPath, [CLI, 'audit', 'verify', path.join(d.ws, '.toolgate', 'audit.jsonl')], { encoding: 'utf8' });
  assert.equal(v.status, 0, v.stdout + v.stderr);
  d.cleanup();
});

test('a deny rule on everything__* hides and refuses every tool of that upstream; the other upstream is untouched', async () => {
  const d = setupDirs();
  const s = await start(d, `${upstreams(d.ws)}
rules:
  - { tool: "everything__*", decision: deny }
`);
  const list = await waitFor(async () => {
    const l = (await s.client.listTools()).tools;
    return l.some((t) => t.name === 'files__list_directory') ? l : undefined;
  });
  await new Promise((r) => setTimeout(r, 500));
  const names = (await s.client.listTools()).tools.map((t) => t.name);
  assert.ok(!names.some((n) => n.startsWith('everything__')), names.join(','));
  assert.ok(list.length > 10);
  const r = await s.call('everything__echo', { message: 'hi' });
  assert.equal(r.env.error?.code, 'ToolNotAllowed');
  assert.equal((await s.call('files__list_allowed_directories', {})).env.ok, true);
  await s.close();
  const rec = audit(d.ws).find((x) => x.tool === 'everything__echo')!;
  assert.equal(rec.decision, 'deny');
  assert.equal(rec.error_code, 'ToolNotAllowed');
  d.cleanup();
});

test('an ask rule goes through the approval form; a "deny" answer does not call the upstream', async () => {
  const d = setupDirs();
  let answer = 'allow_once';
  const s = await start(d, `${upstreams(d.ws)}
rules:
  - { tool: "everything__echo", decision: ask }
`, { elicit: () => ({ action: 'accept', content: { decision: answer } }) });
  await waitFor(async () => ((await s.client.listTools()).tools.some((t) => t.name === 'everything__echo') ? true : undefined));
  const ok = await s.call('everything__echo', { message: 'approved' });
  assert.equal(ok.env.ok, true, JSON.stringify(ok.env.error));
  assert.equal(s.asked.length, 1);
  assert.match(s.asked[0]!.message, /everything__echo/);
  answer = 'deny';
  const no = await s.call('everything__echo', { message: 'refused' });
  assert.equal(no.env.error?.code, 'ApprovalDenied');
  await s.close();
  const recs = audit(d.ws).filter((x) => x.tool === 'everything__echo');
  assert.deepEqual(recs.map((x) => [x.decision, x.approval?.granted]), [['ask', true], ['ask', false]]);
  d.cleanup();
});

test("the upstream's own elicitation reaches a client that declared it, shown as coming from the upstream; declined for one that did not", async () => {
  const d = setupDirs();
  const policy = `${upstreams(d.ws)}
rules:
  - { tool: "everything__*", decision: allow }
`;
  const s = await start(d, policy, {
    elicit: (p) => {
      const schema = (p as any).requestedSchema;
      const content: Record<string, unknown> = {};
      for (const k of schema?.required ?? []) {
        const t = schema.properties[k];
        content[k] = t.enum ? t.enum[0] : t.oneOf ? t.oneOf[0].const : t.type === 'array' ? [t.items?.enum?.[0] ?? t.items?.anyOf?.[0]?.const] : t.type === 'boolean' ? true
          : t.type === 'number' || t.type === 'integer' ? (t.minimum ?? 1) : t.format === 'email' ? 'a@example.com' : t.format === 'date' ? '2026-01-01' : t.format === 'uri' ? 'https://example.com' : 'x';
      }
      return { action: 'accept', content } as ElicitResult;
    },
  });
  await waitFor(async () => ((await s.client.listTools()).tools.some((t) => t.name === 'everything__trigger-elicitation-request') ? true : undefined));
  const r = await s.call('everything__trigger-elicitation-request', {});
  assert.equal(r.env.ok, true, JSON.stringify(r.env.error));
  assert.equal(s.asked.length, 1);
  assert.match(s.asked[0]!.message, /^\[upstream MCP server "everything" asks\] /);
  assert.match(JSON.stringify(r.env.data), /accept/i);
  await s.close();

  const s2 = await start(d, policy);
  await waitFor(async () => ((await s2.client.listTools()).tools.some((t) => t.name === 'everything__trigger-elicitation-request') ? true : undefined));
  const r2 = await s2.call('everything__trigger-elicitation-request', {});
  assert.match(JSON.stringify(r2.env), /declin/i, 'without elicitation the upstream is told "decline"');
  await s2.close();
  d.cleanup();
});

test('progress from the upstream reaches the client; a cancelled call is cancelled upstream and audited', async () => {
  const d = setupDirs();
  const s = await start(d, `${upstreams(d.ws)}
rules:
  - { tool: "everything__*", decision: allow }
`);
  await waitFor(async () => ((await s.client.listTools()).tools.some((t) => t.name === 'everything__trigger-long-running-operation') ? true : undefined));
  const seen: number[] = [];
  const r = await s.call('everything__trigger-long-running-operation', { duration: 1, steps: 4 }, { onprogress: (p) => seen.push(p.progress) });
  assert.equal(r.env.ok, true, JSON.stringify(r.env.error));
  assert.ok(seen.length >= 3, `progress notifications: ${seen}`);

  const ctrl = new AbortController();
  const started = Date.now();
  const p = s.call('everything__trigger-long-running-operation', { duration: 20, steps: 20 }, { signal: ctrl.signal });
  setTimeout(() => ctrl.abort(), 400);
  await assert.rejects(p);
  assert.ok(Date.now() - started < 5000);
  await waitFor(() => {
    try { return audit(d.ws).some((x) => x.tool === 'everything__trigger-long-running-operation' && x.error_code === 'Cancelled') ? true : undefined; } catch { return undefined; }
  });
  await s.close();
  d.cleanup();
});

test('sampling requests from an upstream are declined unless the policy allows them for it', async () => {
  const d = setupDirs();
  const s = await start(d, `${upstreams(d.ws)}
rules:
  - { tool: "everything__*", decision: allow }
`, { caps: { sampling: {} } });
  let sampled = 0;
  const { CreateMessageRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
  s.client.setRequestHandler(CreateMessageRequestSchema, async () => { sampled++; return { role: 'assistant', content: { type: 'text', text: 'sampled!' }, model: 'm' }; });
  const names = await waitFor(async () => {
    const l = (await s.client.listTools()).tools.map((t) => t.name);
    return l.includes('everything__echo') ? l : undefined;
  });
  // toolgate does not declare sampling to this upstream, so server-everything does not even offer the tool.
  assert.ok(!names.includes('everything__trigger-sampling-request'), names.join(','));
  assert.equal(sampled, 0);
  await s.close();

  const s2 = await start(d, `${upstreams(d.ws).replace('"stdio"]', '"stdio"]\n    sampling: true')}
rules:
  - { tool: "everything__*", decision: allow }
`, { caps: { sampling: {} } });
  s2.client.setRequestHandler(CreateMessageRequestSchema, async () => { sampled++; return { role: 'assistant', content: { type: 'text', text: 'sampled!' }, model: 'm' }; });
  await waitFor(async () => ((await s2.client.listTools()).tools.some((t) => t.name === 'everything__echo') ? true : undefined));
  // The tool appears only now, on an upstream already pinned: it is new, hidden and refused until trusted.
  assert.ok(!(await s2.client.listTools()).tools.some((t) => t.name === 'everything__trigger-sampling-request'));
  const refused = await s2.call('everything__trigger-sampling-request', { prompt: 'hi', maxTokens: 5 });
  assert.equal(refused.env.error?.code, 'ToolNotAllowed');
  assert.match(refused.env.error!.message, /toolgate upstream trust everything/);
  const trust = spawnSync(process.execPath, [CLI, 'upstream', 'trust', 'everything', 'trigger-sampling-request', '--policy', s2.policyFile], { encoding: 'utf8', env: { ...process.env, ...d.env } });
  assert.equal(trust.status, 0, trust.stderr);
  assert.match(trust.stdout, /trusted everything__trigger-sampling-request/);
  await waitFor(async () => ((await s2.client.listTools()).tools.some((t) => t.name === 'everything__trigger-sampling-request') ? true : undefined));
  const r2 = await s2.call('everything__trigger-sampling-request', { prompt: 'hi', maxTokens: 5 });
  assert.equal(r2.env.ok, true, JSON.stringify(r2.env.error));
  assert.equal(sampled, 1);
  assert.match(JSON.stringify(r2.env.data), /sampled!/);
  await s2.close();
  d.cleanup();
});
