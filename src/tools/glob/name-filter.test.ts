import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { Envelope } from '../../core/envelope.js';
import { Harness, policyFromYaml, tempDir } from '../../testing/helpers.js';
import { locateRg } from '../grep/rg.js';
import { compilePattern } from './pattern.js';
import { nameFilter } from './rg-engine.js';

// Attacks on the ripgrep engine's file-name filter (rg-engine.ts nameFilter), which rg applies
// as a --glob override: it must pass every name the walker's pattern (picomatch) matches, and it
// must not send rg into folders the walker never reads.

// ripgrep runs even on folders this small (glob would walk them itself).
process.env.TOOLGATE_GLOB_WALK_MAX = '0';

interface GlobData { files: string[]; total: number; truncated: boolean; stopped: string | null; skipped_by_policy?: number; engine: string; fallback_reason: string | null }
type Env = Envelope & { data: GlobData };

const linux = process.platform === 'linux';
const hasMkfifo = linux && spawnSync('mkfifo', ['--version']).status === 0;

function write(root: string, rel: string, content = ''): void {
  mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  writeFileSync(path.join(root, rel), content);
}

async function globWith(h: Harness, engine: 'rg' | 'builtin', args: Record<string, unknown>): Promise<Env> {
  const saved = process.env.TOOLGATE_RG;
  process.env.TOOLGATE_RG = engine === 'rg' ? '' : 'off';
  try {
    return await h.call('glob', args) as Env;
  } finally {
    if (saved === undefined) delete process.env.TOOLGATE_RG; else process.env.TOOLGATE_RG = saved;
  }
}

const comparable = (e: Env) => (e.ok
  ? { files: e.data.files, total: e.data.total, truncated: e.data.truncated, stopped: e.data.stopped, skipped: e.data.skipped_by_policy ?? 0 }
  : { error: e.error?.code });

function harness(t: { after(fn: () => void): void }, files: Record<string, string>, policy = 'rules: []\n') {
  const d = tempDir('tg-glob-name-');
  const ws = path.join(d.dir, 'ws');
  mkdirSync(ws);
  for (const [rel, content] of Object.entries(files)) write(ws, rel, content);
  const h = new Harness([ws], { policy: policyFromYaml(policy), stateDir: path.join(d.dir, 'state') });
  t.after(() => { h.close(); d.cleanup(); });
  return { ws, h };
}

// Names the walker's pattern matches and a glob read by ripgrep's rules (globset) would not:
// braces it reads differently (one alternative, an empty one, nested, a range, a stray brace)
// and `?` over a character outside the BMP (two UTF-16 units to picomatch, one to rg).
const ODD_NAMES = ['x.2', 'x.{a}', 'x{}', 'x.cc', 'x.😀', 'x.', 'a-{c}', 'x.}', 'x.a}', 'x.a', 'x.h', 'sub/x.2', 'sub/x.😀'];
const ODD_PATTERNS = ['**/*.{1..3}', '**/*.{a}', '**/x{}', '**/*.{h,{c,cc}}', '**/x.??', '**/*.{,h}', '**/*.{h,}', '**/{a,b}-{c}', '**/*.}', '**/*.{a,b}}', '**/x.?', '**/*.{a,h}', '*.{1..3}', 'sub/x.??'];

test('glob name filter: a pattern ripgrep reads differently from the walker (braces, ranges, ? over a non-BMP character) gives both engines the same answer', async (t) => {
  if (!(await locateRg({ ...process.env, TOOLGATE_RG: '' }))) return t.skip('needs ripgrep (rg) on PATH to compare the engines');
  const { h } = harness(t, Object.fromEntries(ODD_NAMES.map((n) => [n, ''])));
  const diffs: string[] = [];
  for (const pattern of ODD_PATTERNS) {
    const a = await globWith(h, 'rg', { pattern });
    const b = await globWith(h, 'builtin', { pattern });
    assert.equal(a.data?.engine, 'ripgrep', `${pattern}: ${a.data?.fallback_reason}`);
    if (JSON.stringify(comparable(a)) !== JSON.stringify(comparable(b))) diffs.push(`${pattern}: ripgrep ${JSON.stringify(a.data?.files)} vs walker ${JSON.stringify(b.data?.files)}`);
  }
  assert.deepEqual(diffs, []);
  // Controls: the walker's answers the comparison stands on.
  assert.deepEqual((await globWith(h, 'builtin', { pattern: '**/x.??' })).data.files, ['sub/x.😀', 'x.a}', 'x.cc', 'x.😀']);
  assert.deepEqual((await globWith(h, 'builtin', { pattern: '**/*.{1..3}' })).data.files, ['sub/x.2', 'x.2']);
  assert.deepEqual((await globWith(h, 'builtin', { pattern: '**/*.{a}' })).data.files, ['x.{a}']);
});

test('glob name filter: a plain alternation, a literal name and a `*.h` stay filters; what matches every name or ripgrep reads otherwise is no filter', () => {
  const f = (p: string) => nameFilter(compilePattern(p, { hidden: false }));
  // Kept (so rg lists only what can match): the speed-up.
  assert.equal(f('**/*.h'), '*.h');
  assert.equal(f('src/**/*.{h,c}'), '*.{h,c}');
  assert.equal(f('Makefile'), 'Makefile');
  assert.equal(f('**/a,b'), 'a,b');
  // `?` widened to `*` (one character to rg, one UTF-16 unit to the walker).
  assert.equal(f('**/x.?'), 'x.*');
  // No filter: every name passes (rg would enter every ignored folder), or rg reads the braces otherwise.
  for (const p of ['**/*', '*', 'src/**/*', '**/**', '**/*.{1..3}', '**/*.{a}', '**/x{}', '**/*.{h,{c,cc}}', '**/*.{h,}', '**/*.}', '**/*.{a,b}}', '**/*.{h', '**/{a..c,x}.h']) {
    assert.equal(f(p), null, p);
  }
});

function mkfifo(p: string): void {
  mkdirSync(path.dirname(p), { recursive: true });
  const r = spawnSync('mkfifo', [p]);
  if (r.status !== 0) throw new Error(`mkfifo ${p}: ${r.stderr}`);
}

// rg opens every file named like an ignore file in each folder it enters, so a FIFO .gitignore
// shows whether it entered (it blocks there; glob then falls back to the walker and says why).
test('glob name filter: ripgrep does not enter a folder the walker never reads because the file-name filter matches its name (an ignored folder for "**/*", a hidden one for "**/*.*", .git and the state dir for "**/.*")', { skip: hasMkfifo ? false : 'needs Linux and mkfifo', timeout: 60_000 }, async (t) => {
  if (!(await locateRg({ ...process.env, TOOLGATE_RG: '' }))) return t.skip('needs ripgrep (rg) on PATH to compare the engines');
  const { ws, h } = harness(t, {
    '.gitignore': 'node_modules/\n', 'src/a.ts': '', 'src/.eslintrc': '', 'node_modules/pkg/index.js': '',
    '.cache.d/sub/x.ts': '', '.git/sub/HEAD': '', '.toolgate/sub/x.ts': '',
  });
  // One level down: rg's single-threaded walk reads the ignore files of a folder it skips (not of its subfolders).
  for (const f of ['node_modules/pkg/.gitignore', '.cache.d/sub/.gitignore', '.git/sub/.gitignore', '.toolgate/sub/.gitignore']) mkfifo(path.join(ws, f));
  const entered: string[] = [];
  const run = async (cases: Record<string, unknown>[]) => {
    for (const args of cases) {
      const a = await globWith(h, 'rg', args);
      const b = await globWith(h, 'builtin', args);
      assert.deepEqual(comparable(a), comparable(b), JSON.stringify(args));
      if (a.data.engine !== 'ripgrep') entered.push(`${JSON.stringify(args)}: ${a.data.fallback_reason}`);
    }
  };
  // Hidden names off: neither node_modules (ignored) nor .cache.d, .git, .toolgate (hidden) is read.
  await run([{ pattern: '**/*' }, { pattern: 'src/**/*' }, { pattern: '**/*.*' }, { pattern: '**/*.{ts,js}' }, { pattern: '**/*', gitignore: false }, { pattern: '**/*.*', gitignore: false }]);
  // Hidden names on (.cache.d is then read: its FIFO goes): still neither .git (ignore rules on) nor the state dir.
  unlinkSync(path.join(ws, '.cache.d/sub/.gitignore'));
  await run([{ pattern: '**/.*' }, { pattern: '**/*', hidden: true }, { pattern: '**/*.*', hidden: true }, { pattern: '**/.{git,toolgate}*' }]);
  assert.deepEqual(entered, []);
  // Controls: the walker's answers, and a FIFO in a folder rg must read does stop it.
  assert.deepEqual((await globWith(h, 'builtin', { pattern: '**/.*' })).data.files, ['.gitignore', 'src/.eslintrc']);
  assert.deepEqual((await globWith(h, 'builtin', { pattern: '**/*.*', hidden: true })).data.files, ['.cache.d/sub/x.ts', '.gitignore', 'src/.eslintrc', 'src/a.ts']);
  mkfifo(path.join(ws, 'src/.gitignore'));
  const stopped = await globWith(h, 'rg', { pattern: '**/*' });
  assert.equal(stopped.data.engine, 'builtin');
  assert.match(stopped.data.fallback_reason ?? '', /FIFO/);
});
