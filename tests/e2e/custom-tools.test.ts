// Custom tools (policy `tools:`) in the BUILT server: listed like a built-in, run without a shell
// inside the OS sandbox when bubblewrap is there, audited with the command; and an upstream's
// stderr lands in toolgate's log (stderr), never on the protocol channel.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { detectBwrap } from '../../src/exec/sandbox.js';
import { connectStdio, REPO_ROOT, tempDir } from '../../src/testing/helpers.js';

// The server's own probe: honours TOOLGATE_SANDBOX=none (CI's second pass) exactly as the server does.
const hasBwrap = (await detectBwrap()) !== null;

test('a custom tool: listed with _meta and annotations from its risk, argv words kept whole, sandboxed, audited', async (tc) => {
  const { dir, cleanup } = tempDir('tg-custom-e2e-');
  const ws = path.join(dir, 'ws');
  mkdirSync(ws);
  const policy = path.join(dir, 'policy.yaml');
  writeFileSync(policy, `
tools:
  count_words:
    description: "Count the words of a phrase."
    argv: ["sh", "-c", "echo $# words: \\"$*\\"", "count_words", "{phrase}", "{more}"]
    args:
      phrase: { type: string, maxLength: 100 }
      more: { type: string, default: "" }
    risk: low
rules:
  - { tool: count_words, decision: allow }
`);
  const s = await connectStdio(['--workspace', ws, '--policy', policy], { env: { XDG_STATE_HOME: path.join(dir, 'state'), XDG_RUNTIME_DIR: path.join(dir, 'run') } });
  tc.after(() => s.close().catch(() => {}));
  const t = (await s.client.listTools()).tools.find((x) => x.name === 'count_words')!;
  assert.ok(t);
  assert.equal(t._meta?.['toolgate/risk'], 'low');
  assert.deepEqual(t._meta?.['toolgate/permissions'], ['proc.exec']);
  assert.equal(t.annotations?.readOnlyHint, true);
  const r = await s.client.callTool({ name: 'count_words', arguments: { phrase: 'a b; rm -rf / $(id)' } });
  const env = r.structuredContent as any;
  assert.equal(env.ok, true, JSON.stringify(env.error));
  assert.equal(env.data.output, '1 words: a b; rm -rf / $(id)\n', 'one argument, nothing interpreted');
  assert.equal(env.data.sandbox, hasBwrap ? 'bwrap' : 'none');
  await s.close();
  const rec = readFileSync(path.join(ws, '.toolgate', 'audit.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l)).find((x) => x.tool === 'count_words');
  assert.equal(rec.decision, 'allow');
  assert.equal(rec.commands_run.length, 1);
  assert.match(rec.commands_run[0], /^sh -c /);
  cleanup();
});

test("an upstream's stderr goes to toolgate's log on stderr; stdout stays the protocol channel", async (tc) => {
  const { dir, cleanup } = tempDir('tg-up-stderr-');
  const ws = path.join(dir, 'ws');
  mkdirSync(ws);
  const policy = path.join(dir, 'policy.yaml');
  writeFileSync(policy, `upstreams:\n  fx:\n    command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(path.join(REPO_ROOT, 'tests', 'fixtures', 'upstream-fixture.mjs'))}]\n`);
  const s = await connectStdio(['--workspace', ws, '--policy', policy], { env: { TOOLGATE_LOG_LEVEL: 'info', XDG_STATE_HOME: path.join(dir, 'state'), XDG_RUNTIME_DIR: path.join(dir, 'run') } });
  tc.after(() => s.close().catch(() => {}));
  let err = '';
  s.transport.stderr?.on('data', (c: Buffer) => { err += c.toString(); });
  const deadline = Date.now() + 20_000;
  while (!(await s.client.listTools()).tools.some((t) => t.name === 'fx__greet') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const r = await s.client.callTool({ name: 'fx__greet', arguments: { name: 'x' } });
  assert.equal((r.structuredContent as any).ok, true, 'the protocol channel was not disturbed');
  await s.close();
  assert.match(err, /"upstream":"fx".*"stderr":"fixture: ready"/);
  cleanup();
});
