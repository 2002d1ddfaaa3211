import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Harness, policyFromYaml, tempDir, withEngine } from '../../src/testing/helpers.js';
import { locateRg } from '../../src/tools/grep/rg.js';
import { compileGlobs, DEFAULT_DENY } from '../../src/workspace/path-rules.js';

// review-none: noneWithin (6b0fff6) lets list_dir, glob and grep skip the per-form deny tests of an
// entry when no deny pattern's literal text is in its path. Oracle: read_file (Workspace.resolve,
// PathRules.isDenied, which the change left alone) on every file of a tree; no walk may show a
// file read_file refuses, and every file it reads must be listable (controls).

// Searches small folders itself unless told otherwise: make glob's and grep's ripgrep engines run on this tree.
process.env.TOOLGATE_GLOB_WALK_MAX = '0';
process.env.TOOLGATE_GREP_WALK_MAX = '0';

const FILES = [
  'ok.txt', 'a/ok.txt', 'a/.env', 'a/b/k.pem', '.ssh/id', 'x.key.txt',
  'abs/x.txt', 'abs2/y.txt', 'abs2/y.md', 'quoted.txt', 'tok1.txt', 'tok3.txt', 'xsecret.txt', 'qsecret.txt',
  'zzz.log', 'zz.log', 'sub/deep/f.txt', 'sub/deepx/f.txt', 'sub/inner/only.txt', 'dot/file.txt', 'CaseX.txt', 'casex.txt',
  'Mixed/m.txt', 'sub/Mixed/m.txt', 'trail/t.txt', 'pol/p.txt', 'sub/pol/p.txt', 'bn/name.cfg', 'sub/bn2/name.cfg',
];

/** Patterns that all name literal text (so noneWithin can be sure and the quick path runs), then the odd ones (it never is). */
const SURE = (dir: string, ws: string) => [`${dir}/lnk/abs/**`, `${ws}/abs2/*.txt`, 'sub/deep/', 'inner/only.txt', 'CaseX.txt', 'Mixed/**', 'trail//', 'name.cfg', 'tok1.txt', 'xsecret.txt', 'zzz.log', 'quoted.txt'];
const ODD = ['"quoted".txt', 'tok{1,2}.txt', '[x]secret.txt', '*(z)zz.log', './dot/file.txt'];

function tree(odd: boolean) {
  const t = tempDir('tg-rn-');
  const ws = path.join(t.dir, 'ws');
  mkdirSync(ws);
  for (const f of FILES) {
    mkdirSync(path.dirname(path.join(ws, f)), { recursive: true });
    writeFileSync(path.join(ws, f), 'TOKEN\n');
  }
  // An absolute pattern written through a link to the workspace (withRealBases).
  symlinkSync(ws, path.join(t.dir, 'lnk'));
  const deny = odd ? [...SURE(t.dir, ws).filter((p) => !/^(tok1|xsecret|zzz|quoted)/.test(p)), ...ODD] : SURE(t.dir, ws);
  const policy = policyFromYaml(`
paths:
  deny: ${JSON.stringify(deny)}
rules:
  - { tool: "*", path: "pol/**", decision: deny }
`);
  // Two roots, one inside the other: "inner/only.txt" is relative to the inner one.
  const h = new Harness([ws, path.join(ws, 'sub')], { policy, stateDir: path.join(t.dir, 'state') });
  // The quick path runs (or never does) on this tree's plain files, as the test means.
  assert.equal(compileGlobs([...DEFAULT_DENY, ...deny]).noneWithin(`${ws.slice(1)}/a/ok.txt`), !odd);
  return { ws, h, done: () => { h.close(); t.cleanup(); } };
}

interface Env { ok: boolean; data: Record<string, unknown>; error?: { code: string } }

for (const odd of [false, true]) test(`deny globs ${odd ? 'with quotes, braces, classes, extglobs, ./ (no quick answer)' : 'that all name literal text (the quick answer runs)'}, absolute, through a link, trailing slashes, nested roots: no walk shows what read_file refuses`, async (t) => {
  const s = tree(odd);
  t.after(s.done);
  const h = s.h;
  const denied = new Set<string>();
  const readable = new Set<string>();
  for (const f of FILES) {
    const e = await h.call('read_file', { path: f }) as Env;
    (e.ok ? readable : denied).add(f);
  }
  // The oracle itself: these are refused on Linux (case-sensitive), those are not.
  for (const f of ['a/.env', 'a/b/k.pem', '.ssh/id', 'abs/x.txt', 'abs2/y.txt', 'quoted.txt', 'tok1.txt', 'xsecret.txt', 'zzz.log', 'sub/deep/f.txt', 'sub/inner/only.txt', 'CaseX.txt', 'Mixed/m.txt', 'trail/t.txt', 'pol/p.txt', 'bn/name.cfg', 'sub/bn2/name.cfg']) {
    assert.ok(denied.has(f), `oracle: read_file refuses ${f}`);
  }
  if (!odd) assert.ok(!denied.has('dot/file.txt'), 'oracle: only the odd list names dot/file.txt');
  for (const f of ['ok.txt', 'a/ok.txt', 'abs2/y.md', 'tok3.txt', 'qsecret.txt', 'sub/deepx/f.txt', 'casex.txt']) assert.ok(readable.has(f), `oracle: read_file reads ${f}`);

  // Files under the nested root are shown by their absolute path.
  const norm = (xs: unknown) => new Set((xs as string[]).map((x) => (x.startsWith(`${s.ws}/`) ? x.slice(s.ws.length + 1) : x)));
  const rg = await locateRg({ ...process.env, TOOLGATE_RG: '' });
  for (const engine of rg ? (['rg', 'builtin'] as const) : (['builtin'] as const)) {
    await withEngine(engine, async () => {
      const g = await h.call('glob', { pattern: '**/*', hidden: true, gitignore: false }) as Env;
      assert.ok(g.ok, JSON.stringify(g.error));
      assert.equal(g.data.engine, engine === 'rg' ? 'ripgrep' : 'builtin');
      const globbed = norm(g.data.files);
      const r = await h.call('grep', { pattern: 'TOKEN', hidden: true }) as Env;
      assert.ok(r.ok, JSON.stringify(r.error));
      assert.equal(r.data.engine, engine === 'rg' ? 'ripgrep' : 'builtin');
      const grepped = norm(r.data.files);
      for (const f of denied) {
        assert.ok(!globbed.has(f), `glob (${engine}) shows denied ${f}`);
        assert.ok(!grepped.has(f), `grep (${engine}) shows denied ${f}`);
      }
      for (const f of readable) {
        assert.ok(globbed.has(f), `control: glob (${engine}) shows ${f}: ${[...globbed].join(', ')}`);
        assert.ok(grepped.has(f), `control: grep (${engine}) shows ${f}`);
      }
      // A search started inside a folder (DenyFilter's baseRel), and one in the nested root.
      for (const p of ['sub', 'abs2', 'a']) {
        const q = await h.call('grep', { pattern: 'TOKEN', hidden: true, path: p }) as Env;
        assert.ok(q.ok, JSON.stringify(q.error));
        const shown = norm(q.data.files);
        for (const f of denied) assert.ok(!shown.has(f), `grep in ${p} (${engine}) shows denied ${f}`);
        for (const f of readable) if (f.startsWith(`${p}/`)) assert.ok(shown.has(f), `control: grep in ${p} (${engine}) shows ${f}: ${[...shown].join(', ')}`);
      }
    });
  }

  const listed = new Set<string>();
  const dirs = ['.', ...new Set(FILES.map((f) => path.dirname(f)).filter((d) => d !== '.'))];
  for (const d of dirs) {
    const e = await h.call('list_dir', { path: d, hidden: true, gitignore: false }) as Env;
    if (!e.ok) continue; // a denied folder is refused as a whole
    for (const x of norm((e.data.entries as Array<{ path: string; type: string }>).filter((y) => y.type === 'file').map((y) => y.path))) listed.add(x);
  }
  for (const f of denied) assert.ok(!listed.has(f), `list_dir shows denied ${f}`);
  for (const f of readable) assert.ok(listed.has(f), `control: list_dir shows ${f}`);
});
