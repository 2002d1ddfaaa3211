// The bundle carries the built-in tools' JSON Schemas prebuilt (scripts/build.mjs, first pass):
// what tools/list shows must equal what zod derives from the tools' schemas now.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { computeJsonSchemas } from '../../src/core/define-tool.js';
import { prebuiltSchemas, schemaKey } from '../../src/core/tool-schemas.js';
import { allTools } from '../../src/tools/index.js';
import { connectStdio, REPO_ROOT, tempDir } from '../../src/testing/helpers.js';

test('from source there are no prebuilt schemas: defineTool derives them', () => {
  assert.equal(prebuiltSchemas(schemaKey('read_file', '1.0.0')), undefined);
});

test('every built-in tool\'s schemas are in the bundle, keyed by name@version', () => {
  const bundle = readFileSync(path.join(REPO_ROOT, 'dist', 'cli.js'), 'utf8');
  for (const t of allTools()) assert.ok(bundle.includes(JSON.stringify(schemaKey(t.name, t.version))), `${t.name}@${t.version} is not prebuilt`);
});

test('tools/list of the built server shows exactly the schemas zod gives', async (t) => {
  const ws = tempDir('tg-schemas-');
  const state = tempDir('tg-schemas-state-');
  t.after(() => { ws.cleanup(); state.cleanup(); });
  const s = await connectStdio(['--workspace', ws.dir, '--console', 'off'], {
    env: { XDG_STATE_HOME: path.join(state.dir, 's'), XDG_RUNTIME_DIR: path.join(state.dir, 'r') },
  });
  t.after(() => s.close().catch(() => {}));
  const listed = new Map((await s.client.listTools()).tools.map((x) => [x.name, x]));
  let compared = 0;
  for (const tool of allTools()) {
    const got = listed.get(tool.name);
    if (!got) continue; // refused here (e.g. a missing sandbox): not listed
    const want = JSON.parse(JSON.stringify(computeJsonSchemas(tool.input, tool.envelope)));
    assert.deepEqual(got.inputSchema, want.input, `${tool.name} inputSchema`);
    assert.deepEqual(got.outputSchema, want.output, `${tool.name} outputSchema`);
    compared++;
  }
  for (const name of ['read_file', 'edit_file', 'list_dir', 'grep']) assert.ok(listed.has(name), `${name} not listed`);
  assert.ok(compared >= 8, `only ${compared} tools compared`);
});
