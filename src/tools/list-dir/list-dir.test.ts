import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { Envelope } from '../../core/envelope.js';
import { Harness, policyFromYaml, tempDir } from '../../testing/helpers.js';
import { SYNC_LIST_MAX } from '../../workspace/safe-open.js';

function files(root: string, spec: Record<string, string>): void {
  for (const [rel, content] of Object.entries(spec)) {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), content);
  }
}

interface Entry { name: string; path: string; type: string; size: number | null; mtime_ms: number | null }
interface ListData { path: string; entries: Entry[]; total: number; truncated: boolean; next_offset: number | null; hidden_skipped: number; ignored_skipped: number }

function setup(spec: Record<string, string>) {
  const t = tempDir();
  files(t.dir, spec);
  const h = new Harness([t.dir]);
  const list = async (args: Record<string, unknown>) => {
    const env = await h.call('list_dir', args);
    assert.ok(h.rt.tools.get('list_dir')!.envelope.safeParse(env).success, 'envelope matches the output schema');
    return env as Envelope & { data: ListData };
  };
  return { dir: t.dir, h, list, done: () => { h.close(); t.cleanup(); } };
}

test('list_dir: folders first then names, with type, size and mtime', async () => {
  const s = setup({ 'b.txt': 'hello', 'a.txt': '', 'zdir/x': '', 'adir/y': '' });
  try {
    const env = await s.list({});
    assert.equal(env.ok, true);
    assert.deepEqual(env.data.entries.map((e) => e.name), ['adir', 'zdir', 'a.txt', 'b.txt']);
    const b = env.data.entries.find((e) => e.name === 'b.txt')!;
    assert.deepEqual([b.type, b.size, b.path], ['file', 5, 'b.txt']);
    assert.ok(typeof b.mtime_ms === 'number' && b.mtime_ms > 0);
    assert.equal(env.data.entries[0]!.type, 'dir');
    const sub = await s.list({ path: 'zdir' });
    assert.deepEqual(sub.data.entries.map((e) => e.path), ['zdir/x']);
    assert.equal(sub.data.path, 'zdir');
  } finally {
    s.done();
  }
});

test('list_dir: pages with offset and limit', async () => {
  const spec: Record<string, string> = {};
  for (let i = 0; i < 12; i++) spec[`f${String(i).padStart(2, '0')}`] = '';
  const s = setup(spec);
  try {
    const p1 = await s.list({ limit: 5 });
    assert.deepEqual(p1.data.entries.map((e) => e.name), ['f00', 'f01', 'f02', 'f03', 'f04']);
    assert.equal(p1.data.total, 12);
    assert.equal(p1.data.truncated, true);
    assert.equal(p1.data.next_offset, 5);
    assert.equal(p1.status, 'partial');
    assert.match(p1.text, /offset 5/);
    const p3 = await s.list({ limit: 5, offset: 10 });
    assert.deepEqual(p3.data.entries.map((e) => e.name), ['f10', 'f11']);
    assert.equal(p3.data.next_offset, null);
    assert.equal(p3.status, 'ok');
    const past = await s.list({ offset: 50 });
    assert.equal(past.ok, true);
    assert.deepEqual(past.data.entries, []);
  } finally {
    s.done();
  }
});

test('list_dir: hidden, .gitignore and ignore globs only on request, and counted', async () => {
  const s = setup({ '.hidden': '', 'keep.ts': '', 'debug.log': '', 'node_modules/x/index.js': '', 'gen/a.js': '', '.gitignore': '*.log\nnode_modules/\n' });
  try {
    const env = await s.list({});
    assert.deepEqual(env.data.entries.map((e) => e.name), ['gen', 'keep.ts']);
    assert.equal(env.data.hidden_skipped, 1 + 1, '.hidden and .gitignore');
    assert.equal(env.data.ignored_skipped, 2);
    const all = await s.list({ hidden: true, gitignore: false });
    assert.deepEqual(all.data.entries.map((e) => e.name), ['gen', 'node_modules', '.gitignore', '.hidden', 'debug.log', 'keep.ts']);
    const globs = await s.list({ ignore: ['gen', '*.ts'] });
    assert.deepEqual(globs.data.entries.map((e) => e.name), []);
    assert.deepEqual((await s.list({ path: 'node_modules' })).data.entries.map((e) => e.name), ['x'], 'a folder named explicitly is listed even if ignored');
    // An ancestor's .gitignore applies inside a subfolder.
    files(s.dir, { 'gen/trace.log': '' });
    assert.deepEqual((await s.list({ path: 'gen' })).data.entries.map((e) => e.name), ['a.js']);
  } finally {
    s.done();
  }
});

test('list_dir: secrets and the state dir are never listed, not even their names', async () => {
  const s = setup({ 'app.ts': '', '.env': 'SECRET=1', '.env.local': 'X=1', 'server.key': 'K', '.ssh/id_rsa': 'KEY', '.npmrc': '//registry:_authToken=x', 'sub/.netrc': 'machine x' });
  try {
    await s.list({}); // creates .toolgate (audit) if it was not there yet
    const env = await s.list({ hidden: true, gitignore: false });
    assert.deepEqual(env.data.entries.map((e) => e.name), ['sub', 'app.ts']);
    assert.doesNotMatch(JSON.stringify(env), /\.env|\.ssh|server\.key|\.npmrc|\.toolgate/);
    assert.deepEqual((await s.list({ path: 'sub', hidden: true })).data.entries, []);
    const ssh = await s.list({ path: '.ssh' });
    assert.equal(ssh.ok, false);
    assert.equal(ssh.error?.code, 'PathDenied');
  } finally {
    s.done();
  }
});

test('list_dir: symlinks are listed as symlinks and not followed; paths out are refused', async () => {
  const out = tempDir('tg-out-');
  files(out.dir, { 'stolen.txt': 'x' });
  const s = setup({ 'in/a.txt': '' });
  symlinkSync(out.dir, path.join(s.dir, 'link-out'));
  symlinkSync('/nonexistent/target', path.join(s.dir, 'dangling'));
  try {
    const env = await s.list({});
    const byName = Object.fromEntries(env.data.entries.map((e) => [e.name, e.type]));
    assert.deepEqual(byName, { in: 'dir', 'link-out': 'symlink', dangling: 'symlink' });
    assert.doesNotMatch(JSON.stringify(env.data), /stolen|tg-out-/);
    const through = await s.list({ path: 'link-out' });
    assert.equal(through.error?.code, 'PathTraversalBlocked');
    const abs = await s.list({ path: out.dir });
    assert.equal(abs.error?.code, 'PathTraversalBlocked');
    const dotdot = await s.list({ path: 'in/../..' });
    assert.equal(dotdot.error?.code, 'PathTraversalBlocked');
  } finally {
    s.done();
    out.cleanup();
  }
});

test('list_dir: a file or a missing path gets an error that says what to do', async () => {
  const s = setup({ 'a.txt': '' });
  try {
    const file = await s.list({ path: 'a.txt' });
    assert.equal(file.error?.code, 'InvalidArguments');
    assert.match(file.error!.message, /read_file/);
    const missing = await s.list({ path: 'nope' });
    assert.equal(missing.error?.code, 'NotFound');
    assert.match(missing.error!.message, /list_dir|glob/);
    const unknown = await s.list({ path: '.', depth: 2 });
    assert.equal(unknown.error?.code, 'InvalidArguments');
  } finally {
    s.done();
  }
});

test('list_dir: a folder past the synchronous batch (SYNC_LIST_MAX) lists the same, secrets, deny and ask rules included', async () => {
  const t = tempDir();
  const big = path.join(t.dir, 'big');
  mkdirSync(big);
  const n = SYNC_LIST_MAX + 60;
  for (let i = 0; i < n; i++) writeFileSync(path.join(big, `f${String(i).padStart(5, '0')}.txt`), 'x'.repeat(i % 7));
  for (const s of ['.env', 'id.pem', 'z.key']) writeFileSync(path.join(big, s), 'SECRET');
  mkdirSync(path.join(big, 'priv'));
  mkdirSync(path.join(big, 'asked'));
  writeFileSync(path.join(big, 'priv.txt'), 'x');
  const h = new Harness([t.dir], { policy: policyFromYaml('rules:\n  - { tool: "*", path: "big/priv", decision: deny }\n  - { tool: "*", path: "big/priv.txt", decision: deny }\n  - { tool: "*", path: "big/asked", decision: ask }\n') });
  try {
    const env = await h.call('list_dir', { path: 'big', limit: 5000, hidden: true }) as Envelope & { data: ListData & { skipped_by_policy?: number } };
    assert.equal(env.ok, true, JSON.stringify(env.error));
    const names = env.data.entries.map((e) => e.name);
    assert.equal(names.length, n);
    assert.deepEqual(names, Array.from({ length: n }, (_, i) => `f${String(i).padStart(5, '0')}.txt`));
    assert.equal(env.data.skipped_by_policy, 1);
    assert.equal(env.data.entries[n - 1]!.size, (n - 1) % 7);
    assert.doesNotMatch(JSON.stringify(env), /\.env|id\.pem|z\.key|priv|asked/);
  } finally {
    h.close();
    t.cleanup();
  }
});

test('list_dir: with nested roots, a deny glob written against the outer root hides the entry in the inner one', async () => {
  const t = tempDir();
  files(t.dir, { 'inner/hidden/x.txt': 'x', 'inner/shown/y.txt': 'y', 'inner/k.txt': 'k', 'inner/z.txt': 'z' });
  const inner = path.join(t.dir, 'inner');
  for (const roots of [[inner, t.dir], [t.dir, inner]]) {
    const h = new Harness(roots, { policy: policyFromYaml('paths:\n  deny: ["inner/hidden/**", "inner/k.txt"]\n') });
    try {
      const env = await h.call('list_dir', { path: inner }) as Envelope & { data: ListData };
      assert.equal(env.ok, true, JSON.stringify(env.error));
      assert.deepEqual(env.data.entries.map((e) => e.name), ['shown', 'z.txt'], roots.join(','));
    } finally {
      h.close();
    }
  }
  t.cleanup();
});
