import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { Envelope } from '../../core/envelope.js';
import { Harness, policyFromYaml, startFolderSwapper, tempDir, withEngine, writeIn } from '../../testing/helpers.js';
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

const write = writeIn;

const globWith = (h: Harness, engine: 'rg' | 'builtin', args: Record<string, unknown>) => withEngine(engine, () => h.call('glob', args) as Promise<Env>);

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

test('glob name filter: folders named like the pattern (ignored, hidden, plain), each swapped for a link to outside and back while ripgrep lists through the override: nothing outside comes out', { timeout: 60_000 }, async (t) => {
  const { ws, h } = harness(t, { '.gitignore': 'ign.h/\n', 'ign.h/in.h': '', 'race.h/in.h': '', '.hid.h/in.h': '', 'top.h': '' });
  const out = path.join(path.dirname(ws), 'outside');
  write(out, 'OUTSIDE-name-7c1.h');
  write(out, 'deep/OUTSIDE-name-7c1-deep.h');
  const swappers = await Promise.all(['ign.h', 'race.h', '.hid.h'].map((n) => startFolderSwapper(path.join(ws, n), out)));
  const leaks: string[] = [];
  let runs = 0;
  try {
    const rg = await locateRg({ ...process.env, TOOLGATE_RG: '' });
    const end = Date.now() + 3000;
    while (Date.now() < end) {
      for (const engine of rg ? ['rg', 'builtin'] as const : ['builtin'] as const) {
        for (const args of [{ pattern: '**/*.h' }, { pattern: '**/*.h', hidden: true }, { pattern: '**/*.h', gitignore: false, hidden: true }, { pattern: '*/*.h' }, { pattern: '**/in.h' }]) {
          const r = await globWith(h, engine, args);
          runs++;
          if (JSON.stringify(r).includes('OUTSIDE-name-7c1')) leaks.push(`${engine} ${JSON.stringify(args)}: ${JSON.stringify(r.data?.files)}`);
        }
      }
    }
  } finally {
    await Promise.all(swappers.map((s) => s.stop()));
  }
  assert.deepEqual(leaks, []);
  assert.ok(runs > 20, `control: ${runs} calls ran`);
  // Control: with the folders back in place, the plain one is listed.
  assert.ok((await globWith(h, 'builtin', { pattern: '**/*.h' })).data.files.includes('race.h/in.h'));
});

// What the override lets rg list (ignored and hidden files and folders named like the pattern,
// folders it whitelists past their own ignore files, negations below them), named starts inside
// such folders, and deny rules on names the pattern matches: both engines, the same answers.
const OVERRIDE_TREE: Record<string, string> = {
  '.gitignore': '*.h\n!keep*.h\nign.h/\nbuild/\n/top-ign/\n!.gitignore\n!.ignore\n.cache/\n',
  'a.h': '', 'keep1.h': '', 'ign.h/keep2.h': '', 'ign.h/.gitignore': '!*\n', 'ign.h/sub/keep3.h': '',
  'x.h/keep4.h': '', 'x.h/.gitignore': 'keep4.h\n', 'x.h/y.h/keep5.h': '', '.dot.h/keep6.h': '', '.cache/keep7.h': '', '.cache/keep.h/keep8.h': '',
  'build/keep9.h': '', 'src/build/keep10.h': '', 'src/build/.ignore': '!*\n', 'top-ign/keep11.h': '', 'src/top-ign/keep12.h': '',
  'lib/.ignore': '!*.h\n', 'lib/plain.h': '', 'lib/.rgignore': 'plain.h\n', 'neg/.gitignore': '*\n!*/\n!*.h\n', 'neg/a.h': '', 'neg/b.c': '', 'neg/d/e.h': '',
  'dirs/keep.h/.gitignore': '*\n', 'dirs/keep.h/keep14.h': '', '.toolgate/keep15.h': '', '.git/keep16.h': '',
  'secret.h/keep17.h': '', 'b/deny.h/keep18.h': '', 'pol.h/keep19.h': '', 'x/nope.h/keep20.h': '', 'k/.env.keep.h': '', 'c/keep.pem': '',
};
const OVERRIDE_POLICY = 'paths:\n  deny: ["**/secret*/**", "**/deny.h"]\nrules:\n  - { tool: glob, path: "pol.h/**", decision: deny }\n  - { tool: "*", path: "**/nope*.h", decision: deny }\n';
const DENIED = ['keep17', 'keep18', 'keep19', 'keep20', '.env', '.pem', '.toolgate/'];

test('glob name filter: ignored, hidden and denied folders named like the pattern, negations below them, starts inside them: both engines give the same answer and nothing denied', async (t) => {
  if (!(await locateRg({ ...process.env, TOOLGATE_RG: '' }))) return t.skip('needs ripgrep (rg) on PATH to compare the engines');
  const { h } = harness(t, OVERRIDE_TREE, OVERRIDE_POLICY);
  const diffs: string[] = [];
  const leaked: string[] = [];
  const cases: Array<Record<string, unknown>> = [];
  for (const pattern of ['**/*.h', '**/keep*.h', '**/*', '**/*.*', '**/.*', '*/*.h', '**/keep?.h', '**/*.{h,c}', '**/*.pem', '**/.env*']) {
    for (const opts of [{}, { hidden: true }, { gitignore: false }, { hidden: true, gitignore: false }]) cases.push({ pattern, ...opts });
  }
  for (const p of ['ign.h', 'x.h', '.dot.h', '.cache', 'build', 'src/build', 'neg', 'lib', 'dirs/keep.h', '.git']) cases.push({ pattern: '**/*.h', path: p });
  for (const pattern of ['ign.h/**/*.h', 'build/**/*.h', '.cache/**/*.h', 'x.h/**/*.h', '**/keep.h/*.h']) cases.push({ pattern });
  for (const args of cases) {
    const a = await globWith(h, 'rg', args);
    const b = await globWith(h, 'builtin', args);
    if (JSON.stringify(comparable(a)) !== JSON.stringify(comparable(b))) diffs.push(`${JSON.stringify(args)}: ripgrep ${JSON.stringify(a.data?.files ?? a.error)} vs walker ${JSON.stringify(b.data?.files ?? b.error)}`);
    for (const e of [a, b]) for (const f of e.data?.files ?? []) if (DENIED.some((d) => f.includes(d))) leaked.push(`${e.data.engine} ${JSON.stringify(args)}: ${f}`);
  }
  assert.deepEqual(diffs, []);
  assert.deepEqual(leaked, []);
  // Controls: what the rules leave, and what a start named inside an ignored folder lists.
  assert.deepEqual((await globWith(h, 'rg', { pattern: '**/*.h' })).data.files, ['keep1.h', 'neg/a.h', 'neg/d/e.h', 'src/top-ign/keep12.h']);
  assert.deepEqual((await globWith(h, 'rg', { pattern: '**/*.h', path: 'ign.h' })).data.files, ['ign.h/keep2.h', 'ign.h/sub/keep3.h']);
});
