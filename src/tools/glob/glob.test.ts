import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { Envelope } from '../../core/envelope.js';
import { Harness, tempDir } from '../../testing/helpers.js';
import pino from 'pino';
import type { ToolContext } from '../../core/types.js';
import { globFiles, globTool, type GlobPlan } from './glob.js';
import { compilePattern, splitSegments } from './pattern.js';

function files(root: string, spec: Record<string, string>): void {
  for (const [rel, content] of Object.entries(spec)) {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), content);
  }
}

interface GlobData { files: string[]; total: number; count: number; truncated: boolean; stopped: string | null; path: string }

function setup(spec: Record<string, string>) {
  const t = tempDir();
  files(t.dir, spec);
  const h = new Harness([t.dir]);
  const glob = async (args: Record<string, unknown>) => {
    const env = await h.call('glob', args);
    assert.ok(h.rt.tools.get('glob')!.envelope.safeParse(env).success, 'envelope matches the output schema');
    return env as Envelope & { data: GlobData };
  };
  return { dir: t.dir, h, glob, done: () => { h.close(); t.cleanup(); } };
}

const TREE = {
  'a.ts': '', 'b.js': '', 'src/c.ts': '', 'src/d/e.ts': '', 'src/d/f.md': '', 'lib/g.ts': '', 'docs/h.md': '',
};

test('glob: * stays in one folder, ** crosses, results sorted and workspace-relative', async () => {
  const s = setup(TREE);
  try {
    const top = await s.glob({ pattern: '*.ts' });
    assert.equal(top.ok, true);
    assert.deepEqual(top.data.files, ['a.ts']);
    const deep = await s.glob({ pattern: '**/*.ts' });
    assert.deepEqual(deep.data.files, ['a.ts', 'lib/g.ts', 'src/c.ts', 'src/d/e.ts']);
    assert.equal(deep.status, 'ok');
    assert.equal(deep.data.total, 4);
    const one = await s.glob({ pattern: 'src/*' });
    assert.deepEqual(one.data.files, ['src/c.ts'], 'folders never match');
    const braces = await s.glob({ pattern: '{src,docs}/**/*.md' });
    assert.deepEqual(braces.data.files, ['docs/h.md', 'src/d/f.md']);
    const inPath = await s.glob({ pattern: '**/*.ts', path: 'src' });
    assert.deepEqual(inPath.data.files, ['src/c.ts', 'src/d/e.ts']);
    assert.equal(inPath.data.path, 'src');
    const literal = await s.glob({ pattern: 'src/d/e.ts' });
    assert.deepEqual(literal.data.files, ['src/d/e.ts']);
    const none = await s.glob({ pattern: 'nowhere/**/*.ts' });
    assert.equal(none.ok, true);
    assert.deepEqual(none.data.files, []);
    assert.match(none.text, /No files match/);
  } finally {
    s.done();
  }
});

test('glob: limit cuts the sorted list, says partial, and spills the full list', async () => {
  const spec: Record<string, string> = {};
  for (let i = 0; i < 25; i++) spec[`m/f${String(i).padStart(2, '0')}.txt`] = '';
  const s = setup(spec);
  try {
    const env = await s.glob({ pattern: '**/*.txt', limit: 10 });
    assert.equal(env.ok, true);
    assert.equal(env.status, 'partial');
    assert.deepEqual(env.data.files, Array.from({ length: 10 }, (_, i) => `m/f${String(i).padStart(2, '0')}.txt`));
    assert.equal(env.data.total, 25);
    assert.equal(env.data.truncated, true);
    assert.ok(env.artifacts.storage_ref && env.artifacts.sha256);
    const full = readFileSync(path.join(s.dir, env.artifacts.storage_ref!), 'utf8').trim().split('\n');
    assert.equal(full.length, 25);
  } finally {
    s.done();
  }
});

test('glob: hidden names and ignored files only when asked', async () => {
  const s = setup({ ...TREE, '.github/workflows/ci.yml': '', '.eslintrc.json': '', 'src/.hidden.ts': '', 'dist/x.ts': '', '.gitignore': 'dist/\n' });
  try {
    assert.deepEqual((await s.glob({ pattern: '**/*.ts' })).data.files, ['a.ts', 'lib/g.ts', 'src/c.ts', 'src/d/e.ts']);
    const hidden = await s.glob({ pattern: '**/*.ts', hidden: true });
    assert.ok(hidden.data.files.includes('src/.hidden.ts'));
    assert.ok(!hidden.data.files.includes('dist/x.ts'));
    const noIgnore = await s.glob({ pattern: '**/*.ts', gitignore: false });
    assert.ok(noIgnore.data.files.includes('dist/x.ts'));
    assert.deepEqual((await s.glob({ pattern: 'dist/*.ts' })).data.files, [], 'a literal prefix is no exemption from .gitignore');
    assert.deepEqual((await s.glob({ pattern: '*.ts', path: 'dist' })).data.files, ['dist/x.ts'], 'a folder named as path is searched');
    assert.deepEqual((await s.glob({ pattern: '.github/**/*.yml' })).data.files, ['.github/workflows/ci.yml'], 'a named dot-folder matches');
    assert.deepEqual((await s.glob({ pattern: '**/.eslintrc*' })).data.files, ['.eslintrc.json'], 'a named dot-file matches');
  } finally {
    s.done();
  }
});

test('glob: secrets on the deny list never come back, whatever the flags', async () => {
  const s = setup({ 'app.ts': '', '.env': 'SECRET=1', 'conf/.env.production': 'X=1', '.ssh/id_rsa': 'KEY', '.ssh/config': '', 'tls/site.pem': '', 'tls/site.crt': '' });
  try {
    for (const pattern of ['**/*', '**/.env*', '**/id_rsa', '*', 'tls/*', '**/.ssh/*']) {
      const env = await s.glob({ pattern, hidden: true, gitignore: false });
      assert.equal(env.ok, true, pattern);
      for (const f of env.data.files) assert.doesNotMatch(f, /\.env|\.ssh|id_rsa|\.pem|\.toolgate/, `${pattern} -> ${f}`);
    }
    assert.deepEqual((await s.glob({ pattern: 'tls/*' })).data.files, ['tls/site.crt']);
    const inside = await s.glob({ pattern: '.ssh/*', hidden: true });
    assert.equal(inside.ok, false);
    assert.equal(inside.error?.code, 'PathDenied');
    const asPath = await s.glob({ pattern: '*', path: '.ssh' });
    assert.equal(asPath.error?.code, 'PathDenied');
  } finally {
    s.done();
  }
});

test('glob: symlinks are matched but never followed, in or out of the workspace', async () => {
  const out = tempDir('tg-out-');
  files(out.dir, { 'outside.ts': '', 'deep/o.ts': '' });
  const s = setup({ 'in/real.ts': '' });
  symlinkSync(out.dir, path.join(s.dir, 'link-out'));
  symlinkSync(path.join(s.dir, 'in'), path.join(s.dir, 'link-in'));
  symlinkSync(path.join(out.dir, 'outside.ts'), path.join(s.dir, 'file-out.ts'));
  try {
    const all = await s.glob({ pattern: '**/*' });
    assert.deepEqual(all.data.files, ['file-out.ts', 'in/real.ts', 'link-in', 'link-out']);
    const through = await s.glob({ pattern: 'link-out/**/*.ts' });
    assert.equal(through.ok, true);
    assert.deepEqual(through.data.files, []);
    const throughIn = await s.glob({ pattern: 'link-in/*.ts' });
    assert.deepEqual(throughIn.data.files, [], 'a link inside is not followed either');
    const asPath = await s.glob({ pattern: '**/*', path: 'link-out' });
    assert.equal(asPath.error?.code, 'PathTraversalBlocked');
  } finally {
    s.done();
    out.cleanup();
  }
});

test('glob: bad patterns and paths get errors that say what to do', async () => {
  const s = setup(TREE);
  try {
    for (const pattern of ['/etc/*', '../*', 'src/../../x', '!*.ts']) {
      const env = await s.glob({ pattern });
      assert.equal(env.error?.code, 'InvalidArguments', pattern);
    }
    const missing = await s.glob({ pattern: '*', path: 'nope' });
    assert.equal(missing.error?.code, 'NotFound');
    assert.match(missing.error!.message, /list_dir/);
    const file = await s.glob({ pattern: '*', path: 'a.ts' });
    assert.equal(file.error?.code, 'InvalidArguments');
    const outside = await s.glob({ pattern: '*', path: '/etc' });
    assert.equal(outside.error?.code, 'PathTraversalBlocked');
  } finally {
    s.done();
  }
});

test('pattern: literal base, brace-aware segments, and folder pruning', () => {
  assert.deepEqual(splitSegments('src/{a,b}/*.ts'), ['src', '{a,b}', '*.ts']);
  assert.equal(splitSegments('{src/a,lib}/*.ts'), null);
  const p = compilePattern('./src/*/test/*.ts', { hidden: false });
  assert.equal(p.base, 'src');
  assert.equal(p.canContain(['x']), true);
  assert.equal(p.canContain(['x', 'test']), true);
  assert.equal(p.canContain(['x', 'other']), false);
  assert.equal(p.canContain(['x', 'test', 'deeper']), false);
  assert.equal(p.match('src/x/test/a.ts'), true);
  const g = compilePattern('**/*.ts', { hidden: false });
  assert.equal(g.base, '');
  assert.equal(g.canContain(['a', 'b', 'c']), true);
  assert.equal(compilePattern('*.ts', { hidden: false }).canContain(['a']), false);
  assert.equal(compilePattern('**/.env*', { hidden: false }).mentionsDot, true);
  assert.equal(compilePattern('**/*.ts', { hidden: false }).mentionsDot, false);
});

test('glob: the visit cap and the time cap give partial results and say how to narrow', async () => {
  const spec: Record<string, string> = {};
  for (let i = 0; i < 40; i++) spec[`d${i % 4}/f${i}.ts`] = '';
  const s = setup(spec);
  try {
    const ws = await s.h.roots.workspace();
    const limits = { timeout_ms: 10_000, output_bytes: 51_200, output_lines: 2000 };
    const ctx = {
      workspace: ws, policy: s.h.rt.policy, session: s.h.session, signal: new AbortController().signal, callId: 'tc_test', traceId: 'tr_test',
      limits, log: pino({ level: 'silent' }), progress: () => {}, notify: async () => {}, spill: async () => ({ storage_ref: 'x', sha256: 'y' }),
    } satisfies ToolContext;
    const args = { pattern: '**/*.ts', path: '.', limit: 1000, hidden: false, gitignore: true };
    const plan = (await globTool.plan(args, ctx)) as GlobPlan;
    // The visit cap is the built-in walker's; the time cap applies to both engines.
    const visits = await globFiles(args, plan, ctx, { maxVisits: 10, timeLimitMs: 10_000, engine: 'builtin' });
    assert.equal(visits.status, 'partial');
    assert.equal(visits.data.stopped, 'visit_cap');
    assert.equal(visits.data.truncated, true);
    assert.ok(visits.data.files.length < 40);
    assert.match(visits.text, /incomplete.*narrow/);
    for (const engine of ['auto', 'builtin'] as const) {
      const timed = await globFiles(args, plan, ctx, { maxVisits: 1000, timeLimitMs: -1, engine });
      assert.equal(timed.data.stopped, 'time_cap', engine);
      assert.equal(timed.status, 'partial');
    }
    const whole = await globFiles(args, plan, ctx);
    assert.equal(whole.data.total, 40);
    assert.equal(whole.status, 'ok');
  } finally {
    s.done();
  }
});

test('glob: a cancelled call stops with Cancelled', async () => {
  const s = setup(TREE);
  try {
    const ctrl = new AbortController();
    ctrl.abort();
    const env = await s.h.call('glob', { pattern: '**/*' }, { signal: ctrl.signal });
    assert.equal(env.ok, false);
    assert.equal(env.error?.code, 'Cancelled');
  } finally {
    s.done();
  }
});
