import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Harness, tempDir } from '../testing/helpers.js';

// Tool versions, old argument names and tool-name aliases (issue 5, "Resilience").

test('a call asking for another major version gets VersionMismatch naming both', async () => {
  const { dir, cleanup } = tempDir();
  const h = new Harness([dir]);
  const env = await h.call('display', { content: 'x' }, { meta: { 'toolgate/version': '2.0.0' } });
  assert.equal(env.error?.code, 'VersionMismatch');
  assert.match(env.error!.message, /1\.0\.0/);
  assert.match(env.error!.message, /2\.0\.0/);
  assert.deepEqual(env.error!.details, { requested: '2.0.0', available: '1.0.0' });
  h.close();
  cleanup();
});

test('the same major (any minor/patch) or no version runs', async () => {
  const { dir, cleanup } = tempDir();
  const h = new Harness([dir]);
  for (const v of ['1.0.0', '1.9.3', undefined]) {
    const env = await h.call('display', { content: 'x' }, { meta: v ? { 'toolgate/version': v } : {} });
    assert.equal(env.ok, true, String(v));
  }
  h.close();
  cleanup();
});

test('an old argument name (file_path → path) is accepted with a warning', async (t) => {
  const { dir, cleanup } = tempDir();
  writeFileSync(path.join(dir, 'a.txt'), 'alpha\n');
  const h = new Harness([dir]);
  const tool = h.rt.tools.get('read_file');
  if (!tool?.aliases || !('file_path' in tool.aliases)) { t.skip('read_file has no file_path alias in this build'); h.close(); cleanup(); return; }
  const env = await h.call('read_file', { file_path: 'a.txt' });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  assert.ok(env.warnings?.some((w) => /file_path/.test(w) && /path/.test(w)), JSON.stringify(env.warnings));
  // Both names at once: the new one wins and the old one is an unknown key.
  const both = await h.call('read_file', { file_path: 'a.txt', path: 'a.txt' });
  assert.equal(both.error?.code, 'InvalidArguments');
  h.close();
  cleanup();
});

test('tool names in the wrong case or known aliases resolve, with a note', async () => {
  const { dir, cleanup } = tempDir();
  writeFileSync(path.join(dir, 'a.txt'), 'alpha\n');
  const h = new Harness([dir]);
  const cases: Array<[string, string]> = [['READ_FILE', 'read_file'], ['Read', 'read_file'], ['Display', 'display'], ['read-file', 'read_file'], ['LS', 'list_dir']];
  for (const [asked, real] of cases) {
    if (!h.rt.tools.has(real)) continue;
    const args = real === 'display' ? { content: 'x' } : real === 'list_dir' ? { path: '.' } : { path: 'a.txt' };
    const env = await h.call(asked, args);
    assert.equal(env.tool, real, asked);
    assert.ok(env.warnings?.some((w) => w.includes(`"${asked}"`) && w.includes(real)), `${asked}: ${JSON.stringify(env.warnings)}`);
  }
  for (const [asked, real] of [['Bash', 'run_command'], ['Grep', 'grep'], ['WebFetch', 'fetch_url']] as const) {
    if (!h.rt.tools.has(real)) continue;
    const env = await h.call(asked, {});
    assert.equal(env.tool, real, asked); // resolved (the empty args then fail validation: that is fine)
  }
  h.close();
  cleanup();
});

test('an unknown tool is ToolNotFound listing the close names', async () => {
  const { dir, cleanup } = tempDir();
  const h = new Harness([dir]);
  const env = await h.call('read_fil', { path: 'x' });
  assert.equal(env.error?.code, 'ToolNotFound');
  assert.ok((env.error!.details?.suggestions as string[]).includes('read_file'));
  assert.match(env.error!.message, /read_file/);
  const far = await h.call('launch_missiles', {});
  assert.equal(far.error?.code, 'ToolNotFound');
  assert.deepEqual(far.error!.details?.suggestions, []);
  const fetchTypo = await h.call('fetch_ur', {});
  assert.ok((fetchTypo.error!.details?.suggestions as string[]).includes('fetch_url'));
  h.close();
  cleanup();
});
