// Agents prompted with other tool schemas (the seeds': Cursor-style glob_file_search,
// run_terminal_cmd, …) are understood: their tool and argument names are taken as aliases
// with a warning in the envelope, and read_file's start_line/end_line map to offset/limit.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';

const allowAll = () => policyFromYaml('sandbox: { backend: none }\nrules:\n  - tool: "*"\n    decision: allow\n');

function setup() {
  const { dir, cleanup } = tempDir('tg-seed-');
  mkdirSync(path.join(dir, 'src'));
  writeFileSync(path.join(dir, 'src/a.ts'), 'export const needle = 1;\n');
  writeFileSync(path.join(dir, 'src/b.md'), 'needle in markdown\n');
  writeFileSync(path.join(dir, 'lines.txt'), Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n') + '\n');
  writeFileSync(path.join(dir, 'app.log'), 'log\n');
  const h = new Harness([dir], { policy: allowAll() });
  return { dir, h, done: () => { h.close(); cleanup(); } };
}

test('glob_file_search(glob_pattern, target_directory) is glob', async () => {
  const s = setup();
  try {
    const env = await s.h.call('glob_file_search', { glob_pattern: '*.ts', target_directory: 'src' });
    assert.equal(env.ok, true, JSON.stringify(env.error));
    assert.equal(env.tool, 'glob');
    assert.deepEqual((env.data as { files: string[] }).files, ['src/a.ts']);
    assert.ok(env.warnings?.some((w) => /glob_file_search/.test(w)), JSON.stringify(env.warnings));
    assert.ok(env.warnings?.some((w) => /"glob_pattern" is now "pattern"/.test(w)));
    assert.ok(env.warnings?.some((w) => /"target_directory" is now "path"/.test(w)));
  } finally { s.done(); }
});

test('run_terminal_cmd(command, is_background) and run_shell(command, cwd) are run_command', async () => {
  const s = setup();
  try {
    const fg = await s.h.call('run_shell', { command: 'pwd', cwd: 'src' });
    assert.equal(fg.ok, true, JSON.stringify(fg.error));
    assert.equal(fg.tool, 'run_command');
    assert.match(String((fg.data as { output: string }).output), /\/src\n?$/);
    const bg = await s.h.call('run_terminal_cmd', { command: 'echo hi', is_background: true });
    assert.equal(bg.ok, true, JSON.stringify(bg.error));
    assert.equal(bg.tool, 'run_command');
    assert.ok(bg.warnings?.some((w) => /"is_background" is now "background"/.test(w)));
    const id = (bg.data as { id: string }).id;
    assert.ok(id, JSON.stringify(bg.data));
    // Wait for it to end before the folder goes away.
    const out = await s.h.call('process_output', { id, wait_ms: 5000 });
    assert.match((out.data as { output: string }).output, /hi/);
    for (let i = 0; i < 50 && (await s.h.call('process_output', { id, wait_ms: 200 }).then((e) => (e.data as { exit_code: number | null }).exit_code)) === null; i++);
  } finally { s.done(); }
});

test('search_files(pattern, path, file_pattern) is grep with a glob', async () => {
  const s = setup();
  try {
    const env = await s.h.call('search_files', { pattern: 'needle', path: 'src', file_pattern: '*.md' });
    assert.equal(env.ok, true, JSON.stringify(env.error));
    assert.equal(env.tool, 'grep');
    assert.deepEqual((env.data as { files: string[] }).files, ['src/b.md']);
    assert.ok(env.warnings?.some((w) => /"file_pattern" is now "glob"/.test(w)));
  } finally { s.done(); }
});

test('list_dir(ignore_globs) and apply_patch(patch_text)', async () => {
  const s = setup();
  try {
    const ls = await s.h.call('list_dir', { ignore_globs: ['*.log'] });
    assert.equal(ls.ok, true, JSON.stringify(ls.error));
    const names = (ls.data as { entries: Array<{ name: string }> }).entries.map((e) => e.name);
    assert.ok(names.includes('lines.txt') && !names.includes('app.log'), names.join(','));
    const patch = '--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+created\n';
    const ap = await s.h.call('apply_patch', { patch_text: patch });
    assert.equal(ap.ok, true, JSON.stringify(ap.error));
    assert.equal(readFileSync(path.join(s.dir, 'new.txt'), 'utf8'), 'created\n');
    assert.ok(ap.warnings?.some((w) => /"patch_text" is now "patch"/.test(w)));
  } finally { s.done(); }
});

test('read_file(start_line, end_line): 1-based inclusive, mapped to offset/limit', async () => {
  const s = setup();
  try {
    const lines = async (args: Record<string, unknown>) => {
      const env = await s.h.call('read_file', { path: 'lines.txt', ...args });
      assert.equal(env.ok, true, JSON.stringify(env.error));
      const d = env.data as { content: string; offset: number; limit: number };
      return { text: d.content.split('\n').map((l) => l.split('\t')[1]), offset: d.offset, limit: d.limit, warnings: env.warnings ?? [] };
    };
    const r = await lines({ start_line: 5, end_line: 7 });
    assert.deepEqual(r.text, ['line 5', 'line 6', 'line 7']);
    assert.equal(r.offset, 5);
    assert.equal(r.limit, 3);
    assert.ok(r.warnings.some((w) => /offset 5, limit 3/.test(w)), r.warnings.join('|'));
    assert.deepEqual((await lines({ end_line: 2 })).text, ['line 1', 'line 2'], 'end_line alone starts at line 1');
    assert.deepEqual((await lines({ start_line: 19 })).text, ['line 19', 'line 20'], 'start_line alone reads to the end');
    assert.deepEqual((await lines({ start_line: 4, end_line: 4 })).text, ['line 4'], 'one line');
    for (const bad of [{ start_line: 5, end_line: 4 }, { start_line: 0 }, { end_line: 2.5 }, { start_line: '3' }, { start_line: 1, offset: 2 }, { start_line: 1, end_line: 200_001 }]) {
      const env = await s.h.call('read_file', { path: 'lines.txt', ...bad });
      assert.equal(env.error?.code, 'InvalidArguments', JSON.stringify(bad));
    }
  } finally { s.done(); }
});

test('an unknown name is still ToolNotFound (control)', async () => {
  const s = setup();
  try {
    const env = await s.h.call('run_terminal_commands_please', { command: 'true' });
    assert.equal(env.error?.code, 'ToolNotFound');
  } finally { s.done(); }
});
