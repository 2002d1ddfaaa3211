// An independent attack review of the gate-first change (issue 8), file tools: rule spellings, glob
// patterns that name the denied folder, renames and links through apply_patch/edit tools, nested
// roots, absolute rules through links, walks, and the controls beside them. Breaks found by the
// review carry "BREAK" in their test name (each was fixed in the same commit as its test).
// Commands, the audit, sessions and spills: review-gate-sessions.test.ts.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Envelope } from '../../src/core/envelope.js';
import { runCall } from '../../src/core/pipeline.js';
import { Session } from '../../src/core/session.js';
import { SessionRoots } from '../../src/server/session-roots.js';
import { Harness, policyFromYaml, settle, withEngine } from '../../src/testing/helpers.js';
import { locateRg } from '../../src/tools/grep/rg.js';
import { deniedLeaks as leaks, GATE_POLICY, gateTree, HIDDEN_NAMES, REFUSED, SECRET_TEXT, type GateTree } from './gate-fixture.js';

// These tests compare the two engines on small trees: ripgrep runs even where glob and grep would
// search a folder this small themselves (TOOLGATE_GLOB_WALK_MAX, TOOLGATE_GREP_WALK_MAX; servers
// spawned here inherit them).
process.env.TOOLGATE_GLOB_WALK_MAX = '0';
process.env.TOOLGATE_GREP_WALK_MAX = '0';

let tree: GateTree;
before(() => { tree = gateTree(); });
after(() => tree?.cleanup());

function harness(yaml: string, roots: string[] = [tree.ws], session?: Session): Harness {
  return new Harness(roots, { policy: policyFromYaml(yaml), stateDir: path.join(tree.state, 'review'), session });
}

describe('rule spellings: every one holds in every tool, and the controls beside it work', () => {
  const spellings = ['priv', 'priv/', '/priv/**', '**/priv/**', 'priv/**', 'priv/*', '{priv,nothing}/**'];
  const probes: Array<[string, Record<string, unknown>]> = [
    ['read_file', { path: 'priv/x' }], ['read_file', { path: 'priv/sub/y' }], ['read_file', { path: 'pub/inx' }],
    ['read_file', { path: 'pub/in/sub/y' }], ['list_dir', { path: 'priv' }], ['list_dir', { path: 'pub/in' }],
    ['write_file', { path: 'priv/new', content: 'z', dry_run: true }], ['write_file', { path: 'priv/nodir/new', content: 'z', create_dirs: true }],
    ['edit_file', { path: 'pub/inx', old_string: 'a', new_string: 'b' }], ['grep', { pattern: 'a', path: 'pub/in' }],
    ['delete_file', { path: 'priv/x', dry_run: true }], ['glob', { pattern: '*', path: 'priv' }],
  ];
  for (const spelling of spellings) {
    test(`path: ${JSON.stringify(spelling)}`, async () => {
      const h = harness(`rules:\n  - { tool: "*", path: ${JSON.stringify(spelling)}, decision: deny }\n`);
      try {
        for (const [tool, args] of probes) {
          const env = await h.call(tool, args);
          // priv/* covers what is directly inside only; its sub folder's contents are not named by it.
          if (spelling === 'priv/*' && (args.path === 'priv/sub/y' || args.path === 'pub/in/sub/y')) continue;
          assert.equal(env.ok, false, `${tool} ${JSON.stringify(args)} was admitted`);
          assert.ok(REFUSED.has(env.error!.code), `${tool} ${JSON.stringify(args)}: ${env.error!.code} ${env.error!.message}`);
          assert.deepEqual(leaks(env, [String(args.path ?? '')]), []);
        }
        for (const [tool, args] of [['grep', { pattern: 'TOPSECRET', path: '.', hidden: true }], ['grep', { pattern: 'TOPSECRET', path: '.', output_mode: 'content', context: 5 }],
          ['glob', { pattern: '**', hidden: true, gitignore: false }], ['list_dir', { path: '.', hidden: true }]] as const) {
          const env = await h.call(tool, args);
          assert.equal(env.ok, true, env.text);
          const s = JSON.stringify(env.data);
          assert.ok(!s.includes('priv/') && !s.includes('"priv"'), `${tool}: ${s.slice(0, 300)}`);
          for (const n of HIDDEN_NAMES.slice(0, 1)) assert.ok(!s.includes(`priv/${n}`));
        }
        const ok = await h.call('read_file', { path: 'pub/a.txt' });
        assert.equal(ok.ok, true, ok.text);
      } finally {
        h.close();
      }
    });
  }

  // The "something inside this folder" test used a real name ("x") as its stand-in, so a rule on
  // any file or folder named x (or x*) covered EVERY folder: the whole workspace was refused.
  const nameRules: Array<[string, string, string]> = [
    ['**/x', 'pub/x', 'pub/a.txt'], ['pub/x*', 'pub/x1', 'pub/a.txt'], ['x', 'pub/nested/x', 'pub/nested/b.txt'], ['**/x/**', 'pub/x/y', 'pub/nested/b.txt'],
  ];
  for (const [rule, denied, control] of nameRules) {
    test(`BREAK (controls): a deny rule ${JSON.stringify(rule)} denies ${denied}, not every folder`, async () => {
      const h = harness(`rules:\n  - { tool: write_file, decision: allow }\n  - { tool: "*", path: ${JSON.stringify(rule)}, decision: deny }\npaths:\n  deny: [${JSON.stringify(rule)}]\n`);
      try {
        for (const [tool, args] of [['read_file', { path: control }], ['list_dir', { path: 'pub' }], ['list_dir', { path: '.' }],
          ['write_file', { path: 'pub/fresh.txt', content: 'z', dry_run: true }], ['grep', { pattern: 'public', path: 'pub' }], ['glob', { pattern: '**/*.txt', path: 'pub' }]] as const) {
          const env = await h.call(tool, args);
          assert.equal(env.ok, true, `${tool} ${JSON.stringify(args)}: ${env.text}`);
        }
        const d = await h.call('read_file', { path: denied });
        assert.ok(REFUSED.has(d.error?.code ?? ''), `${denied}: ${d.text}`);
      } finally {
        h.close();
      }
    });
  }
});

describe('glob patterns that name the denied folder', () => {
  const patterns: Array<[string, string | undefined]> = [
    ['pri*', undefined], ['pri*/**', undefined], ['pri?/x', undefined], ['{priv,pub}/*', undefined], ['{priv,pub}/**', undefined], ['**/x', undefined],
    ['**/hidden-*', undefined], ['**/*ledger*', undefined], ['priv', undefined], ['*/x', undefined], ['**/sub/*', undefined], ['**/d3/**', undefined],
    ['**', 'pub'], ['in/*', 'pub'], ['in*/**', 'pub'], ['**/*', 'd1'], ['d*/**', 'd1/d2'], ['[p]riv/**', undefined], ['@(priv)/**', undefined], ['+(priv|pub)/**', undefined],
  ];
  test('every pattern runs or is refused, and never names anything inside (every glob engine)', async () => {
    const h = harness(GATE_POLICY);
    const rgFound = await locateRg({ ...process.env, TOOLGATE_RG: '' });
    try {
      for (const engine of rgFound ? ['rg', 'builtin', 'index'] as const : ['builtin', 'index'] as const) {
        if (engine === 'index') await settle(h.workspace);
        await withEngine(engine, async () => {
          for (const [pattern, where] of patterns) {
            for (const extra of [{}, { hidden: true, gitignore: false }]) {
              const env = await h.call('glob', { pattern, ...(where ? { path: where } : {}), ...extra });
              if (!env.ok) assert.ok(REFUSED.has(env.error!.code), `${pattern}: ${env.error!.code}`);
              else assert.equal((env.data as { engine: string }).engine, engine === 'rg' ? 'ripgrep' : engine);
              assert.deepEqual(leaks(env, [pattern]), [], `${engine} ${pattern} in ${where ?? '.'}: ${JSON.stringify(env.data)}`);
            }
          }
        });
      }
    } finally {
      h.close();
    }
  });

  test('grep glob/type filters aimed at the denied folder, both engines', async () => {
    const h = harness(GATE_POLICY);
    const saved = process.env.TOOLGATE_RG;
    try {
      for (const rg of [undefined, 'off']) {
        if (rg) process.env.TOOLGATE_RG = rg; else delete process.env.TOOLGATE_RG;
        for (const f of [{ glob: 'priv/**' }, { glob: '**/priv/**' }, { glob: 'x' }, { glob: '*.md' }, { glob: ['**/hidden*', '!pub/**'] }, { type: 'md' }, { glob: '{priv,pub}/**' }]) {
          for (const mode of ['files_with_matches', 'content', 'count']) {
            const env = await h.call('grep', { pattern: 'TOPSECRET|line', path: '.', output_mode: mode, hidden: true, ...f });
            assert.equal(env.ok, true, env.text);
            assert.deepEqual(leaks(env.data), [], `${JSON.stringify(f)} ${mode}: ${JSON.stringify(env.data)}`);
          }
        }
      }
    } finally {
      if (saved === undefined) delete process.env.TOOLGATE_RG; else process.env.TOOLGATE_RG = saved;
      h.close();
    }
  });
});

describe('patches, renames, links and folders into and out of the denied area', () => {
  const rename = (from: string, to: string) => `diff --git a/${from} b/${to}\nsimilarity index 100%\nrename from ${from}\nrename to ${to}\n`;
  const modify = (p: string) => `--- a/${p}\n+++ b/${p}\n@@ -1 +1 @@\n-zz\n+b\n`;
  const cases: Array<[string, string, Record<string, unknown>]> = [
    ['rename into, new name', 'apply_patch', { patch: rename('pub/a.txt', 'priv/new') }],
    ['rename into, over an existing file', 'apply_patch', { patch: rename('pub/a.txt', 'priv/x') }],
    ['rename out of, existing', 'apply_patch', { patch: rename('priv/x', 'pub/new') }],
    ['rename out of, missing', 'apply_patch', { patch: rename('priv/missing', 'pub/new') }],
    ['rename through a folder link', 'apply_patch', { patch: rename('pub/in/x', 'pub/new') }],
    ['a public section then a denied one', 'apply_patch', { patch: `--- a/pub/a.txt\n+++ b/pub/a.txt\n@@ -1 +1 @@\n-a public line\n+b\n${modify('priv/x')}` }],
    ['a denied missing file after a public one', 'apply_patch', { patch: `--- a/pub/a.txt\n+++ b/pub/a.txt\n@@ -1 +1 @@\n-a public line\n+b\n${modify('priv/missing')}` }],
    ['header with ./ and //', 'apply_patch', { patch: modify('./priv//x') }],
    ['link to a denied file', 'apply_patch', { patch: modify('pub/inx') }],
    ['write_file create_dirs into', 'write_file', { path: 'priv/nodir/deeper/f', content: 'z', create_dirs: true }],
    ['write_file through a folder link', 'write_file', { path: 'pub/in/new', content: 'z' }],
    ['write_file over a link to a denied file', 'write_file', { path: 'pub/inx', content: 'z' }],
    ['edit_file on a link to a denied file', 'edit_file', { path: 'pub/inx', old_string: 'a', new_string: 'b' }],
    ['multi_edit through a folder link', 'multi_edit', { path: 'pub/in/x', edits: [{ old_string: 'a', new_string: 'b' }] }],
    ['delete a file through a folder link', 'delete_file', { path: 'pub/in/x' }],
    ['recursive delete through a folder link', 'delete_file', { path: 'pub/in/', recursive: true }],
    ['recursive delete of the parent of a deep denied folder', 'delete_file', { path: 'd1/d2', recursive: true }],
    ['recursive delete of the parent, dry run', 'delete_file', { path: 'd1', recursive: true, dry_run: true }],
  ];
  test('each is refused (not run) and names nothing inside; the denied files are unchanged', async () => {
    const h = harness(GATE_POLICY);
    const before = readFileSync(path.join(tree.ws, 'priv/x'), 'utf8');
    try {
      for (const [label, tool, args] of cases) {
        for (const dry of [true, false]) {
          const env = await h.call(tool, { ...args, ...(tool === 'delete_file' && 'dry_run' in args ? {} : { dry_run: dry }) });
          assert.equal(env.ok, false, `${label} ran: ${env.text}`);
          assert.ok(REFUSED.has(env.error!.code), `${label}: ${env.error!.code} ${env.error!.message}`);
          assert.deepEqual(leaks(env, [String(args.path ?? ''), 'priv/x', 'priv/new', 'priv/missing', './priv//x']), [], `${label}: ${env.error!.message}`);
        }
      }
      assert.equal(readFileSync(path.join(tree.ws, 'priv/x'), 'utf8'), before);
      assert.equal(readFileSync(path.join(tree.ws, 'pub/a.txt'), 'utf8'), 'a public line\n');
    } finally {
      h.close();
    }
  });
});

describe('nested roots: a rule relative to one root holds under the root inside it', () => {
  // Before the fix a path was matched relative to the innermost root only: with roots [ws, ws/priv]
  // (or a client root narrowed to ws/priv), `priv/**` matched nothing and priv/x was read.
  const probes: Array<[string, Record<string, unknown>]> = [
    ['read_file', { path: 'x' }], ['read_file', { path: 'sub/y' }], ['list_dir', { path: '.' }], ['glob', { pattern: '**' }],
    ['grep', { pattern: 'TOPSECRET', path: '.' }], ['write_file', { path: 'new', content: 'z', dry_run: true }],
    ['delete_file', { path: 'x', dry_run: true }], ['delete_file', { path: 'sub', recursive: true, dry_run: true }],
  ];
  async function check(call: (tool: string, args: unknown) => Promise<Envelope>, privRoot: string, label: string): Promise<void> {
    for (const [tool, args] of probes) {
      // Relative paths are read against the primary root; name the nested root's files absolutely.
      const a = { ...args, ...('path' in args ? { path: path.join(privRoot, String(args.path)) } : { path: privRoot }) };
      const env = await call(tool, a);
      assert.ok(!JSON.stringify(env).includes(SECRET_TEXT), `${label}: ${tool} ${JSON.stringify(a)} returned denied content`);
      for (const n of HIDDEN_NAMES) assert.ok(!JSON.stringify(env.data ?? null).includes(n), `${label}: ${tool} named ${n}`);
      assert.equal(env.ok, false, `${label}: ${tool} ${JSON.stringify(a)} was admitted: ${env.text}`);
    }
  }
  for (const order of [['.', 'priv'], ['priv', '.']]) {
    test(`BREAK: --workspace ${order.join(' --workspace ')}`, async () => {
      const roots = order.map((r) => path.join(tree.ws, r));
      const h = harness(`${GATE_POLICY}paths:\n  deny: ["pub/nested/**"]\n`, roots);
      try {
        await check((t, a) => h.call(t, a), path.join(tree.ws, 'priv'), order.join(','));
        // paths.deny written relative to the outer root holds as well.
        const nested = await h.call('grep', { pattern: 'another', path: path.join(tree.ws, 'pub') });
        assert.deepEqual((nested.data as { files: string[] }).files, []);
        // Controls: the outer root's public files.
        const ok = await h.call('read_file', { path: path.join(tree.ws, 'pub/a.txt') });
        assert.equal(ok.ok, true, ok.text);
      } finally {
        h.close();
      }
    });
  }

  test('BREAK: a client root narrowed to the denied folder (ceiling = the workspace)', async () => {
    const h = harness(GATE_POLICY);
    try {
      const sr = new SessionRoots(h.rt, [tree.ws], new Session());
      sr.refresh(async () => [`file://${path.join(tree.ws, 'priv')}`]);
      await check(async (t, a) => (await runCall(h.rt, sr, t, a, { signal: new AbortController().signal })).envelope, path.join(tree.ws, 'priv'), 'client root');
      const sub = new SessionRoots(h.rt, [tree.ws], new Session());
      sub.refresh(async () => [`file://${path.join(tree.ws, 'asked')}`]);
      const asked = (await runCall(h.rt, sub, 'read_file', { path: 'q.txt' }, { signal: new AbortController().signal })).envelope;
      assert.equal(asked.error?.code, 'ApprovalRequired', `an ask rule under a narrowed root: ${asked.text}`);
      const pubRoot = new SessionRoots(h.rt, [tree.ws], new Session());
      pubRoot.refresh(async () => [`file://${path.join(tree.ws, 'pub')}`]);
      const ok = (await runCall(h.rt, pubRoot, 'read_file', { path: 'a.txt' }, { signal: new AbortController().signal })).envelope;
      assert.equal(ok.ok, true, ok.text);
    } finally {
      h.close();
    }
  });
});

describe('a rule written as an absolute path through a symbolic link', () => {
  // Paths are matched as real paths, so `/link/priv/**` (a `~/work` link, /tmp on macOS) matched
  // nothing: the rule loaded, was shown in messages, and held nowhere.
  test('BREAK: the rule and paths.deny hold (not silently dead), and the controls work', async () => {
    const { symlinkSync } = await import('node:fs');
    const link = path.join(path.dirname(tree.ws), 'ws-link');
    symlinkSync(tree.ws, link);
    const h = harness(`rules:\n  - { tool: "*", path: "${link}/priv/**", decision: deny }\npaths:\n  deny: ["${link}/d1/d2/d3/**"]\n`);
    try {
      for (const p of ['priv/x', 'priv/missing', 'd1/d2/d3/x', `${link}/priv/x`, `${tree.ws}/priv/x`]) {
        const env = await h.call('read_file', { path: p });
        assert.ok(REFUSED.has(env.error?.code ?? ''), `${p}: ${env.text}`);
      }
      for (const [tool, args] of [['grep', { pattern: 'TOPSECRET', path: '.', output_mode: 'content' }], ['glob', { pattern: '**' }], ['list_dir', { path: 'd1/d2' }]] as const) {
        const env = await h.call(tool, args);
        assert.equal(env.ok, true, env.text);
        assert.ok(!/TOPSECRET|priv\/|d3/.test(JSON.stringify(env.data).replace(`asked content ${SECRET_TEXT}`, '')), `${tool}: ${JSON.stringify(env.data).slice(0, 300)}`);
      }
      assert.equal((await h.call('read_file', { path: 'd1/d2/open.txt' })).ok, true);
    } finally {
      h.close();
    }
  });
});

describe('an ask rule is no content oracle in a walk', () => {
  // With ripgrep, skipped_by_policy counted only asked files that MATCHED the pattern (rg reports
  // nothing else), so `grep "password=a"` from the root said 1 or 0 and spelled out an asked
  // file's content without any approval (ci mode, no elicitation). Now counted by name.
  for (const [engine, rg] of [['ripgrep', undefined], ['builtin', 'off']] as const) {
    test(`BREAK: grep (${engine}): the same reply whether an asked file matches or not`, async () => {
      const saved = process.env.TOOLGATE_RG;
      if (rg) process.env.TOOLGATE_RG = rg; else delete process.env.TOOLGATE_RG;
      const h = harness(`${GATE_POLICY}\nmode: ci\n`);
      try {
        for (const mode of ['files_with_matches', 'content', 'count']) {
          const view = (e: Envelope) => JSON.stringify({ ok: e.ok, data: { ...(e.data as object), output_mode: 0 }, text: e.text.replace(/"[^"]*"/, '<P>') });
          const hit = await h.call('grep', { pattern: 'asked content', path: '.', output_mode: mode });
          const miss = await h.call('grep', { pattern: 'zzz-no-such-text', path: '.', output_mode: mode });
          assert.equal(view(hit), view(miss), `${mode}: an asked file's content changed the reply`);
          assert.ok(((hit.data as { skipped_by_policy?: number }).skipped_by_policy ?? 0) >= 1);
        }
      } finally {
        if (saved === undefined) delete process.env.TOOLGATE_RG; else process.env.TOOLGATE_RG = saved;
        h.close();
      }
    });
  }
});

describe('open: a recursive delete tells whether a denied entry lies below (rules without a literal folder)', () => {
  // `delete_file d1 {recursive}` is refused ("holds a path which no tool may delete") when
  // d1/d2/d3 exists and a rule denies **/d3/** (or paths.deny has **/*.pem and a .pem is there),
  // and succeeds when nothing is there: the existence of a denied entry is told. Any answer
  // that runs the delete shows it (the folder cannot go while the denied entry stays); only a
  // refusal from the rules' text alone hides it, and for `**/…` rules that means refusing every
  // recursive delete. A product decision, left open.
  test('the same answer for a folder with and without a denied entry below', { todo: 'design: refuse recursive deletes whenever a rule without a literal base could reach below, or accept the oracle' }, async () => {
    const h = harness('rules:\n  - { tool: "*", path: "**/d3/**", decision: deny }\n  - { tool: "*", decision: allow }\n');
    try {
      mkdirSync(path.join(tree.ws, 'clean/d2'), { recursive: true });
      writeFileSync(path.join(tree.ws, 'clean/d2/open.txt'), 'x');
      const withDenied = await h.call('delete_file', { path: 'd1', recursive: true, dry_run: true });
      const without = await h.call('delete_file', { path: 'clean', recursive: true, dry_run: true });
      assert.equal(withDenied.ok, without.ok, `${withDenied.text} | ${without.text}`);
    } finally {
      h.close();
    }
  });
});
