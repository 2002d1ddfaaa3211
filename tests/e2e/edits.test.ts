// The edit chain end to end over stdio with the real SDK client: read_file → edit_file →
// multi_edit → apply_patch → write_file → delete_file, every envelope (errors included)
// checked against the tool's outputSchema; refusals for paths that lead outside.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { connectStdio, tempDir } from '../../src/testing/helpers.js';

type Env = { ok: boolean; status: string; error: { code: string; message: string; details?: Record<string, any> } | null; data: any; artifacts: { files_changed: string[] } };

const ajv = new AjvJsonSchemaValidator();
let ws: { dir: string; cleanup: () => void };
let out: { dir: string; cleanup: () => void };
let client: Client;
let close: () => Promise<void>;
let tools: Tool[];

before(async () => {
  ws = tempDir('tg-edits-');
  out = tempDir('tg-edits-out-');
  const policy = path.join(out.dir, 'policy.yaml');
  writeFileSync(policy, 'rules:\n  - tool: "*"\n    decision: allow\n');
  writeFileSync(path.join(out.dir, 'canary.txt'), 'CANARY\n');
  ({ client, close } = await connectStdio(['--workspace', ws.dir, '--policy', policy]));
  tools = (await client.listTools()).tools;
});
after(async () => {
  await close?.();
  ws?.cleanup();
  out?.cleanup();
});

async function call(name: string, args: Record<string, unknown>): Promise<Env> {
  const r = await client.callTool({ name, arguments: args });
  const env = r.structuredContent as unknown as Env;
  const tool = tools.find((t) => t.name === name)!;
  const v = ajv.getValidator(tool.outputSchema as never)(env);
  assert.ok(v.valid, `${name} envelope does not match its outputSchema: ${v.errorMessage}`);
  assert.equal(r.isError === true, !env.ok);
  return env;
}

test('the edit tools are listed with their risk and permissions', () => {
  const meta = Object.fromEntries(tools.map((t) => [t.name, t._meta as Record<string, unknown>]));
  assert.deepEqual(['write_file', 'edit_file', 'multi_edit', 'apply_patch', 'delete_file'].map((n) => meta[n]?.['toolgate/risk']), ['medium', 'medium', 'medium', 'medium', 'high']);
  assert.deepEqual(meta.delete_file?.['toolgate/permissions'], ['fs.delete']);
  for (const n of ['write_file', 'edit_file', 'multi_edit', 'apply_patch', 'delete_file']) {
    const t = tools.find((x) => x.name === n)!;
    assert.equal(t.annotations?.readOnlyHint, false);
    assert.equal(t.annotations?.destructiveHint, true);
    assert.equal((t.inputSchema as { additionalProperties?: boolean }).additionalProperties, false);
  }
});

test('read → edit → multi_edit → patch → write → delete, over stdio', async () => {
  writeFileSync(path.join(ws.dir, 'app.ts'), 'const a = 1;\nconst b = 2;\nexport { a, b };\n');
  let env = await call('edit_file', { path: 'app.ts', old_string: 'const a = 1;', new_string: 'const a = 10;' });
  assert.equal(env.error?.code, 'ReadRequired');
  assert.equal((await call('read_file', { path: 'app.ts' })).ok, true);
  env = await call('edit_file', { path: 'app.ts', old_string: 'const a = 1;', new_string: 'const a = 10;' });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  assert.match(env.data.diff, /-const a = 1;\n\+const a = 10;/);
  assert.deepEqual(env.artifacts.files_changed, ['app.ts']);
  env = await call('edit_file', { path: 'app.ts', old_string: 'const  b = 2;', new_string: 'x' });
  assert.equal(env.error?.code, 'NoMatch');
  assert.equal(env.error?.details?.closest?.kind, 'whitespace');
  env = await call('multi_edit', { path: 'app.ts', edits: [{ old_string: 'const b = 2;', new_string: 'const b = 20;' }, { old_string: 'export { a, b };', new_string: 'export { a, b, c };\nconst c = 3;' }] });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  env = await call('apply_patch', { patch: '--- a/app.ts\n+++ b/app.ts\n@@ -1,2 +1,2 @@\n-const a = 10;\n+const a = 100;\n const b = 20;\n--- /dev/null\n+++ b/lib/util.ts\n@@ -0,0 +1 @@\n+export const util = 1;\n' });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  assert.equal(readFileSync(path.join(ws.dir, 'app.ts'), 'utf8'), 'const a = 100;\nconst b = 20;\nexport { a, b, c };\nconst c = 3;\n');
  assert.equal(readFileSync(path.join(ws.dir, 'lib/util.ts'), 'utf8'), 'export const util = 1;\n');
  // After the patch the session knows the new content: edit again without a read.
  env = await call('edit_file', { path: 'lib/util.ts', old_string: '= 1', new_string: '= 2' });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  env = await call('write_file', { path: 'notes/todo.md', content: '- done\n', create_dirs: true, dry_run: true });
  assert.equal(env.ok, true);
  assert.equal(existsSync(path.join(ws.dir, 'notes')), false);
  env = await call('delete_file', { path: 'lib', recursive: true });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  assert.equal(existsSync(path.join(ws.dir, 'lib')), false);
});

test('a 5 MB file takes a one-line edit', async () => {
  const big = Array.from({ length: 100_000 }, (_, k) => `row ${k} ${'z'.repeat(40)}`).join('\n') + '\n';
  writeFileSync(path.join(ws.dir, 'big.txt'), big);
  assert.equal((await call('read_file', { path: 'big.txt', limit: 1 })).ok, true);
  const env = await call('edit_file', { path: 'big.txt', old_string: 'row 54321 ', new_string: 'ROW 54321 ' });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  assert.match(env.data.diff, /@@ -54319,7 \+54319,7 @@/);
  assert.equal(readFileSync(path.join(ws.dir, 'big.txt'), 'utf8'), big.replace('row 54321 ', 'ROW 54321 '));
});

test('over the wire too, edits that lead outside or into protected paths are refused', async () => {
  symlinkSync(path.join(out.dir, 'canary.txt'), path.join(ws.dir, 'evil-link'));
  symlinkSync(out.dir, path.join(ws.dir, 'evil-dir'));
  mkdirSync(path.join(ws.dir, '.git', 'hooks'), { recursive: true });
  const attempts: Array<[string, Record<string, unknown>]> = [
    ['write_file', { path: 'evil-link', content: 'PWNED', expected_sha256: '0'.repeat(64) }],
    ['write_file', { path: 'evil-dir/new.txt', content: 'PWNED' }],
    ['write_file', { path: '../x.txt', content: 'PWNED' }],
    ['write_file', { path: '.git/hooks/pre-commit', content: 'PWNED' }],
    ['write_file', { path: '.env', content: 'PWNED' }],
    ['edit_file', { path: 'evil-dir/canary.txt', old_string: 'CANARY', new_string: 'PWNED' }],
    ['apply_patch', { patch: '--- a/evil-link\n+++ b/evil-link\n@@ -1 +1 @@\n-CANARY\n+PWNED\n' }],
    ['delete_file', { path: 'evil-dir/canary.txt' }],
  ];
  for (const [name, args] of attempts) {
    const env = await call(name, args);
    assert.equal(env.ok, false, `${name} ${JSON.stringify(args)}`);
    assert.ok(['PathTraversalBlocked', 'PathDenied'].includes(env.error!.code), `${name}: ${env.error!.code}`);
  }
  assert.equal(readFileSync(path.join(out.dir, 'canary.txt'), 'utf8'), 'CANARY\n');
  assert.equal(existsSync(path.join(ws.dir, '.git', 'hooks', 'pre-commit')), false);
});
