import assert from 'node:assert/strict';
import { symlinkSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { Envelope } from '../../core/envelope.js';
import { Harness, policyFromYaml, tempDir, withEngine, writeIn } from '../../testing/helpers.js';
import { locateRg } from '../grep/rg.js';

// Ignore files ripgrep reads and the walker does not: rg follows a symbolic link named
// .gitignore/.ignore/.rgignore (to a file outside the workspace too) and reads a file of any
// size; the walker (readIgnoreFileSync, as git) reads neither. rg pruned the folders such rules
// name, so the ripgrep engine's answer lost files the walker's has, and a rule read from outside
// the workspace decided what glob showed.

process.env.TOOLGATE_GLOB_WALK_MAX = '0';

interface GlobData { files: string[]; total: number; truncated: boolean; stopped: string | null; engine: string; fallback_reason: string | null }
type Env = Envelope & { data: GlobData };

const write = writeIn;

const globWith = (h: Harness, engine: 'rg' | 'builtin', args: Record<string, unknown>) => withEngine(engine, () => h.call('glob', args) as Promise<Env>);

const comparable = (e: Env) => (e.ok ? { files: e.data.files, total: e.data.total, truncated: e.data.truncated, stopped: e.data.stopped } : { error: e.error?.code });

test('glob engines: an ignore file that is a symbolic link (outside or inside) or past the size bound is not applied by either engine', async (t) => {
  if (!(await locateRg({ ...process.env, TOOLGATE_RG: '' }))) return t.skip('needs ripgrep (rg) on PATH to compare the engines');
  const d = tempDir('tg-glob-rgignore-');
  t.after(d.cleanup);
  const ws = path.join(d.dir, 'ws');
  const out = path.join(d.dir, 'outside');
  write(out, 'rules', 'sub/\n*.h\n');
  for (const top of ['a', 'b', 'c', 'big', 'plain']) for (const f of ['sub/x.h', 'y.h', 'z.c']) write(ws, `${top}/${f}`);
  symlinkSync(path.join(out, 'rules'), path.join(ws, 'a/.gitignore'));
  write(ws, 'shared-rules', 'sub/\n*.h\n');
  symlinkSync('../shared-rules', path.join(ws, 'b/.ignore'));
  symlinkSync(path.join(out, 'rules'), path.join(ws, 'c/.rgignore'));
  write(ws, 'big/.gitignore', `sub/\n*.h\n${`#${'x'.repeat(99)}\n`.repeat(10_600)}`);
  // Control: a plain .gitignore with the same rules is applied by both.
  write(ws, 'plain/.gitignore', 'sub/\n*.h\n');
  const h = new Harness([ws], { policy: policyFromYaml('rules: []\n'), stateDir: path.join(d.dir, 'state') });
  t.after(() => h.close());
  const diffs: string[] = [];
  for (const args of [{ pattern: '**/*.h' }, { pattern: '**/*' }, { pattern: '**/x.h' }, { pattern: '**/*.h', path: 'a' }, { pattern: 'c/**' }, { pattern: '**/*', path: 'big' }]) {
    const a = await globWith(h, 'rg', args);
    const b = await globWith(h, 'builtin', args);
    if (JSON.stringify(comparable(a)) !== JSON.stringify(comparable(b))) diffs.push(`${JSON.stringify(args)}: ripgrep ${JSON.stringify(a.data?.files)} vs walker ${JSON.stringify(b.data?.files)}`);
  }
  assert.deepEqual(diffs, []);
  // Controls: the walker applies none of those files, and the plain one.
  const all = await globWith(h, 'builtin', { pattern: '**/x.h' });
  assert.deepEqual(all.data.files, ['a/sub/x.h', 'b/sub/x.h', 'big/sub/x.h', 'c/sub/x.h']);
  // The walker answered, and says why.
  const linked = await globWith(h, 'rg', { pattern: '**/*.h', path: 'a' });
  assert.equal(linked.data.engine, 'builtin');
  assert.match(linked.data.fallback_reason ?? '', /a\/\.gitignore is a symbolic link, over 1 MB/);
  // Without such files ripgrep still lists (the check costs no fallback).
  const plain = await globWith(h, 'rg', { pattern: '**/*', path: 'plain' });
  assert.equal(plain.data.engine, 'ripgrep', plain.data.fallback_reason ?? '');
  assert.deepEqual(plain.data.files, ['plain/z.c']);
});

test('glob engines: below a nested repository (a folder holding .git, a file or a folder) rg stops applying the .gitignore files above it; both engines still give the walker\'s answer', async (t) => {
  if (!(await locateRg({ ...process.env, TOOLGATE_RG: '' }))) return t.skip('needs ripgrep (rg) on PATH to compare the engines');
  const d = tempDir('tg-glob-nested-git-');
  t.after(d.cleanup);
  const ws = path.join(d.dir, 'ws');
  write(ws, '.gitignore', '*.log\nbuild/\n');
  write(ws, '.ignore', '*.tmp\n');
  for (const top of ['mod', 'sub', 'plain']) for (const f of ['x.log', 'deep/y.log', 'build/z.c', 'a.tmp', 'ok.c']) write(ws, `${top}/${f}`);
  write(ws, 'mod/.git', 'gitdir: ../.git/modules/mod\n');
  write(ws, 'sub/deep/.git/HEAD', 'ref: refs/heads/main\n');
  const h = new Harness([ws], { policy: policyFromYaml('rules: []\n'), stateDir: path.join(d.dir, 'state') });
  t.after(() => h.close());
  const diffs: string[] = [];
  for (const args of [{ pattern: '**/*' }, { pattern: '*/*' }, { pattern: '**/[xy].log' }, { pattern: '**/*', path: 'mod' }, { pattern: '**/*.log' }, { pattern: '**/*', hidden: true }]) {
    const a = await globWith(h, 'rg', args);
    const b = await globWith(h, 'builtin', args);
    assert.equal(a.data.engine, 'ripgrep', a.data.fallback_reason ?? '');
    if (JSON.stringify(comparable(a)) !== JSON.stringify(comparable(b))) diffs.push(`${JSON.stringify(args)}: ripgrep ${JSON.stringify(a.data?.files)} vs walker ${JSON.stringify(b.data?.files)}`);
  }
  assert.deepEqual(diffs, []);
  // Control: the walker applies the root's rules below both repositories.
  assert.deepEqual((await globWith(h, 'builtin', { pattern: '**/*' })).data.files, ['mod/ok.c', 'plain/ok.c', 'sub/ok.c']);
});

test('glob engines: a .ignore above beats a .gitignore below, an .rgignore above beats a .ignore below (ripgrep ranks the kind before the depth); both engines agree', async (t) => {
  if (!(await locateRg({ ...process.env, TOOLGATE_RG: '' }))) return t.skip('needs ripgrep (rg) on PATH to compare the engines');
  const d = tempDir('tg-glob-ignore-rank-');
  t.after(d.cleanup);
  const ws = path.join(d.dir, 'ws');
  write(ws, 'a/.ignore', 'gen*\n');
  write(ws, 'a/b/.gitignore', '!gen-keep.h\n!gen-dir/\n');
  for (const f of ['a/b/gen-keep.h', 'a/b/gen1.h', 'a/b/gen-dir/in.h']) write(ws, f);
  write(ws, 'c/.gitignore', 'x*\n');
  write(ws, 'c/d/.ignore', '!x1\n');
  for (const f of ['c/d/x1', 'c/d/x2']) write(ws, f);
  write(ws, 'e/.rgignore', 'y*\n');
  write(ws, 'e/f/.ignore', '!y1\n');
  write(ws, 'e/f/y1');
  const h = new Harness([ws], { policy: policyFromYaml('rules: []\n'), stateDir: path.join(d.dir, 'state') });
  t.after(() => h.close());
  const want = ['c/d/x1'];
  for (const args of [{ pattern: '**/*' }, { pattern: '**/*.h' }, { pattern: '**/x1' }, { pattern: '**/*', path: 'a/b' }, { pattern: '**/*', hidden: true }]) {
    const a = await globWith(h, 'rg', args);
    const b = await globWith(h, 'builtin', args);
    assert.deepEqual(comparable(a), comparable(b), `${JSON.stringify(args)}: ripgrep ${JSON.stringify(a.data?.files)} vs walker ${JSON.stringify(b.data?.files)}`);
  }
  assert.deepEqual((await globWith(h, 'builtin', { pattern: '**/*' })).data.files, want);
  // list_dir reads .gitignore and .ignore with the same ranking.
  const listed = await h.call('list_dir', { path: 'a/b' }) as Envelope & { data: { entries: Array<{ name: string }> } };
  assert.deepEqual(listed.data.entries.map((e) => e.name).filter((n) => !n.startsWith('.')), []);
});
