import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { toCallToolResult } from '../../core/envelope.js';
import { Harness, policyFromYaml, startFolderSwapper } from '../../testing/helpers.js';
import { buildTree, comparable, grep, QUERIES, SECRET, write } from './grep-fixture.js';
import { locateRg, rgArgs } from './rg.js';
import { toJsPattern } from './regex.js';
import { comparePaths, Selection } from './select.js';
import { typeGlobs as typeGlobs_ } from './types.js';
import { searchText } from './search-text.js';

/** Whether a query of QUERIES searches the fixture's hard.txt (at the root; not hidden). */
function meetsHardLink(args: Record<string, unknown>): boolean {
  if (args.path !== undefined && args.path !== '.') return false;
  const globs = args.glob === undefined ? [] : ([] as string[]).concat(args.glob as string | string[]);
  const typeGlobs = args.type === undefined ? [] : typeGlobs_(String(args.type)) ?? [];
  return new Selection({ globs, typeGlobs, hidden: !!args.hidden }).fileSelected('hard.txt');
}

test('grep: ripgrep and the built-in engine give the same answers on the same tree', async (t) => {
  const s = buildTree();
  try {
    const rg = await locateRg({ ...process.env, TOOLGATE_RG: '' });
    for (const args of QUERIES) {
      const builtin = await grep(s.h, 'builtin', args);
      if (builtin.ok) {
        assert.equal(builtin.data.engine, 'builtin');
        assert.equal(builtin.data.fallback_used, true);
        assert.equal(builtin.status, 'partial', 'the fallback is reported as partial');
      }
      if (!rg) continue;
      const viaRg = await grep(s.h, 'rg', args);
      if (viaRg.ok) assert.equal(viaRg.data.engine, 'ripgrep', JSON.stringify(args));
      assert.deepEqual(comparable(builtin), comparable(viaRg), `same answer for ${JSON.stringify(args)}`);
      // The default: this small tree is searched here when both engines read the pattern alike (small.ts), by ripgrep otherwise.
      const auto = await grep(s.h, 'auto', args);
      assert.deepEqual(comparable(auto), comparable(viaRg), `same answer by default for ${JSON.stringify(args)}`);
      if (auto.ok) {
        // Searched here unless multiline, \w, \d… (Unicode-wide in Rust, ASCII in JavaScript) or repetition
        // (linearInJs), or when the search meets hard.txt (a hard link: its content must not pick the engine).
        const here = !args.multiline && !/\\[dw]|[*+?{]/.test(String(args.pattern)) && !meetsHardLink(args);
        assert.equal(auto.data.engine, here ? 'builtin' : 'ripgrep', `engine for ${JSON.stringify(args)}`);
        assert.equal(auto.data.fallback_used, false, 'a small folder searched here is not a fallback');
        assert.equal(auto.status, viaRg.status, `same status (not partial for being searched here) for ${JSON.stringify(args)}`);
      }
    }
    if (!rg) t.skip('ripgrep is not installed: only the built-in half ran');
  } finally {
    s.done();
  }
});

for (const engine of ['rg', 'builtin', 'auto'] as const) {
  test(`grep (${engine}): never shows secrets, outside files, hard links, binaries, ignored or hidden files`, async (t) => {
    if (engine !== 'builtin' && !(await locateRg({ ...process.env, TOOLGATE_RG: '' }))) return t.skip('ripgrep is not installed');
    const s = buildTree();
    try {
      const all = await grep(s.h, engine, { pattern: 'needle', output_mode: 'content', head_limit: 2000 });
      assert.equal(all.ok, true);
      const files = new Set(all.data.matches!.map((m) => m.file));
      for (const f of ['a.ts', 'b.js', 'keep.log', 'sub/deep/c.py', 'sub/a b/space.txt', 'crlf.txt', 'uni.txt', 'a/z.txt', 'a.txt']) assert.ok(files.has(f), `${f} is searched`);
      for (const f of ['ignored.txt', 'x.log', 'build/out.js', 'sub/t.tmp', 'sub/generated/g.ts', '.hidden.ts', '.hdir/inner.md', '.env',
        'sub/.env.local', 'sub/id.pem', 'bin.dat', 'link-out.txt', 'hard.txt', '.git/HEAD', 'pipe.ts']) assert.ok(!files.has(f), `${f} is not searched`);
      assert.ok(!all.text.includes(SECRET) && !JSON.stringify(all.data).includes(SECRET), 'no secret or outside content anywhere');
      assert.ok(all.data.notes?.some((n) => /hard links/.test(n)), 'the hard-linked file is reported as left out');
      // The long line is cut, CR stripped.
      // (cut around the match, which ends the line: marked at the start)
      assert.ok(/^…x+needle$/.test(all.data.matches!.find((m) => m.file === 'long.txt')!.text));
      assert.equal(all.data.matches!.find((m) => m.file === 'crlf.txt')!.text, 'needle');

      // Hidden on: hidden files come in, but never .env/.pem, .git or the state dir (whose audit log holds "needle").
      await grep(s.h, engine, { pattern: 'needle' });
      const hidden = await grep(s.h, engine, { pattern: 'needle', hidden: true, head_limit: 2000, glob: ['*', '.*', '**/.env', '.toolgate/**'] });
      const hf = hidden.data.files!;
      assert.ok(hf.includes('.hidden.ts') && hf.includes('.hdir/inner.md'));
      assert.ok(!hf.some((f) => f.startsWith('.toolgate') || f.startsWith('.git/') || f.includes('.env') || f.endsWith('.pem')), hf.join(','));
      const stateDir = await grep(s.h, engine, { pattern: 'grep', hidden: true });
      assert.ok(!(stateDir.data.files ?? []).some((f) => f.startsWith('.toolgate')));

      // Paths that leave the workspace or name a secret are refused before anything runs.
      assert.equal((await grep(s.h, engine, { pattern: 'needle', path: '../outside' })).error?.code, 'PathTraversalBlocked');
      assert.equal((await grep(s.h, engine, { pattern: 'needle', path: path.join(s.out, 'secret.txt') })).error?.code, 'PathTraversalBlocked');
      assert.equal((await grep(s.h, engine, { pattern: 'needle', path: 'link-out.txt' })).error?.code, 'PathTraversalBlocked');
      assert.equal((await grep(s.h, engine, { pattern: 'needle', path: 'linkdir' })).error?.code, 'PathTraversalBlocked');
      assert.equal((await grep(s.h, engine, { pattern: 'needle', path: '.env' })).error?.code, 'PathDenied');
      assert.equal((await grep(s.h, engine, { pattern: 'needle', path: 'hard.txt' })).error?.code, 'PathDenied');
      assert.equal((await grep(s.h, engine, { pattern: 'needle', path: 'pipe.ts' })).error?.code, 'PathDenied');
      assert.equal((await grep(s.h, engine, { pattern: 'needle', type: 'cobol' })).error?.code, 'InvalidArguments');
    } finally {
      s.done();
    }
  });
}

test('grep: hard links are searched when the policy allows them', async (t) => {
  const s = buildTree();
  const h = new Harness([s.ws], { policy: policyFromYaml('version: 1\npaths:\n  allow_hardlinks: true\n') });
  try {
    for (const engine of ['rg', 'builtin'] as const) {
      if (engine === 'rg' && !(await locateRg({ ...process.env, TOOLGATE_RG: '' }))) { t.skip('ripgrep is not installed: only the built-in engine ran'); continue; }
      const r = await grep(h, engine, { pattern: 'hard link' });
      assert.deepEqual(r.data.files, ['hard.txt']);
    }
  } finally {
    h.close();
    s.done();
  }
});

test('grep: paging is in path order and stable; the sorted second ripgrep run agrees with the fallback', async () => {
  const s = buildTree();
  try {
    const rg = await locateRg({ ...process.env, TOOLGATE_RG: '' });
    const args = { pattern: 'needle', path: 'many', output_mode: 'content', head_limit: 5, offset: 20 };
    const b = await grep(s.h, 'builtin', args);
    assert.deepEqual(b.data.matches!.map((m) => `${m.file}:${m.line}`), ['many/f10.txt:1', 'many/f10.txt:2', 'many/f11.txt:1', 'many/f11.txt:2', 'many/f12.txt:1']);
    assert.equal(b.data.truncated, true);
    assert.match(b.text, /showing 21-25/);
    if (rg) {
      // A collection cap of 1 forces the unsorted run to give up and the sorted run to stop early.
      const r = await grep(s.h, 'rg', args, { TOOLGATE_GREP_COLLECT_CAP: '1' });
      assert.deepEqual(r.data.matches, b.data.matches);
      assert.equal(r.data.totals_exact, false);
      assert.equal(r.status, 'partial');
    }
  } finally {
    s.done();
  }
});

test('grep: the built-in walk stops at the visit cap and says so', async () => {
  const s = buildTree();
  try {
    const r = await grep(s.h, 'builtin', { pattern: 'needle' }, { TOOLGATE_GREP_VISIT_CAP: '5' });
    assert.equal(r.ok, true);
    assert.equal(r.status, 'partial');
    assert.equal(r.data.capped, 'visits');
    assert.match(r.text, /visit cap/);
  } finally {
    s.done();
  }
});

test('grep: output over the limits is cut, spilled in full, and data matches the text', async (t) => {
  const s = buildTree();
  const h = new Harness([s.ws], { policy: policyFromYaml('version: 1\nlimits:\n  output_lines: 10\n') });
  try {
    for (const engine of ['rg', 'builtin'] as const) {
      if (engine === 'rg' && !(await locateRg({ ...process.env, TOOLGATE_RG: '' }))) { t.skip('ripgrep is not installed: only the built-in engine ran'); continue; }
      const r = await grep(h, engine, { pattern: 'needle', output_mode: 'content', head_limit: 50 });
      assert.equal(r.status, 'partial');
      assert.equal(r.data.truncated, true);
      assert.ok(r.artifacts.storage_ref && r.artifacts.sha256);
      assert.ok(r.data.matches!.length < 50 && r.data.matches!.length > 0);
      const shown = (toCallToolResult(r).content[0] as { text: string }).text;
      const last = r.data.matches!.at(-1)!;
      assert.ok(shown.includes(`${last.file}:${last.line}:`), 'the last entry in data is in the text block');
      assert.ok(shown.split('\n').length <= 10 + 6, 'the text block stays near the line limit');
    }
  } finally {
    h.close();
    s.done();
  }
});

test('grep: regex translation for the built-in engine', () => {
  const q = (pattern: string, extra: Partial<{ fixed_strings: boolean; ignore_case: boolean; multiline: boolean }> = {}) =>
    toJsPattern({ pattern, fixed_strings: false, ignore_case: false, multiline: false, ...extra });
  const hits = (pattern: string, text: string, extra = {}) => searchText(text, q(pattern, extra), false, 'count', 0)?.count ?? 0;
  assert.equal(hits('^b', 'a\nb\nab\n'), 1);
  assert.equal(hits('a$', 'a\r\nba\n'), 1, '$ is before \\n only, as in ripgrep');
  assert.equal(hits('(?P<x>ab)+', 'abab\n'), 1);
  assert.equal(hits('\\x{41}', 'A\n'), 1);
  assert.equal(hits('[[:digit:]]{3}', 'a123\n'), 1);
  assert.equal(hits('a.c', 'a\rc\n'), 1, '. matches a CR, as in ripgrep');
  assert.equal(hits('\\bfoo\\b', 'foo bar\nfoobar\n'), 1);
  assert.equal(hits('a+b', 'a+b\n', { fixed_strings: true }), 1);
  for (const bad of ['(?=x)', '(?<!x)y', '(a)\\1', 'a{', 'foo(', '*a', 'a\\qb', '[a-z&&b]', 'a\\nb']) {
    assert.throws(() => q(bad), (e: { code?: string }) => e.code === 'InvalidArguments', bad);
  }
  assert.doesNotThrow(() => q('a\\nb', { multiline: true }));
});

test('grep: path order is component-wise (a/ before a.txt), as ripgrep sorts', () => {
  assert.deepEqual(['a.txt', 'a/z.txt', 'a-b', 'a'].sort(comparePaths), ['a', 'a/z.txt', 'a-b', 'a.txt']);
});

test('grep: ripgrep arguments never let a model glob override .gitignore, and the pattern cannot become a flag', () => {
  const q = { pattern: '--pre=sh', fixed_strings: false, ignore_case: false, multiline: false, context: 0, mode: 'files_with_matches' as const, hidden: false, globs: ['src/**/*.ts', '!**/gen/**'], typeGlobs: [] };
  const a = rgArgs({ q: { ...q, hidden: true }, denyGlobs: ['**/.env'], target: '.', atWorkspaceRoot: true }, false);
  assert.ok(a.includes('--regexp=--pre=sh') && a.at(-2) === '--');
  assert.ok(!a.some((x) => x === '--glob=src/**/*.ts'), 'positive globs go through a type, not -g');
  assert.ok(a.includes('--type-add=tgsel:*.ts') && a.includes('--glob=!**/gen/**') && a.includes('--glob=!**/.env'));
});

test('grep: cancellation stops both engines (rg is killed), and the built-in walk honours its time cap', async () => {
  const s = buildTree();
  try {
    const { Workspace } = await import('../../workspace/workspace.js');
    const { PathRules } = await import('../../workspace/path-rules.js');
    const { Selection, DenyFilter } = await import('./select.js');
    const { rgSearch } = await import('./rg.js');
    const { builtinSearchDir } = await import('./fallback.js');
    const ws = new Workspace([s.ws], PathRules.withDefaults());
    const q = { pattern: 'needle', fixed_strings: false, ignore_case: false, multiline: false, context: 0, mode: 'content' as const, hidden: false, globs: [], typeGlobs: [] };
    const common = { q, select: new Selection(q), deny: new DenyFilter(ws, '', s.ws), deadline: Date.now() + 60_000, needed: 101 };
    const code = (e: unknown) => (e as { code?: string }).code;

    const bin = await locateRg({ ...process.env, TOOLGATE_RG: '' });
    if (bin) {
      const ctrl = new AbortController();
      const p = rgSearch({ ...common, bin, denyGlobs: [], cwd: s.ws, target: '.', atWorkspaceRoot: true, signal: ctrl.signal });
      ctrl.abort();
      await assert.rejects(p, (e) => code(e) === 'Cancelled');
    }
    const root = { abs: s.ws, path: s.ws, wsRoot: s.ws, relToRoot: '' };
    const pat = toJsPattern(q);
    const ctrl = new AbortController();
    const p = builtinSearchDir(root, { ...common, pat, allowHardlinks: false, visitCap: 1e6, signal: ctrl.signal });
    ctrl.abort();
    await assert.rejects(p, (e) => code(e) === 'Cancelled');

    const capped = await builtinSearchDir(root, { ...common, deadline: 0, pat, allowHardlinks: false, visitCap: 1e6, signal: new AbortController().signal });
    assert.equal(capped.capped, 'time');
    assert.equal(capped.complete, false);
  } finally {
    s.done();
  }
});

test('grep: deny rules that ripgrep cannot pre-filter (anchored at the root) are still enforced on its results', async (t) => {
  const s = buildTree();
  write(s.ws, 'private/notes.txt', `needle ${SECRET}\n`);
  write(s.ws, 'private/ok.txt', 'needle fine\n');
  write(s.ws, 'conf/db.ini', `needle ${SECRET}\n`);
  const h = new Harness([s.ws], { policy: policyFromYaml('version: 1\npaths:\n  deny: ["private/notes.txt", "conf/*.ini"]\n') });
  try {
    for (const engine of ['rg', 'builtin'] as const) {
      if (engine === 'rg' && !(await locateRg({ ...process.env, TOOLGATE_RG: '' }))) { t.skip('ripgrep is not installed: only the built-in engine ran'); continue; }
      for (const p of ['.', 'private', 'conf']) {
        const r = await grep(h, engine, { pattern: SECRET, path: p, output_mode: 'content' });
        assert.equal(r.ok, true, `${engine} ${p}`);
        assert.equal(r.data.total_files, 0, `${engine} ${p}: ${JSON.stringify(r.data.matches)}`);
      }
      const ok = await grep(h, engine, { pattern: 'needle fine', path: 'private' });
      assert.deepEqual(ok.data.files, ['private/ok.txt']);
    }
  } finally {
    h.close();
    s.done();
  }
});

test('grep: a folder swapped for a symlink to outside, over and over during searches, never leaks outside content', async () => {
  const s = buildTree();
  write(s.ws, 'race/file.txt', 'needle safe\n');
  write(s.out, 'race/file.txt', `needle ${SECRET} raced\nneedle twice outside\n`);
  const real = path.join(s.ws, 'race');
  const swapper = await startFolderSwapper(real, path.join(s.out, 'race'));
  try {
    const rg = await locateRg({ ...process.env, TOOLGATE_RG: '' });
    for (let i = 0; i < 15; i++) {
      for (const engine of rg ? ['rg', 'builtin', 'auto'] as const : ['builtin'] as const) {
        for (const mode of ['content', 'count', 'files_with_matches']) {
          const r = await grep(s.h, engine, { pattern: 'needle', output_mode: mode, head_limit: 2000 });
          const probe = await grep(s.h, engine, { pattern: `${SECRET}|twice`, output_mode: mode });
          assert.equal(probe.data?.total_files ?? 0, 0, `${engine} ${mode}: the outside file never counts as a match`);
          assert.ok(!JSON.stringify(r).includes(SECRET), `${engine} ${mode}: ${JSON.stringify(r.data?.matches?.filter((m) => m.file.startsWith('race')))}`);
          if (mode === 'count') {
            const c = r.data?.counts?.find((x) => x.file === 'race/file.txt');
            assert.ok(!c || c.count === 1, 'a count never comes from the outside file');
          }
        }
      }
    }
  } finally {
    await swapper.stop();
    s.done();
  }
});
