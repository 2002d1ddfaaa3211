// Review of grep's small-folder path (small.ts): the default answer must equal ripgrep's, and the
// in-process search must not tell anything about what lies outside the workspace.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Harness, policyFromYaml, tempDir, writeIn } from '../../src/testing/helpers.js';
import { comparable, grep, type Env } from '../../src/tools/grep/grep-fixture.js';
import { locateRg } from '../../src/tools/grep/rg.js';

const rgHere = await locateRg({ ...process.env, TOOLGATE_RG: '' });
const needsRg = rgHere ? false : 'needs ripgrep (rg) on PATH: the small-folder choice only exists beside it';

async function same(h: Harness, args: Record<string, unknown>) {
  const auto = await grep(h, 'auto', args);
  const rg = await grep(h, 'rg', args);
  assert.deepEqual(comparable(auto), comparable(rg), `same answer for ${JSON.stringify(args)} (auto engine: ${auto.data?.engine})`);
  return auto;
}

test('ask rules: skipped_by_policy counts the same asked files and folders as ripgrep (hidden, ignored, unselected, links, empty folders)', { skip: needsRg }, async (t) => {
  const d = tempDir('tg-rs-ask-');
  t.after(d.cleanup);
  const files: Record<string, string> = {
    '.gitignore': 'ign/\n*.log\n',
    'a.txt': 'needle\n',
    'asked/q.txt': 'needle\n',
    'asked2/.h.txt': 'needle\n',
    'ign/asked/x.txt': 'needle\n',
    'x.log': 'needle\n',
    'q.md': 'needle\n',
    'sub/r.md': 'needle\n',
    '.hid/asked/z.txt': 'needle\n',
  };
  for (const [rel, c] of Object.entries(files)) writeIn(d.dir, rel, c);
  const { mkdirSync } = await import('node:fs');
  mkdirSync(`${d.dir}/emptyasked/asked`, { recursive: true });
  const pol = policyFromYaml(`
rules:
  - { tool: "*", path: "**/asked/**", decision: ask }
  - { tool: "*", path: "asked2/**", decision: ask }
  - { tool: "*", path: "**/*.log", decision: ask }
  - { tool: "*", path: "**/*.md", decision: ask }
`);
  const h = new Harness([d.dir], { policy: pol });
  t.after(() => h.close());
  for (const args of [{ pattern: 'needle' }, { pattern: 'needle', hidden: true }, { pattern: 'needle', glob: '*.txt' }, { pattern: 'needle', type: 'ts' }]) {
    await same(h, args);
  }
});

for (const budget of ['40', '1000']) {
test(`racing (budget ${budget}): a folder swapped for a link to outside and back never shows outside entries in visited, the reason, the engine or the sizes`, { skip: needsRg || (process.platform !== 'linux' && 'needs /proc/self/fd (Linux)'), timeout: 60_000 }, async (t) => {
  const { whileSwapping } = await import('../../src/testing/helpers.js');
  const d = tempDir('tg-rs-race-');
  t.after(d.cleanup);
  const ws = `${d.dir}/ws`;
  const out = `${d.dir}/out`;
  writeIn(ws, 'a/b/inside.txt', 'needle\n');
  for (let i = 0; i < 20; i++) writeIn(ws, `a/f${i}.txt`, 'nothing\n');
  // Outside: many entries (past a budget of 40), a file with invalid UTF-8, a file with a late NUL.
  for (let i = 0; i < 60; i++) writeIn(out, `o${i}.txt`, 'needle outside\n');
  writeIn(out, 'bad.txt', Buffer.from([0x6e, 0xff, 0x0a]));
  writeIn(out, 'late.txt', Buffer.concat([Buffer.alloc(70_000, 0x61), Buffer.from([0])]));
  const h = new Harness([ws]);
  t.after(() => h.close());
  const env = { TOOLGATE_GREP_WALK_MAX: budget };
  // a/f*, a/b, a/b/inside.txt, and mid-swap a/b.d and the link a/b together.
  const inside = 20 + 1 + 1 + 1;
  const leaks: string[] = [];
  let builtin = 0;
  const runs = await whileSwapping(`${ws}/a/b`, out, 2500, async () => {
    const r = await grep(h, 'auto', { pattern: 'n.edle', path: 'a' }, env);
    assert.ok(r.ok, JSON.stringify(r));
    const visited = r.stats?.visited;
    if (r.data.engine === 'builtin') builtin++;
    if (visited !== undefined && visited > inside) leaks.push(`visited ${visited}`);
    if (/(\d+) entries/.exec(r.data.fallback_reason ?? '') && Number(/(\d+) entries/.exec(r.data.fallback_reason!)![1]) > inside) leaks.push(`reason ${r.data.fallback_reason}`);
    if (r.data.engine === 'ripgrep') leaks.push(`engine ripgrep${builtin ? '' : ' from the first call'}: outside entries, bytes or text sent the search there`);
    if ((r.data.files ?? []).some((f) => !f.endsWith('inside.txt'))) leaks.push(`files ${r.data.files}`);
  });
  assert.ok(runs > 20, `control: ${runs} searches ran`);
  assert.ok(builtin > 0, 'control: the small path ran');
  assert.deepEqual([...new Set(leaks)].slice(0, 5), [], `${leaks.length} of ${runs} answers told about the outside folder`);
});
}

test('ignore-file glob syntax as ripgrep reads it: "\\!name", "[!a]", ( ) | as plain characters', { skip: needsRg }, async (t) => {
  const d = tempDir('tg-rs-gi-');
  t.after(d.cleanup);
  const files: Record<string, string> = {
    'bang/.gitignore': '\\!bang.txt\n', 'bang/!bang.txt': 'needle\n', 'bang/other.txt': 'needle\n',
    'cls/.gitignore': '[!a]*.txt\n', 'cls/a.txt': 'needle\n', 'cls/b.txt': 'needle\n', 'cls/!.txt': 'needle\n',
    'grp/.ignore': '(a|b)\nx[]a].txt\n', 'grp/a': 'needle\n', 'grp/(a|b)': 'needle\n', 'grp/x].txt': 'needle\n', 'grp/xa.txt': 'needle\n', 'grp/xb.txt': 'needle\n',
    'hash/.gitignore': '\\#h.txt\n#c.txt\n', 'hash/#h.txt': 'needle\n', 'hash/#c.txt': 'needle\n',
  };
  for (const [rel, c] of Object.entries(files)) writeIn(d.dir, rel, c);
  const h = new Harness([d.dir]);
  t.after(() => h.close());
  const all = await same(h, { pattern: 'needle' });
  assert.equal(all.data.engine, 'builtin');
  assert.deepEqual(all.data.files, ['bang/other.txt', 'cls/a.txt', 'grp/a', 'grp/xb.txt', 'hash/#c.txt']);
  for (const path of ['bang', 'cls', 'grp', 'hash']) await same(h, { pattern: 'needle', path });
});

test('UTF-16 with a lone surrogate or an odd last byte, and globs the two engines read differently ({x}, @(…), {1..3})', { skip: needsRg }, async (t) => {
  const d = tempDir('tg-rs-enc-');
  t.after(d.cleanup);
  const u16 = (s: string, tail: number[] = []) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(s, 'utf16le'), Buffer.from(tail)]);
  writeIn(d.dir, 'enc/odd.txt', u16('needle odd\nlast needle', [0x41]));
  writeIn(d.dir, 'enc/lone.txt', u16('needle \ud800 lone\n'));
  for (const n of ['{x}.ts', 'x.ts', '@(a).ts', 'a.ts', 'f2.ts', '{1..3}.ts']) writeIn(d.dir, `g/${n}`, 'needle\n');
  const h = new Harness([d.dir]);
  t.after(() => h.close());
  for (const path of ['enc', 'enc/odd.txt', 'enc/lone.txt']) await same(h, { pattern: 'needle', path, output_mode: 'content' });
  for (const glob of ['{x}.ts', '@(a).ts', 'f{1..3}.ts', '*.{ts,md}', '!{x}.ts']) await same(h, { pattern: 'needle', path: 'g', glob });
});

test('patterns JavaScript backtracks on (nested, repeated or alternated groups) never run on the server thread: ripgrep answers at once', { skip: needsRg, timeout: 30_000 }, async (t) => {
  const { linearInJs } = await import('../../src/tools/grep/small.js');
  for (const p of ['needle', 'a.b', '^foo$', 'foo|bar', '[a-z]x', '(?:ab)c', '[*+?]', '\\*', 'a\\{2\\}']) assert.equal(linearInJs(p), true, p);
  for (const p of ['(a+)+b', 'a.*b', '.*.*y', 'a?', 'x{2,}', '(a|aa)c', '(?:a|b)c', '[[:alpha:]]+', 'a+']) assert.equal(linearInJs(p), false, p);
  const d = tempDir('tg-rs-redos-');
  t.after(d.cleanup);
  writeIn(d.dir, 'exp.txt', `${'a'.repeat(40)}!\n`);
  writeIn(d.dir, 'quad.txt', `${'a'.repeat(300_000)}\n`);
  const h = new Harness([d.dir]);
  t.after(() => h.close());
  for (const pattern of ['(a+)+b', 'a.*b', '(a|aa)*c']) {
    const started = Date.now();
    const r = await grep(h, 'auto', { pattern });
    assert.equal(r.data.engine, 'ripgrep', pattern);
    assert.ok(Date.now() - started < 5_000, `${pattern}: ${Date.now() - started} ms`);
  }
});

test('a hard link to an outside file: its content (invalid UTF-8, a late NUL) never picks the engine; FIFOs named like ignore files do not block', { skip: needsRg || (process.platform !== 'linux' && 'needs mkfifo (Linux)'), timeout: 30_000 }, async (t) => {
  const { execFileSync } = await import('node:child_process');
  const { linkSync, mkdirSync } = await import('node:fs');
  const d = tempDir('tg-rs-hard-');
  t.after(d.cleanup);
  const ws = `${d.dir}/ws`;
  writeIn(ws, 'a.txt', 'needle\n');
  const engines: string[] = [];
  for (const [name, content] of [['plain', 'n-edle\n'], ['utf', Buffer.from([0x6e, 0xff, 0x0a])], ['nul', Buffer.concat([Buffer.alloc(70_000, 0x61), Buffer.from([0])])]] as const) {
    writeIn(d.dir, `out/${name}.txt`, content);
    mkdirSync(`${ws}/${name}`);
    linkSync(`${d.dir}/out/${name}.txt`, `${ws}/${name}/hard.txt`);
    writeIn(ws, `${name}/b.txt`, 'needle\n');
  }
  const h = new Harness([ws]);
  t.after(() => h.close());
  for (const path of ['plain', 'utf', 'nul']) engines.push((await same(h, { pattern: 'n.edle', path })).data.engine);
  assert.equal(new Set(engines).size, 1, `the engine told the hard-linked outside file's content apart: ${engines}`);
  // FIFOs named like every ignore file, and as .git/info/exclude.
  mkdirSync(`${ws}/fifo/.git/info`, { recursive: true });
  for (const n of ['.gitignore', '.ignore', '.rgignore', '.git/info/exclude']) execFileSync('mkfifo', [`${ws}/fifo/${n}`]);
  writeIn(ws, 'fifo/c.txt', 'needle\n');
  const started = Date.now();
  const r = await grep(h, 'auto', { pattern: 'needle', path: 'fifo' });
  assert.deepEqual(r.data.files, ['fifo/c.txt']);
  assert.ok(Date.now() - started < 5_000);
});

test('more matching lines than the collection cap (a folder or one file): the same totals, "at least" and note as ripgrep', { skip: needsRg }, async (t) => {
  const d = tempDir('tg-rs-cap-');
  t.after(d.cleanup);
  writeIn(d.dir, 'a/many.txt', 'needle\n'.repeat(300));
  writeIn(d.dir, 'a/more.txt', 'needle\n'.repeat(10));
  const h = new Harness([d.dir]);
  t.after(() => h.close());
  const saved = process.env.TOOLGATE_GREP_COLLECT_CAP;
  process.env.TOOLGATE_GREP_COLLECT_CAP = '200';
  t.after(() => { if (saved === undefined) delete process.env.TOOLGATE_GREP_COLLECT_CAP; else process.env.TOOLGATE_GREP_COLLECT_CAP = saved; });
  // rg's note says how many hits its threads had collected when it stopped: that number varies run to run.
  const norm = (e: Env) => JSON.parse(JSON.stringify(comparable(e)).replace(/More than \d+ matches/g, 'More than N matches'));
  for (const path of ['a', 'a/many.txt']) {
    for (const args of [{ output_mode: 'content', head_limit: 10 }, { output_mode: 'content', head_limit: 5, offset: 290 }, { output_mode: 'count' }]) {
      const q = { pattern: 'needle', path, ...args };
      assert.deepEqual(norm(await grep(h, 'auto', q)), norm(await grep(h, 'rg', q)), JSON.stringify(q));
    }
  }
  const small = await same(h, { pattern: 'needle', path: 'a/more.txt', output_mode: 'content' });
  assert.equal(small.data.engine, 'builtin', 'control: under the cap, searched here');
});

test('a huge folder is not read whole on the server thread: past 16 entries a budget entry, ripgrep answers (even when the deny list hides most)', { skip: needsRg }, async (t) => {
  const { listWithin, UseRipgrep } = await import('../../src/tools/grep/small.js');
  const d = tempDir('tg-rs-huge-');
  t.after(d.cleanup);
  for (let i = 0; i < 200; i++) writeIn(d.dir, `big/k${i}.pem`, 'needle\n');
  writeIn(d.dir, 'big/a.txt', 'needle\n');
  assert.equal(listWithin(`${d.dir}/big`, 201).length, 201);
  assert.throws(() => listWithin(`${d.dir}/big`, 200), (e) => e instanceof UseRipgrep && e.why === 'size');
  const h = new Harness([d.dir]);
  t.after(() => h.close());
  const r = await same(h, { pattern: 'needle', path: 'big' });
  assert.deepEqual(r.data.files, ['big/a.txt']);
  assert.equal(r.data.engine, 'builtin', 'denied entries do not count against the budget (1 entry of 1000)');
  const small = await grep(h, 'auto', { pattern: 'needle', path: 'big' }, { TOOLGATE_GREP_WALK_MAX: '4' });
  assert.equal(small.data.engine, 'ripgrep', '201 entries are more than 16 × 4');
});

test('cancelled during a small search: the call ends Cancelled within a slice, not after the whole folder', { skip: needsRg }, async (t) => {
  const d = tempDir('tg-rs-cancel-');
  t.after(d.cleanup);
  for (let i = 0; i < 900; i++) writeIn(d.dir, `f/d${i % 30}/f${i}.txt`, `${'line of text\n'.repeat(150)}needle\n`);
  const h = new Harness([d.dir]);
  t.after(() => h.close());
  const full = await grep(h, 'auto', { pattern: 'needle', path: 'f', output_mode: 'count' });
  assert.equal(full.data.engine, 'builtin');
  assert.equal(full.data.total_files, 900);
  let ticks = 0;
  const timer = setInterval(() => { ticks++; }, 1);
  t.after(() => clearInterval(timer));
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 3);
  const started = Date.now();
  const r = await h.call('grep', { pattern: 'needle', path: 'f', output_mode: 'count' }, { signal: ac.signal });
  const ms = Date.now() - started;
  assert.equal(r.ok, false, 'the search stopped');
  assert.equal(r.error?.code, 'Cancelled');
  assert.ok(ms < 500, `${ms} ms`);
  assert.ok(ticks > 0, 'the event loop turned during the search');
});

test('racing: no note counts matching files that "changed place" — with a folder swapped for a link to outside, that count told an outside file matched (every engine)', { skip: needsRg || (process.platform !== 'linux' && 'needs /proc/self/fd (Linux)'), timeout: 60_000 }, async (t) => {
  const { whileSwapping } = await import('../../src/testing/helpers.js');
  const d = tempDir('tg-rs-moved-');
  t.after(d.cleanup);
  const ws = `${d.dir}/ws`;
  const out = `${d.dir}/out`;
  writeIn(ws, 'a/b/inside.txt', 'nothing\n');
  for (let i = 0; i < 300; i++) writeIn(ws, `a/filler${i}.txt`, 'nothing\n');
  for (let i = 0; i < 40; i++) writeIn(out, `secret${i}.txt`, 'TOPSECRET\n');
  const h = new Harness([ws]);
  t.after(() => h.close());
  const told: string[] = [];
  for (const engine of ['rg', 'builtin', 'auto'] as const) {
    const runs = await whileSwapping(`${ws}/a/b`, out, 1500, async () => {
      const r = await grep(h, engine, { pattern: 'TOPSECRET', path: 'a' });
      assert.ok(r.ok);
      if (r.data.total_files || r.data.notes?.length) told.push(`${engine}: ${r.data.total_files} files, ${r.data.notes}`);
    });
    assert.ok(runs > 5, `control: ${runs} ${engine} searches ran`);
  }
  assert.deepEqual(told.slice(0, 5), [], `${told.length} answers told an outside file matches`);
});

test('racing, glob (ripgrep engine): no "N entries changed place" note, which told that names matching the pattern exist outside', { skip: needsRg || (process.platform !== 'linux' && 'needs /proc/self/fd (Linux)'), timeout: 60_000 }, async (t) => {
  const { whileSwapping, withEngine } = await import('../../src/testing/helpers.js');
  const d = tempDir('tg-rs-glob-moved-');
  t.after(d.cleanup);
  const ws = `${d.dir}/ws`;
  writeIn(ws, 'a/b/inside.txt', 'x\n');
  for (let i = 0; i < 3000; i++) writeIn(ws, `a/filler${i}.txt`, 'x\n');
  for (let i = 0; i < 40; i++) writeIn(`${d.dir}/out`, `secret${i}.txt`, 'x\n');
  const h = new Harness([ws]);
  t.after(() => h.close());
  let told = 0;
  await withEngine('rg', () => whileSwapping(`${ws}/a/b`, `${d.dir}/out`, 2000, async () => {
    const r = await h.call('glob', { pattern: '**/secret*', path: 'a' });
    if (/changed place/.test(r.text)) told++;
  }));
  assert.equal(told, 0, `${told} answers told names matching the pattern exist outside`);
});

test('without ripgrep, a backtracking pattern runs in a worker thread: the server answers another call meanwhile, and the time cap ends the search', { timeout: 60_000 }, async (t) => {
  const d = tempDir('tg-rs-redos-builtin-');
  t.after(d.cleanup);
  // (a+)+b over 40 characters: about 2^40 steps in JavaScript's engine (it once held the server's thread).
  writeIn(d.dir, 'exp.txt', `${'a'.repeat(40)}!\n`);
  writeIn(d.dir, 'other.txt', 'hello\n');
  const h = new Harness([d.dir]);
  t.after(() => h.close());
  const order: string[] = [];
  const searching = grep(h, 'builtin', { pattern: '(a+)+b' }, { TOOLGATE_GREP_TIME_CAP_MS: '3000' }).then((r) => { order.push('grep'); return r; });
  await new Promise((r) => setTimeout(r, 300));
  const read = await h.call('read_file', { path: 'other.txt' });
  order.push('read');
  assert.equal(read.ok, true);
  const r = await searching;
  assert.deepEqual(order, ['read', 'grep'], 'the read was answered while the search ran');
  assert.equal(r.status, 'partial');
  assert.match(r.text, /time cap/);
});
