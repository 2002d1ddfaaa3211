// The text block a model reads is bounded by the output limits (SPEC §3: 2000 lines or 50 KB by
// default), even when a tool returns more in structuredContent: a glob of 10,000 paths shows what
// fits, says where the rest are, and saves the full list (storage_ref).
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { filesWithin, renderBody } from '../../src/core/render.js';
import { connectStdio, tempDir } from '../../src/testing/helpers.js';

test('filesWithin keeps what fits the byte and line limits, and names the rest', () => {
  const files = Array.from({ length: 50 }, (_, i) => `dir/file-${String(i).padStart(3, '0')}.h`);
  assert.equal(filesWithin(files, { output_bytes: 10_000, output_lines: 100 }), files, 'all fit: the same list');
  const byLines = filesWithin(files, { output_bytes: 10_000, output_lines: 11 });
  assert.equal(byLines.length, 11);
  assert.deepEqual(byLines.slice(0, 10), files.slice(0, 10));
  assert.match(byLines[10]!, /^… 40 more of these 50 paths .*structuredContent\.data\.files.*storage_ref/);
  // 14 bytes a path + a newline; the closing line (161 bytes) is kept room for: 300 bytes hold 9 paths and it.
  const byBytes = filesWithin(files, { output_bytes: 300, output_lines: 2000 });
  assert.deepEqual(byBytes.slice(0, -1), files.slice(0, 9));
  assert.match(byBytes.at(-1)!, /^… 41 more/);
  assert.ok(Buffer.byteLength(byBytes.join('\n')) <= 300);
  // Multi-byte names are counted in bytes, not characters: 61 bytes a line.
  const wide = ['é'.repeat(30), 'é'.repeat(30)];
  const closing = Buffer.byteLength(filesWithin(wide, { output_bytes: 100, output_lines: 2000 }).at(-1)!);
  const one = filesWithin(wide, { output_bytes: closing + 61 + 60, output_lines: 2000 });
  assert.deepEqual(one.slice(0, -1), wide.slice(0, 1), 'the second 61-byte line does not fit');
  assert.ok(Buffer.byteLength(one.join('\n')) <= closing + 121);
  assert.equal(filesWithin(wide, { output_bytes: 121, output_lines: 2000 }), wide, 'both fit in 121 bytes');
  const body = renderBody({ files }, { output_bytes: 300, output_lines: 2000 });
  assert.equal(body.split('\n').length, 10);
});

test('a glob returning 3,000 paths: all in structuredContent, the text block within the limits, the full list saved', async (t) => {
  const tmp = tempDir('tg-textlim-');
  t.after(tmp.cleanup);
  const ws = path.join(tmp.dir, 'ws');
  for (let d = 0; d < 30; d++) {
    mkdirSync(path.join(ws, `d${d}`), { recursive: true });
    for (let f = 0; f < 100; f++) writeFileSync(path.join(ws, `d${d}`, `f${f}.h`), '');
  }
  const s = await connectStdio(['--workspace', ws, '--state-dir', path.join(tmp.dir, 'state')]);
  t.after(() => s.close().catch(() => {}));
  const r = await s.client.callTool({ name: 'glob', arguments: { pattern: '**/*.h', limit: 10_000 } });
  assert.equal(r.isError, false, JSON.stringify(r).slice(0, 300));
  const env = r.structuredContent as { data: { files: string[]; total: number }; artifacts: { storage_ref?: string; sha256?: string } };
  assert.equal(env.data.total, 3000);
  assert.equal(env.data.files.length, 3000, 'structuredContent holds every path asked for');
  const text = (r.content as Array<{ text: string }>)[0]!.text;
  const lines = text.split('\n');
  assert.ok(Buffer.byteLength(text) < 51_200 + 1000, `text block ${Buffer.byteLength(text)} bytes`);
  assert.ok(lines.length <= 2000 + 10, `text block ${lines.length} lines`);
  assert.ok(lines.includes(env.data.files[0]!), 'the first paths are shown');
  assert.ok(!lines.includes(env.data.files[2999]!), 'the last path is not');
  assert.match(text, /more of these 3000 paths are not shown here/);
  assert.ok(env.artifacts.storage_ref, 'the full list is saved');
  // The state dir lies outside the workspace here: storage_ref is absolute.
  assert.ok(env.artifacts.storage_ref!.startsWith(path.join(tmp.dir, 'state')), env.artifacts.storage_ref);
  const saved = readFileSync(env.artifacts.storage_ref!, 'utf8');
  assert.equal(saved.trim().split('\n').length, 3000);
  assert.match(text, new RegExp(`full output: .*${path.basename(env.artifacts.storage_ref!)}`));

  // A glob under the limits is shown whole, with nothing saved.
  const small = await s.client.callTool({ name: 'glob', arguments: { pattern: 'd1/*.h' } });
  const senv = small.structuredContent as { data: { files: string[] }; artifacts: { storage_ref?: string } };
  assert.equal(senv.data.files.length, 100);
  assert.equal(senv.artifacts.storage_ref, undefined);
  const stext = (small.content as Array<{ text: string }>)[0]!.text;
  for (const f of senv.data.files) assert.ok(stext.includes(`${f}\n`) || stext.endsWith(f), f);
});

test('grep in content and count mode: the whole text block, note and storage_ref line included, stays within the policy limits', async (t) => {
  const tmp = tempDir('tg-textlim-grep-');
  t.after(tmp.cleanup);
  const ws = path.join(tmp.dir, 'ws');
  mkdirSync(ws);
  for (let f = 0; f < 20; f++) writeFileSync(path.join(ws, `f${f}.txt`), Array.from({ length: 50 }, (_, i) => `line ${i} needle ${'x'.repeat(i % 30)}`).join('\n') + '\n');
  const policy = path.join(tmp.dir, 'policy.yaml');
  writeFileSync(policy, 'limits: { output_bytes: 3000, output_lines: 40 }\n');
  const s = await connectStdio(['--workspace', ws, '--policy', policy, '--state-dir', path.join(tmp.dir, 'state')]);
  t.after(() => s.close().catch(() => {}));
  for (const output_mode of ['content', 'count', 'files_with_matches']) {
    const r = await s.client.callTool({ name: 'grep', arguments: { pattern: 'needle', output_mode, head_limit: 1000 } });
    assert.equal(r.isError, false, JSON.stringify(r).slice(0, 300));
    const text = (r.content as Array<{ text: string }>)[0]!.text;
    assert.ok(Buffer.byteLength(text) <= 3000, `${output_mode}: ${Buffer.byteLength(text)} bytes`);
    assert.ok(text.split('\n').length <= 40, `${output_mode}: ${text.split('\n').length} lines`);
    if (output_mode === 'content') assert.match(text, /full output: /, 'the cut is saved');
  }
});
