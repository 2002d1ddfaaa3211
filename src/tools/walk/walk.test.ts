import assert from 'node:assert/strict';
import { mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { tempDir } from '../../testing/helpers.js';
import { PathRules } from '../../workspace/path-rules.js';
import { Workspace } from '../../workspace/workspace.js';
import { IgnoreStack } from './ignore-stack.js';
import { walk, type WalkEntry, type WalkOptions } from './walk.js';

function files(root: string, spec: Record<string, string>): void {
  for (const [rel, content] of Object.entries(spec)) {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), content);
  }
}

async function run(dir: string, opts: Partial<Omit<WalkOptions, 'start'>> & { start?: string } = {}) {
  const ws = new Workspace([dir], PathRules.withDefaults([], [], [path.join(dir, '.toolgate')]));
  const start = await ws.resolve(opts.start ?? '.', 'search');
  const seen: WalkEntry[] = [];
  const res = await walk({ workspace: ws, ...opts, start, onEntry: opts.onEntry ?? ((e) => { seen.push(e); }) });
  return { res, rels: seen.map((e) => e.relToRoot).sort(), seen };
}

test('walk visits the tree, skips hidden names, the deny list, the state dir and ignored paths', async () => {
  const { dir, cleanup } = tempDir();
  files(dir, {
    'a.txt': '', 'src/b.ts': '', 'src/deep/c.ts': '', '.hidden/h.txt': '', '.env': 'SECRET=1', 'src/.env.local': 'X=1',
    '.ssh/id_rsa': 'KEY', 'certs/server.pem': 'PEM', '.toolgate/audit.jsonl': '', 'build/out.js': '', 'app.log': '',
    '.gitignore': 'build/\n*.log\n',
  });
  try {
    const { rels, res } = await run(dir);
    assert.deepEqual(rels, ['a.txt', 'certs', 'src', 'src/b.ts', 'src/deep', 'src/deep/c.ts']);
    assert.equal(res.stopped, null);
    assert.ok(res.skipped.denied >= 2, 'server.pem and .env.local denied even though not hidden/hidden');

    const all = await run(dir, { hidden: true, gitignore: false });
    assert.deepEqual(all.rels, ['.gitignore', '.hidden', '.hidden/h.txt', 'a.txt', 'app.log', 'build', 'build/out.js', 'certs', 'src', 'src/b.ts', 'src/deep', 'src/deep/c.ts']);
    for (const r of all.rels) assert.doesNotMatch(r, /\.env|\.ssh|id_rsa|\.pem|\.toolgate/);
  } finally {
    cleanup();
  }
});

test('walk honours nested .gitignore with negation and the ancestors of a start folder', async () => {
  const { dir, cleanup } = tempDir();
  files(dir, {
    '.gitignore': '*.log\n/top-only.txt\n',
    'top-only.txt': '', 'pkg/top-only.txt': '',
    'pkg/.gitignore': '!keep.log\ngen/\n',
    'pkg/keep.log': '', 'pkg/drop.log': '', 'pkg/gen/x.ts': '', 'pkg/src/y.log': '', 'pkg/src/y.ts': '',
    'pkg/.ignore': 'secret-ish.txt\n', 'pkg/secret-ish.txt': '',
  });
  try {
    const whole = await run(dir);
    assert.deepEqual(whole.rels, ['pkg', 'pkg/keep.log', 'pkg/src', 'pkg/src/y.ts', 'pkg/top-only.txt']);
    // Starting inside pkg/src still applies the root's *.log.
    const sub = await run(dir, { start: 'pkg/src' });
    assert.deepEqual(sub.rels, ['pkg/src/y.ts']);
    // A folder named explicitly is walked even though the root's rules ignore it.
    const explicit = await run(dir, { start: 'pkg/gen' });
    assert.deepEqual(explicit.rels, ['pkg/gen/x.ts']);
    const off = await run(dir, { gitignore: false, start: 'pkg' });
    assert.ok(off.rels.includes('pkg/gen/x.ts') && off.rels.includes('pkg/drop.log') && off.rels.includes('pkg/secret-ish.txt'));
  } finally {
    cleanup();
  }
});

test('walk reports symlinks without following them, even to folders outside', async () => {
  const { dir, cleanup } = tempDir();
  const outside = tempDir('tg-out-');
  files(outside.dir, { 'stolen.txt': 'outside' });
  files(dir, { 'in/real.txt': '' });
  symlinkSync(outside.dir, path.join(dir, 'link-out'));
  symlinkSync(path.join(dir, 'in'), path.join(dir, 'link-in'));
  try {
    const { seen } = await run(dir);
    const byRel = new Map(seen.map((e) => [e.relToRoot, e.type]));
    assert.equal(byRel.get('link-out'), 'symlink');
    assert.equal(byRel.get('link-in'), 'symlink');
    assert.ok(![...byRel.keys()].some((r) => r.startsWith('link-out/') || r.startsWith('link-in/')));
  } finally {
    cleanup();
    outside.cleanup();
  }
});

test('walk stops at the visit cap, at maxDepth, on abort, and when onEntry says so', async () => {
  const { dir, cleanup } = tempDir();
  const spec: Record<string, string> = {};
  for (let i = 0; i < 30; i++) spec[`d${i % 3}/f${i}.txt`] = '';
  files(dir, spec);
  try {
    const capped = await run(dir, { maxVisits: 10 });
    assert.equal(capped.res.stopped, 'visit_cap');
    assert.equal(capped.res.visited, 10);
    assert.ok(capped.rels.length <= 10);

    const shallow = await run(dir, { maxDepth: 1 });
    assert.deepEqual(shallow.rels, ['d0', 'd1', 'd2']);

    const ctrl = new AbortController();
    ctrl.abort();
    const aborted = await run(dir, { signal: ctrl.signal });
    assert.equal(aborted.res.stopped, 'aborted');

    let n = 0;
    const stopped = await run(dir, { onEntry: () => ++n < 5 });
    assert.equal(stopped.res.stopped, 'stopped');
    assert.equal(n, 5);
  } finally {
    cleanup();
  }
});

test('walk does not enter .git unless hidden files and no-ignore are both asked for', async () => {
  const { dir, cleanup } = tempDir();
  files(dir, { '.git/HEAD': 'ref', '.git/objects/ab/cd': '', 'a.ts': '' });
  try {
    const hidden = await run(dir, { hidden: true });
    assert.ok(hidden.rels.includes('.git'));
    assert.ok(!hidden.rels.includes('.git/HEAD'));
    const raw = await run(dir, { hidden: true, gitignore: false });
    assert.ok(raw.rels.includes('.git/HEAD'));
  } finally {
    cleanup();
  }
});

test('IgnoreStack: as ripgrep, a match in an .rgignore beats one in an .ignore, which beats one in a .gitignore, whatever their depth', () => {
  // Texts by kind: [.gitignore, .ignore, .rgignore] (RG_IGNORE_FILES order).
  const s = IgnoreStack.empty()
    .with('a', [null, 'gen*', null]).with('a/b', ['!gen-keep.h', null, null])
    .with('c', ['x*', null, null]).with('c/d', [null, '!x1', null])
    .with('e', [null, null, 'y*']).with('e/f', [null, '!y1', '!y2']);
  assert.equal(s.ignored('a/b/gen-keep.h', false), true, 'a shallower .ignore beats a deeper .gitignore');
  assert.equal(s.ignored('c/d/x1', false), false, 'a deeper .ignore beats a shallower .gitignore');
  assert.equal(s.ignored('c/d/x2', false), true);
  assert.equal(s.ignored('e/f/y1', false), true, 'a shallower .rgignore beats a deeper .ignore');
  assert.equal(s.ignored('e/f/y2', false), false, 'the deeper of two .rgignore files decides');
});

test('IgnoreStack: the deepest file with a matching rule decides', () => {
  const s = IgnoreStack.empty().with('', ['*.log', 'tmp/']).with('a', ['!important.log']);
  assert.equal(s.ignored('x.log', false), true);
  assert.equal(s.ignored('a/important.log', false), false);
  assert.equal(s.ignored('a/other.log', false), true);
  assert.equal(s.ignored('tmp', true), true);
  assert.equal(s.ignored('tmp', false), false, 'tmp/ only matches a folder');
  assert.equal(IgnoreStack.empty().with('', ['# only a comment', '']).size, 0);
});

test('walk: a folder swapped for a symlink after it was seen is skipped, not followed', async () => {
  const { dir, cleanup } = tempDir();
  const outside = tempDir('tg-out-');
  files(outside.dir, { 'stolen.txt': 'outside' });
  files(dir, { 'a/inner.txt': '', 'b.txt': '' });
  try {
    const { rels, res } = await run(dir, {
      // Called after readdir saw `a` as a folder and before the walk opens it: the attacker's window.
      descend: (e) => {
        if (e.name === 'a') { renameSync(path.join(dir, 'a'), path.join(dir, 'a-moved')); symlinkSync(outside.dir, path.join(dir, 'a')); }
        return true;
      },
    });
    assert.ok(!rels.some((r) => r.includes('stolen')), rels.join(','));
    assert.equal(res.skipped.unreadable, 1);
  } finally {
    cleanup();
    outside.cleanup();
  }
});
