import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { Envelope } from '../../core/envelope.js';
import { Harness, settle, tempDir } from '../../testing/helpers.js';
import { locateRg } from '../grep/rg.js';
import { TreeSizes } from '../walk/tree-sizes.js';
import { smallTreeWalkMax, DEFAULT_SMALL_TREE_WALK_MAX } from './glob.js';

// With ripgrep present, glob walks a small folder itself (starting rg and find costs more) and
// hands a big one to ripgrep: the answer must be the one ripgrep gives, whichever ran.

interface GlobData { files: string[]; total: number; engine: string; fallback_reason: string | null }
type Env = Envelope & { data: GlobData };

function write(root: string, rel: string, text = 'x'): void {
  mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  writeFileSync(path.join(root, rel), text);
}

async function withEnv<T>(vars: Record<string, string>, f: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  try {
    return await f();
  } finally {
    for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
  }
}

test('TOOLGATE_GLOB_WALK_MAX: default, a number, 0, and nonsense', () => {
  assert.equal(smallTreeWalkMax({}), DEFAULT_SMALL_TREE_WALK_MAX);
  assert.equal(smallTreeWalkMax({ TOOLGATE_GLOB_WALK_MAX: '50' }), 50);
  assert.equal(smallTreeWalkMax({ TOOLGATE_GLOB_WALK_MAX: '0' }), 0);
  assert.equal(smallTreeWalkMax({ TOOLGATE_GLOB_WALK_MAX: '-3' }), DEFAULT_SMALL_TREE_WALK_MAX);
  assert.equal(smallTreeWalkMax({ TOOLGATE_GLOB_WALK_MAX: 'lots' }), DEFAULT_SMALL_TREE_WALK_MAX);
});

test('TreeSizes: exact sizes and "more than N", and drops the least recently used past its bound', () => {
  const s = new TreeSizes();
  s.set('/a', 10);
  s.setMoreThan('/b', 300);
  assert.ok(s.within('/a', 10) && !s.within('/a', 9) && !s.over('/a', 10) && s.over('/a', 9));
  // More than 300: over any budget up to 300; past that, unknown (neither over nor within).
  assert.ok(s.over('/b', 300) && s.over('/b', 100) && !s.over('/b', 1000) && !s.within('/b', 1000));
  assert.ok(!s.over('/unknown', 1) && !s.within('/unknown', 1e9));
  for (let i = 0; i < 1100; i++) s.set(`/x${i}`, i);
  assert.ok(!s.within('/a', 10), 'the oldest entry was dropped');
  assert.ok(s.within('/x1099', 1099));
});

test('glob picks the walker for a small folder and the index or ripgrep for a big one, with ripgrep\'s answer either way', async (t) => {
  const rg = await locateRg({ ...process.env, TOOLGATE_RG: '' });
  if (!rg) return t.skip('needs ripgrep (rg) on PATH to compare with its answer');
  for (const engine of ['ripgrep', 'index']) {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const ws = tmp.dir;
    write(ws, '.gitignore', '*.o\nbuild/\n');
    write(ws, 'small/.rgignore', '!x.o\n'); // rg reads it; the walker must too
    for (const rel of ['small/a.h', 'small/b.c', 'small/x.o', 'small/.hidden.h', 'small/.env', 'small/build/gen.h', 'small/sub/c.h']) write(ws, rel);
    for (let i = 0; i < 120; i++) write(ws, `big/d${i % 6}/f${i}.${i % 3 ? 'c' : 'h'}`);
    write(ws, 'big/.env.h', 'SECRET=1');
    const h = new Harness([ws]);
    t.after(() => h.close());
    await bigAndSmall(ws, h, engine);
  }
});

async function bigAndSmall(ws: string, h: Harness, engine: string) {
  const glob = async (args: Record<string, unknown>, walkMax: string, e = engine) => {
    // The index answers from folders unchanged for a moment: let the tree settle first.
    if (e === 'index') await settle([ws]);
    return withEnv({ TOOLGATE_RG: '', TOOLGATE_GLOB_WALK_MAX: walkMax, TOOLGATE_GLOB_ENGINE: e }, () => h.call('glob', args) as Promise<Env>);
  };

  for (const args of [{ pattern: '**/*.h', path: 'small' }, { pattern: '**', path: 'small', hidden: true }, { pattern: '**/*.h', path: 'big' }, { pattern: '**', path: 'big', hidden: true, gitignore: false }]) {
    const want = await glob(args, '0', 'ripgrep');
    assert.equal(want.data.engine, 'ripgrep');
    const small = args.path === 'small';
    for (let round = 0; round < 2; round++) {
      const got = await glob(args, '50');
      assert.equal(got.ok, true, got.text);
      assert.equal(got.data.engine, small ? 'builtin' : engine, `${JSON.stringify(args)} round ${round}: ${got.data.fallback_reason}`);
      if (small) {
        assert.match(got.data.fallback_reason ?? '', /folder is small/);
        assert.doesNotMatch(got.text, /Built-in walker used/);
      }
      assert.deepEqual(got.data.files, want.data.files, JSON.stringify(args));
      assert.ok(!got.data.files.some((f) => f.includes('.env')), 'no secret named');
    }
  }

  // A small folder that grew past the budget: the walker's probe stops and the engine answers in full.
  for (let i = 0; i < 80; i++) write(ws, `small/grown/g${i}.h`);
  const want = await glob({ pattern: '**/*.h', path: 'small' }, '0', 'ripgrep');
  const got = await glob({ pattern: '**/*.h', path: 'small' }, '50');
  assert.equal(got.data.engine, engine);
  assert.equal(got.data.total, 82);
  assert.deepEqual(got.data.files, want.data.files);
}
