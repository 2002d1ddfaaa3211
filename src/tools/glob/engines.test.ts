import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { Envelope } from '../../core/envelope.js';
import { Harness, policyFromYaml, settle, startFolderSwapper, tempDir, withEngine, writeIn } from '../../testing/helpers.js';
import { locateRg } from '../grep/rg.js';

// These tests compare the glob engines on small trees: ripgrep and the index run even where glob
// would walk a folder this small itself (TOOLGATE_GLOB_WALK_MAX; servers spawned here inherit it).
process.env.TOOLGATE_GLOB_WALK_MAX = '0';

// The glob engines on the same trees: the folder index (the default), ripgrep (rg --files) and the
// built-in walker must give the same files, totals and skipped_by_policy, and neither may return a secret, a denied or
// asked path, anything outside, or anything reached through a link.

const OUTSIDE_MARK = 'OUTSIDE-glob-3f9';

interface GlobData { files: string[]; total: number; count: number; truncated: boolean; stopped: string | null; skipped_by_policy?: number; engine: string; fallback_reason: string | null }
type Env = Envelope & { data: GlobData };

const write = writeIn;

const POLICY = `
rules:
  - { tool: glob, path: "private/**", decision: deny }
  - { tool: "*", path: "denied-all/**", decision: deny }
  - { tool: "*", path: "asked/**", decision: ask }
  - { tool: "*", path: "src/**/*.ask.h", decision: ask }
`;

// The same, without ask rules: glob then lists through rg with a file-name --glob override
// (which rg applies instead of the ignore files and the hidden test to the files it matches).
const POLICY_NO_ASK = `
rules:
  - { tool: glob, path: "private/**", decision: deny }
  - { tool: "*", path: "denied-all/**", decision: deny }
`;

function fixture(policy = POLICY) {
  const t = tempDir('tg-glob-eng-');
  const ws = path.join(t.dir, 'ws');
  const out = path.join(t.dir, 'outside');
  mkdirSync(ws);
  write(out, `${OUTSIDE_MARK}.h`);
  write(out, `deep/${OUTSIDE_MARK}-deep.h`);
  const files = [
    // The kernel's root .gitignore: it starts with `.*`, then re-includes a few dot-files.
    ['.gitignore', '.*\n*.o\n*.log\nbuild/\n/vmlinux*\nign.h/\n!.gitignore\n!.mailmap\n'],
    // Folders named like the pattern: an ignored one and a hidden one (an override glob matches folders too).
    ['src/ign.h/in.h', ''], ['src/.dot.h/in.h', ''],
    ['.mailmap', ''], ['.clang-format', ''], ['vmlinux.h', ''], ['top.h', ''], ['README', ''], ['x.log', ''],
    ['src/a.c', ''], ['src/a.h', ''], ['src/a.o', ''], ['src/x.ask.h', ''], ['src/sub/b.h', ''], ['src/sub/.hidden.h', ''],
    ['src/sub/.gitignore', 'gen*.h\n!gen-keep.h\n'], ['src/sub/gen1.h', ''], ['src/sub/gen-keep.h', ''], ['src/sub/deeper/vmlinux.h', ''],
    ['src/keep/.gitignore', '!important.log\n'], ['src/keep/important.log', ''], ['src/keep/other.log', ''],
    ['build/gen.h', ''], ['build/sub/x.c', ''],
    ['lib/.ignore', '*.tmp.h\n'], ['lib/y.h', ''], ['lib/z.tmp.h', ''],
    ['.config/c.h', ''], ['.github/workflows/ci.yml', ''], ['.git/HEAD', ''], ['.git/objects/ab.h', ''],
    ['.env', 'SECRET=1'], ['config/.env.local', 'SECRET=2'], ['keys/server.pem', ''], ['keys/ok.h', ''], ['.ssh/id_rsa', ''],
    ['private/p.h', ''], ['private/deep/q.h', ''], ['denied-all/d.h', ''], ['asked/a.h', ''], ['asked/more/b.h', ''],
    ['only-links/.keep', ''],
  ] as const;
  for (const [rel, content] of files) write(ws, rel, content);
  symlinkSync(path.join(ws, 'src/a.h'), path.join(ws, 'link-in.h'));
  symlinkSync(path.join(out, `${OUTSIDE_MARK}.h`), path.join(ws, 'link-out.h'));
  symlinkSync(path.join(ws, 'src'), path.join(ws, 'link-dir'));
  symlinkSync(out, path.join(ws, 'link-outdir'));
  symlinkSync(path.join(ws, 'nowhere.h'), path.join(ws, 'broken.h'));
  symlinkSync(path.join(ws, 'src/sub'), path.join(ws, 'src/sub-link.h'));
  symlinkSync(path.join(ws, 'top.h'), path.join(ws, 'only-links/l.h'));
  // Links the ignore rules, hidden names or the policy leave out (rg never lists links: these test find's side).
  for (const l of ['build/link.h', '.config/link.h', 'link.o', '.hidden-link.h', 'src/sub/gen2.h', 'lib/l.tmp.h', 'private/link.h', 'asked/link.h', 'keys/link.pem']) {
    symlinkSync(path.join(ws, 'top.h'), path.join(ws, l));
  }
  const state = path.join(t.dir, 'state');
  const h = new Harness([ws], { policy: policyFromYaml(policy), stateDir: state });
  return { ws, out, h, done: () => { h.close(); t.cleanup(); } };
}

type Engine = 'rg' | 'builtin' | 'index';
const ENGINE_NAME: Record<Engine, string> = { rg: 'ripgrep', builtin: 'builtin', index: 'index' };

async function globWith(h: Harness, engine: Engine, args: Record<string, unknown>, racing = false): Promise<Env> {
  // The index answers from folders unchanged for a moment (else glob walks): let the fixture settle.
  if (engine === 'index' && !racing) await settle(h.workspace);
  return withEngine(engine, async () => {
    const env = await h.call('glob', args) as Env;
    assert.ok(h.rt.tools.get('glob')!.envelope.safeParse(env).success, 'envelope matches the output schema');
    // While a folder is swapped the index cannot prove what it read: then the walker answers.
    if (env.ok && !(racing && engine === 'index' && env.data.engine === 'builtin')) assert.equal(env.data.engine, ENGINE_NAME[engine], `${JSON.stringify(args)}: ${env.data.fallback_reason}`);
    return env;
  });
}

const comparable = (e: Env) => (e.ok
  ? { files: e.data.files, total: e.data.total, count: e.data.count, truncated: e.data.truncated, stopped: e.data.stopped, skipped: e.data.skipped_by_policy ?? 0, status: e.status, spilled: !!e.artifacts.storage_ref }
  : { error: e.error?.code });

/** What must never appear in any answer. */
function leaks(e: Env, args: Record<string, unknown> = {}): string[] {
  const s = JSON.stringify(e.data?.files ?? []);
  // .git is walked only when both hidden files and no ignore rules are asked for.
  const never = [OUTSIDE_MARK, '.env', 'server.pem', 'id_rsa', 'private/', 'denied-all/', 'asked/', 'x.ask.h', 'link-dir/', 'link-outdir/', 'src/sub-link.h/'];
  if (args.gitignore !== false) never.push('.git/');
  return never.filter((x) => s.includes(x));
}

// [args, the files expected, or the error code (null: only compare the engines)]
const CASES: Array<[Record<string, unknown>, string[] | string | null]> = [
  [{ pattern: '**/*.h' }, ['broken.h', 'keys/ok.h', 'lib/y.h', 'link-in.h', 'link-out.h', 'only-links/l.h', 'src/a.h', 'src/sub-link.h', 'src/sub/b.h', 'src/sub/deeper/vmlinux.h', 'src/sub/gen-keep.h', 'top.h']],
  [{ pattern: '**/*' }, null],
  [{ pattern: '**' }, null],
  [{ pattern: '*' }, null],
  [{ pattern: '**/*', hidden: true }, null],
  [{ pattern: '**/*', gitignore: false }, null],
  [{ pattern: '**/*', hidden: true, gitignore: false }, null],
  // The root .gitignore's `.*` ignores .github: a pattern naming it shows it only without ignore rules.
  [{ pattern: '.github/**' }, []],
  [{ pattern: '.github/**', gitignore: false }, ['.github/workflows/ci.yml']],
  [{ pattern: '**/*.yml', path: '.github' }, ['.github/workflows/ci.yml']],
  [{ pattern: '**/.*' }, null],
  [{ pattern: '.*' }, ['.gitignore', '.mailmap']],
  [{ pattern: 'src/**' }, null],
  [{ pattern: 'src/**/*.h' }, ['src/a.h', 'src/sub-link.h', 'src/sub/b.h', 'src/sub/deeper/vmlinux.h', 'src/sub/gen-keep.h']],
  [{ pattern: 'src/*/*.h' }, null],
  [{ pattern: '**/*.h', path: 'src' }, ['src/a.h', 'src/sub-link.h', 'src/sub/b.h', 'src/sub/deeper/vmlinux.h', 'src/sub/gen-keep.h']],
  [{ pattern: '**/*.log', path: 'src' }, ['src/keep/important.log']],
  [{ pattern: '**/*.log' }, ['src/keep/important.log']],
  [{ pattern: '*.h', path: 'src/sub' }, ['src/sub/b.h', 'src/sub/gen-keep.h']],
  [{ pattern: '**/vmlinux*' }, ['src/sub/deeper/vmlinux.h']],
  [{ pattern: '**/*', path: 'build' }, ['build/gen.h', 'build/link.h', 'build/sub/x.c']],
  [{ pattern: 'build/**' }, []],
  [{ pattern: '**/*.{h,c}', path: 'lib' }, ['lib/y.h']],
  [{ pattern: '**/*.h', path: 'lib', gitignore: false }, ['lib/l.tmp.h', 'lib/y.h', 'lib/z.tmp.h']],
  [{ pattern: 'asked/**' }, 'ApprovalRequired'],
  [{ pattern: '**/*', path: 'private' }, null],
  [{ pattern: '**/*.pem', hidden: true, gitignore: false }, []],
  [{ pattern: '**/*.h', limit: 3 }, null],
  [{ pattern: 'link-dir/**' }, []],
  [{ pattern: '**/*.h', path: 'link-dir' }, null],
  [{ pattern: 'link-outdir/**/*.h' }, []],
  [{ pattern: '[st]*/**/[ab].h' }, ['src/a.h', 'src/sub/b.h']],
];

test('glob engines: the index, ripgrep and the built-in walker give the same answer on every case', async (t) => {
  const rg = await locateRg({ ...process.env, TOOLGATE_RG: '' });
  if (!rg) return t.skip('needs ripgrep (rg) on PATH to compare the engines');
  const s = fixture();
  try {
    for (const [args, expected] of CASES) {
      const a = await globWith(s.h, 'rg', args);
      const b = await globWith(s.h, 'builtin', args);
      const c = await globWith(s.h, 'index', args);
      const what = JSON.stringify(args);
      assert.deepEqual(comparable(a), comparable(b), `${what}: ripgrep ${JSON.stringify(a.data ?? a.error)} vs walker ${JSON.stringify(b.data ?? b.error)}`);
      assert.deepEqual(comparable(c), comparable(b), `${what}: index ${JSON.stringify(c.data ?? c.error)} vs walker ${JSON.stringify(b.data ?? b.error)}`);
      if (expected !== null) assert.deepEqual(a.ok ? a.data.files : a.error?.code, expected, what);
      assert.deepEqual(leaks(a, args), [], `${what} (ripgrep)`);
      assert.deepEqual(leaks(b, args), [], `${what} (walker)`);
      assert.deepEqual(leaks(c, args), [], `${what} (index)`);
    }
  } finally {
    s.done();
  }
});

test('glob engines: without ask rules (ripgrep lists through a file-name --glob override) the engines still give the same answer on every case', async (t) => {
  const rg = await locateRg({ ...process.env, TOOLGATE_RG: '' });
  if (!rg) return t.skip('needs ripgrep (rg) on PATH to compare the engines');
  const s = fixture(POLICY_NO_ASK);
  try {
    for (const [args] of CASES) {
      const a = await globWith(s.h, 'rg', args);
      const b = await globWith(s.h, 'builtin', args);
      const c = await globWith(s.h, 'index', args);
      const what = JSON.stringify(args);
      assert.deepEqual(comparable(a), comparable(b), `${what}: ripgrep ${JSON.stringify(a.data ?? a.error)} vs walker ${JSON.stringify(b.data ?? b.error)}`);
      assert.deepEqual(comparable(c), comparable(b), `${what}: index ${JSON.stringify(c.data ?? c.error)} vs walker ${JSON.stringify(b.data ?? b.error)}`);
      const files = JSON.stringify(a.data?.files ?? []);
      for (const never of [OUTSIDE_MARK, '.env', 'server.pem', 'private/', 'denied-all/', 'link-outdir/']) assert.ok(!files.includes(never), `${what}: ${never}`);
    }
    // What the override would bring in and the walker's rules leave out: a file an ignore file
    // names (the root's /vmlinux*, src/sub's gen*.h), a hidden file, and what lies in an ignored
    // or hidden folder whose own name matches.
    const h = await globWith(s.h, 'rg', { pattern: '**/*.h' });
    assert.deepEqual(h.data.files, ['asked/a.h', 'asked/link.h', 'asked/more/b.h', 'broken.h', 'keys/ok.h', 'lib/y.h', 'link-in.h', 'link-out.h', 'only-links/l.h', 'src/a.h', 'src/sub-link.h', 'src/sub/b.h', 'src/sub/deeper/vmlinux.h', 'src/sub/gen-keep.h', 'src/x.ask.h', 'top.h']);
    const sub = await globWith(s.h, 'rg', { pattern: '*.h', path: 'src/sub' });
    assert.deepEqual(sub.data.files, ['src/sub/b.h', 'src/sub/gen-keep.h']);
    const shown = await globWith(s.h, 'rg', { pattern: '**/*.h', path: 'src', hidden: true, gitignore: false });
    for (const f of ['src/ign.h/in.h', 'src/.dot.h/in.h', 'src/sub/.hidden.h', 'src/sub/gen1.h']) assert.ok(shown.data.files.includes(f), f);
  } finally {
    s.done();
  }
});

test('glob engines: ask rules are counted the same, limit and spill behave the same', async (t) => {
  const rg = await locateRg({ ...process.env, TOOLGATE_RG: '' });
  if (!rg) return t.skip('needs ripgrep (rg) on PATH to compare the engines');
  const s = fixture();
  try {
    const all = await globWith(s.h, 'rg', { pattern: '**/*' });
    // asked/ (a folder: one entry) and src/x.ask.h.
    assert.equal(all.data.skipped_by_policy, 2, all.text);
    assert.equal((await globWith(s.h, 'index', { pattern: '**/*' })).data.skipped_by_policy, 2);
    const cut = await globWith(s.h, 'rg', { pattern: '**/*.h', limit: 3 });
    const cutB = await globWith(s.h, 'builtin', { pattern: '**/*.h', limit: 3 });
    const cutC = await globWith(s.h, 'index', { pattern: '**/*.h', limit: 3 });
    assert.equal(cut.status, 'partial');
    assert.equal(cut.data.count, 3);
    assert.equal(cut.data.total, 12);
    const ref = cut.artifacts.storage_ref;
    assert.ok(ref, cut.text);
    const refB = cutB.artifacts.storage_ref!;
    const read = (r: string) => readFileSync(path.isAbsolute(r) ? r : path.join(s.ws, r), 'utf8');
    assert.equal(read(ref).trim().split('\n').length, 12);
    assert.equal(read(ref), read(refB), 'the spilled full lists are the same');
    assert.equal(read(cutC.artifacts.storage_ref!), read(refB), 'the index spills the same list');
  } finally {
    s.done();
  }
});

test('glob engines: without ripgrep the ripgrep engine falls back to the walker and says why; the index (the default) needs none', async () => {
  const s = fixture();
  try {
    const b = await withEngine('rg', async () => { process.env.TOOLGATE_RG = 'off'; return s.h.call('glob', { pattern: '**/*.h' }) as Promise<Env>; });
    assert.equal(b.data.engine, 'builtin');
    assert.match(b.data.fallback_reason ?? '', /TOOLGATE_RG=off/);
    assert.match(b.text, /Built-in walker used/);
    const w = await globWith(s.h, 'builtin', { pattern: '**/*.h' });
    assert.match(w.data.fallback_reason ?? '', /TOOLGATE_GLOB_ENGINE=walker/);
    const saved = process.env.PATH;
    process.env.PATH = '/nonexistent-bin';
    try {
      const none = await withEngine('rg', () => s.h.call('glob', { pattern: '**/*.h' })) as Env;
      if (!process.env.TOOLGATE_RG || !/^\//.test(process.env.TOOLGATE_RG)) {
        assert.equal(none.data.engine, 'builtin');
        assert.match(none.data.fallback_reason ?? '', /not on PATH|turned off/);
      }
      // The index needs no ripgrep: it is the default, and answers the same.
      await settle(s.h.workspace);
      const index = await s.h.call('glob', { pattern: '**/*.h' }) as Env;
      assert.equal(index.data.engine, 'index');
      assert.equal(index.data.fallback_reason, null);
      assert.deepEqual(index.data.files, b.data.files);
    } finally {
      process.env.PATH = saved;
    }
  } finally {
    s.done();
  }
});

test('glob engines: the ripgrep engine needs no find on PATH (links come from the link cache) and answers as the walker does', async (t) => {
  const rg = await locateRg({ ...process.env, TOOLGATE_RG: '' });
  if (!rg) return t.skip('needs ripgrep (rg) on PATH');
  const s = fixture();
  const saved = { PATH: process.env.PATH, TOOLGATE_RG: process.env.TOOLGATE_RG };
  const empty = tempDir('tg-nopath-');
  try {
    const want = await globWith(s.h, 'builtin', { pattern: '**/*.h' });
    process.env.TOOLGATE_RG = rg;
    process.env.PATH = empty.dir;
    const env = await withEngine('rg', async () => { process.env.TOOLGATE_RG = rg; return s.h.call('glob', { pattern: '**/*.h' }) as Promise<Env>; });
    assert.equal(env.data.engine, 'ripgrep');
    assert.deepEqual(env.data.files, want.data.files);
  } finally {
    process.env.PATH = saved.PATH;
    if (saved.TOOLGATE_RG === undefined) delete process.env.TOOLGATE_RG; else process.env.TOOLGATE_RG = saved.TOOLGATE_RG;
    empty.cleanup();
    s.done();
  }
});

test('glob engines: a folder swapped for a link to outside during the listing never brings in an outside name', async () => {
  const s = fixture();
  const real = path.join(s.ws, 'race');
  write(s.ws, 'race/inside.h');
  write(s.out, `race/${OUTSIDE_MARK}-raced.h`);
  const swapper = await startFolderSwapper(real, path.join(s.out, 'race'));
  try {
    const rg = await locateRg({ ...process.env, TOOLGATE_RG: '' });
    for (let i = 0; i < 25; i++) {
      for (const engine of rg ? ['rg', 'builtin', 'index'] as const : ['builtin', 'index'] as const) {
        for (const args of [{ pattern: '**/*.h' }, { pattern: 'race/**' }, { pattern: '**', hidden: true, gitignore: false }]) {
          const r = await globWith(s.h, engine, args, true);
          assert.ok(!JSON.stringify(r).includes(OUTSIDE_MARK), `${engine} ${JSON.stringify(args)}: ${JSON.stringify(r.data?.files?.filter((f) => f.startsWith('race')))}`);
        }
      }
    }
  } finally {
    await swapper.stop();
    s.done();
  }
});

test('glob engines: ignore files created, changed and removed between calls on one workspace (rules above the start apply) are seen at once', async (t) => {
  const rg = await locateRg({ ...process.env, TOOLGATE_RG: '' });
  if (!rg) return t.skip('needs ripgrep (rg) on PATH');
  const s = fixture();
  t.after(() => s.done());
  const same = async (label: string) => {
    const a = await globWith(s.h, 'rg', { pattern: '**/*.h', path: 'src' });
    const b = await globWith(s.h, 'builtin', { pattern: '**/*.h', path: 'src' });
    const c = await globWith(s.h, 'index', { pattern: '**/*.h', path: 'src' });
    assert.deepEqual(a.data.files, b.data.files, label);
    assert.deepEqual(c.data.files, b.data.files, `${label} (index)`);
    return a.data.files;
  };
  const before = await same('start');
  assert.ok(before.includes('src/sub/deeper/vmlinux.h'));
  // A new .gitignore in a folder that had none (its folder's ctime changes).
  write(s.ws, 'src/sub/deeper/.gitignore', 'vmlinux.h\n');
  assert.ok(!(await same('created')).includes('src/sub/deeper/vmlinux.h'), 'a new ignore file is applied');
  // Its content changed (the folder's ctime does not): still read every call.
  write(s.ws, 'src/sub/deeper/.gitignore', 'nothing\n');
  assert.ok((await same('changed')).includes('src/sub/deeper/vmlinux.h'), 'a changed ignore file is applied');
  write(s.ws, 'src/sub/deeper/.ignore', 'vmlinux.h\n');
  assert.ok(!(await same('.ignore created')).includes('src/sub/deeper/vmlinux.h'));
  const { unlinkSync } = await import('node:fs');
  unlinkSync(path.join(s.ws, 'src/sub/deeper/.ignore'));
  assert.ok((await same('removed')).includes('src/sub/deeper/vmlinux.h'), 'a removed ignore file no longer applies');
});

test('glob engines: an .rgignore above the folder that re-includes what the folder\'s own .ignore hides (review 25): every engine shows it', async (t) => {
  const rg = await locateRg({ ...process.env, TOOLGATE_RG: '' });
  if (!rg) return t.skip('needs ripgrep (rg) on PATH');
  const tmp = tempDir('tg-glob-reinc-');
  t.after(tmp.cleanup);
  const ws = tmp.dir;
  // rg, started in n/ with --no-ignore-parent, reads only n/.ignore (`**`) and lists nothing; the
  // root .rgignore, a stronger kind, re-includes n/.hid.h and n/k.h.
  write(ws, '.rgignore', '!.hid.h\n!k.h\n');
  write(ws, 'n/.ignore', '**\n');
  for (const f of ['n/.hid.h', 'n/k.h', 'n/other.h', 'n/sub/k.h']) write(ws, f, '');
  const h = new Harness([ws]);
  t.after(() => h.close());
  for (const args of [{ pattern: '**/*.h', path: 'n', hidden: true }, { pattern: '**/*.h', path: 'n' }]) {
    const want = await globWith(h, 'builtin', args);
    assert.ok(want.data.files.includes('n/k.h'), JSON.stringify(want.data.files));
    const idx = await globWith(h, 'index', args);
    assert.deepEqual(idx.data.files, want.data.files, `index ${JSON.stringify(args)}`);
    const r = await withEngine('rg', () => h.call('glob', args) as Promise<Env>);
    assert.deepEqual(r.data.files, want.data.files, `ripgrep engine ${JSON.stringify(args)} (${r.data.engine}: ${r.data.fallback_reason})`);
    assert.match(r.data.fallback_reason ?? '', /re-includes/);
  }
  // A .gitignore's `!` above (the kernel's root has some) leaves the call to rg: a deeper file of the same kind wins over it anyway.
  rmSync(path.join(ws, '.rgignore'));
  write(ws, 'g/.gitignore', '*.h\n');
  write(ws, 'g/x.h', '');
  write(ws, '.gitignore', '!x.h\n');
  const viaRg = await withEngine('rg', () => h.call('glob', { pattern: '**/*', path: 'g' }) as Promise<Env>);
  assert.equal(viaRg.data.engine, 'ripgrep', viaRg.data.fallback_reason ?? '');
  assert.deepEqual(viaRg.data.files, (await globWith(h, 'builtin', { pattern: '**/*', path: 'g' })).data.files);
});

test('glob engines: ignore files that start with a byte-order mark (review 26): applied as git applies them, by every engine', async (t) => {
  const rg = await locateRg({ ...process.env, TOOLGATE_RG: '' });
  if (!rg) return t.skip('needs ripgrep (rg) on PATH');
  const BOM = '\uFEFF';
  const cases: Array<[string, Record<string, string>, Record<string, unknown>, string[]]> = [
    // A re-including rule above the start, behind the mark: the walker answers for the ripgrep engine.
    ['above, re-including', { '.rgignore': `${BOM}!k.h\nzz\n`, 'n/.ignore': '**\n', 'n/k.h': '', 'n/other.h': '' }, { pattern: '**/*', path: 'n' }, ['n/k.h']],
    ['above, re-including, CRLF', { '.ignore': `${BOM}!*.h\r\nzz\r\n`, 'n/.gitignore': '*.h\r\n', 'n/k.h': '', 'n/a.c': '' }, { pattern: '**/*', path: 'n' }, ['n/a.c', 'n/k.h']],
    // A file whose only rule follows the mark is a file with a rule (git: k.h is ignored).
    ['one rule', { '.gitignore': `${BOM}*.h\n`, 'k.h': '', 'a.c': '' }, { pattern: '**/*' }, ['a.c']],
    // At or below the start, ripgrep 13 reads the mark as part of the first rule: the walker answers.
    ['below', { 'n/.ignore': `${BOM}*.h\nzz\n`, 'n/k.h': '', 'n/a.c': '' }, { pattern: '**/*', path: 'n' }, ['n/a.c']],
  ];
  for (const [label, tree, args, want] of cases) {
    const tmp = tempDir('tg-glob-bom-');
    try {
      for (const [rel, text] of Object.entries(tree)) write(tmp.dir, rel, text);
      const h = new Harness([tmp.dir]);
      try {
        for (const engine of ['builtin', 'index', 'rg'] as const) {
          const env = engine === 'rg' ? await withEngine('rg', () => h.call('glob', args) as Promise<Env>) : await globWith(h, engine, args);
          assert.deepEqual(env.data.files, want, `${label}: ${engine} (${env.data.engine}: ${env.data.fallback_reason})`);
        }
      } finally {
        h.close();
      }
    } finally {
      tmp.cleanup();
    }
  }
});
