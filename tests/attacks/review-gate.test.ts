// An independent attack review of the gate-first change (issue 8): rule spellings, glob patterns
// that name the denied folder, renames and links through apply_patch/edit tools, nested roots,
// commands the parser cannot see into, and the controls beside them. Breaks found by the review
// carry "BREAK" in their test name (each was fixed in the same commit as its test).
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Envelope } from '../../src/core/envelope.js';
import { runCall } from '../../src/core/pipeline.js';
import { detectBwrap } from '../../src/exec/sandbox.js';
import { Session } from '../../src/core/session.js';
import { SessionRoots } from '../../src/server/session-roots.js';
import { Harness, policyFromYaml } from '../../src/testing/helpers.js';
import { GATE_POLICY, gateTree, HIDDEN_NAMES, normalise, RULE_TEXT, SECRET_TEXT, type GateTree } from './gate-fixture.js';

let tree: GateTree;
before(() => { tree = gateTree(); });
after(() => tree?.cleanup());

/** Denied content or a name inside a denied folder (other than what the caller gave) in anything the reply holds. */
function leaks(env: unknown, given: string[] = []): string[] {
  let s = JSON.stringify(env).replace(RULE_TEXT, '<RULE>');
  for (const g of given) s = s.split(g).join('<G>');
  const out: string[] = [];
  if (s.includes(SECRET_TEXT)) out.push('secret text');
  for (const n of HIDDEN_NAMES) if (s.includes(n)) out.push(`name ${n}`);
  if (/priv\/|d3\//.test(s)) out.push('a path inside a denied folder');
  return out;
}

function harness(yaml: string, roots: string[] = [tree.ws], session?: Session): Harness {
  return new Harness(roots, { policy: policyFromYaml(yaml), stateDir: path.join(tree.state, 'review'), session });
}

const REFUSED = new Set(['ToolNotAllowed', 'PathDenied']);

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
  test('every pattern runs or is refused, and never names anything inside', async () => {
    const h = harness(GATE_POLICY);
    try {
      for (const [pattern, where] of patterns) {
        for (const extra of [{}, { hidden: true, gitignore: false }]) {
          const env = await h.call('glob', { pattern, ...(where ? { path: where } : {}), ...extra });
          if (!env.ok) assert.ok(REFUSED.has(env.error!.code), `${pattern}: ${env.error!.code}`);
          assert.deepEqual(leaks(env, [pattern]), [], `${pattern} in ${where ?? '.'}: ${JSON.stringify(env.data)}`);
        }
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

// The server's own probe: honours TOOLGATE_SANDBOX=none (CI's second pass) exactly as the server does.
const BWRAP = (await detectBwrap()) !== null;
function hasBwrap(): boolean { return BWRAP; }

describe('commands the parser cannot see into: the sandbox masks what a deny rule covers', () => {
  const cmds = [
    'cat p*/x', 'cat $(echo priv)/x | cat', 'grep -r TOPSECRET . | head -50', 'find . -name "hidden*" | sort', 'ls -R | cat',
    'find d1 -type f | xargs cat', 'cat pri""v/sub/y | cat', 'tar cf - priv 2>/dev/null | tar tf - | cat', 'cd pri* && cat x | cat',
    'for f in priv/* d1/d2/d3/*; do cat "$f"; done 2>/dev/null; true',
  ];
  test('BREAK: cat p*/x, grep -r, find, ls -R print nothing from a denied folder (bubblewrap)', async (t) => {
    if (!hasBwrap()) return t.skip('needs bwrap: the masks are a bubblewrap feature');
    // Deny rules only: an ask rule is not a mask (what it covers is readable by an allowed command; see the report).
    const yaml = 'rules:\n  - { tool: "*", path: "priv/**", decision: deny }\n  - { tool: run_command, path: "**/d3/**", decision: deny }\n'
      + '  - { tool: run_command, command: ["*"], decision: allow }\nsandbox: { backend: bwrap }\n';
    const h = harness(yaml);
    try {
      for (const command of cmds) {
        const env = await h.call('run_command', { command });
        // The command's own errors may echo a path it built itself (`cat: priv/x: No such file`): content and hidden names may not appear.
        // asked/q.txt holds the same marker but no rule covers it in this policy.
        const seen = JSON.stringify(env.data ?? env.error).split(`asked content ${SECRET_TEXT}`).join('');
        assert.deepEqual(leaks(seen, [command]).filter((l) => !l.startsWith('a path')), [], `${command}: ${seen.slice(0, 400)}`);
      }
      const w = await h.call('run_command', { command: 'echo z > $(echo priv)/x; echo z > "p"riv/new; true' });
      assert.equal(readFileSync(path.join(tree.ws, 'priv/x'), 'utf8'), `a ${SECRET_TEXT} line\n`, `a command changed a denied file: ${w.text}`);
      const ok = await h.call('run_command', { command: 'cat pub/a.txt | cat' });
      assert.match(String((ok.data as { output?: string }).output), /a public line/, ok.text);
    } finally {
      await h.session.dispose();
      h.close();
    }
  });
});

describe('the audit a model can read (protected = readable)', () => {
  test('holds no denied content or hidden name after every kind of call, and every line has a decision', async () => {
    const state = path.join(tree.state, 'audit-read');
    mkdirSync(state, { recursive: true });
    const session = new Session();
    session.elicit = async () => ({ action: 'accept', content: { decision: 'allow_session' } });
    const h = new Harness([tree.ws], { policy: policyFromYaml(`${GATE_POLICY}  - { tool: run_command, command: ["*"], decision: allow }\n`), stateDir: state, session });
    try {
      for (const [tool, args] of [
        ['grep', { pattern: 'TOPSECRET', path: '.', output_mode: 'content' }], ['grep', { pattern: 'TOPSECRET', path: 'asked' }],
        ['read_file', { path: 'asked/q.txt' }], ['glob', { pattern: '**' }], ['list_dir', { path: 'd1/d2' }],
        ['delete_file', { path: 'd1', recursive: true, dry_run: true }], ['apply_patch', { patch: '--- a/priv/x\n+++ b/priv/x\n@@ -1 +1 @@\n-a\n+b\n' }],
        ['read_file', { path: 'pub/inx' }], ['read_file', { path: 'priv/fifo' }], ['read_file', { path: 'pub/inloop' }],
      ] as const) await h.call(tool, args);
      const text = readFileSync(path.join(state, 'audit.jsonl'), 'utf8');
      // The approved read of asked/q.txt returns content to the caller but never into the audit.
      assert.ok(!text.includes(SECRET_TEXT), 'denied or read content reached the audit');
      for (const n of HIDDEN_NAMES) assert.ok(!text.includes(n), n);
      for (const line of text.trim().split('\n')) {
        const r = JSON.parse(line) as { decision?: string; rule?: unknown };
        assert.ok(['allow', 'ask', 'deny'].includes(r.decision ?? ''), line.slice(0, 200));
        assert.equal(typeof r.rule, 'string');
      }
    } finally {
      h.close();
    }
  });
});

describe('ask rules after a session grant from an auto-approving client', () => {
  test('a walk from above still leaves the asked folder out; a denied folder stays denied after any grant', async () => {
    const session = new Session();
    session.elicit = async () => ({ action: 'accept', content: { decision: 'allow_session' } });
    const h = harness(GATE_POLICY, [tree.ws], session);
    try {
      assert.equal((await h.call('read_file', { path: 'asked/q.txt' })).ok, true);
      const g = await h.call('grep', { pattern: 'TOPSECRET', path: '.', output_mode: 'content' });
      assert.deepEqual(leaks(g), [], JSON.stringify(g.data));
      for (const [tool, args] of [['read_file', { path: 'priv/x' }], ['grep', { pattern: 'a', path: 'priv' }], ['write_file', { path: 'priv/x', content: 'z' }], ['delete_file', { path: 'priv/x' }]] as const) {
        const env = await h.call(tool, args);
        assert.equal(env.error?.code, 'ToolNotAllowed', `${tool} after a session grant: ${env.text}`);
      }
      // The secrets list too.
      writeFileSync(path.join(tree.ws, 'pub/k.pem'), SECRET_TEXT);
      const pem = await h.call('read_file', { path: 'pub/k.pem' });
      const nope = await h.call('read_file', { path: 'pub/none.pem' });
      assert.equal(normalise(pem, 'pub/k.pem'), normalise(nope, 'pub/none.pem'));
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

describe("another session's spills through a command", () => {
  // The state dir (default <root>/.toolgate) is bound read-only in the sandbox, so an allowed
  // `cat .toolgate/runs/*/observations/*` read every session's saved output: spills are for the
  // session that got the storage_ref only. The runs folders are masked now, after the protected
  // binds (which used to put back whatever was masked below them).
  test('BREAK: a command in session B cannot read the spill session A got', async (t) => {
    if (!hasBwrap()) return t.skip('needs bwrap: the masks are a bubblewrap feature');
    const ws = path.join(tree.ws, '..', 'spill-ws');
    mkdirSync(ws, { recursive: true });
    writeFileSync(path.join(ws, 'many.txt'), Array.from({ length: 300 }, (_, i) => `spilled-line-${i}`).join('\n'));
    mkdirSync(path.join(ws, '.vscode'), { recursive: true });
    writeFileSync(path.join(ws, '.vscode', '.env'), `KEY=${SECRET_TEXT}\n`);
    const policy = policyFromYaml('rules:\n  - { tool: run_command, command: ["*"], decision: allow }\nlimits: { output_lines: 5 }\nsandbox: { backend: bwrap }\n');
    const h = new Harness([ws], { policy });
    try {
      const g = await h.call('grep', { pattern: 'spilled-line', path: '.', output_mode: 'content', head_limit: 300 });
      assert.ok(g.artifacts.storage_ref, `no spill: ${g.text}`);
      const other = new SessionRoots(h.rt, [ws], new Session());
      const call = async (tool: string, args: unknown) => (await runCall(h.rt, other, tool, args, { signal: new AbortController().signal })).envelope;
      for (const command of ['cat .toolgate/runs/*/observations/* | grep -c spilled-line-2', 'find .toolgate -type f | sort | head -50', 'cat .vscode/.e* | cat']) {
        const env = await call('run_command', { command });
        const out = String((env.data as { output?: string } | null)?.output ?? env.text);
        assert.ok(!/spilled-line|observations\/tc_|TOPSECRET/.test(out.replace(/grep -c spilled-line-2/, '')) && !/^[1-9]/m.test(out), `${command}: ${out.slice(0, 300)}`);
      }
      // Control: the audit stays readable (protected, not secret).
      const audit = await call('run_command', { command: 'head -c 20 .toolgate/audit.jsonl | cat' });
      assert.match(String((audit.data as { output?: string }).output), /\{/, audit.text);
    } finally {
      await h.session.dispose();
      h.close();
    }
  });
});

describe('audit redaction of model-chosen text (strings)', () => {
  // These reached the audit in clear before: spaces around "=", a secret flag's next word, a
  // URL's password, a Cookie header, npm and GitLab tokens, bearer/connectionString/dsn keys.
  const strings = [
    'aws_secret_access_key = abc123xyz', 'curl https://user:abc123xyz@host/x', 'git push https://me:abc123xyz@example.com/r.git',
    'mysqladmin --password abc123xyz status', 'tool --api-key "abc123xyz"', 'gh auth login --token abc123xyz', 'curl -H "Cookie: session=abc123xyz" https://x',
    `npm config set //registry.npmjs.org/:_authToken npm_${'a'.repeat(36)}`, 'glpat-abc123xyzabc123xyzab',
  ];
  for (const s of strings) {
    test(`BREAK: ${JSON.stringify(s).slice(0, 60)}`, async () => {
      const { redact } = await import('../../src/audit/redact.js');
      const r = redact({ command: s }) as { command: string };
      assert.ok(!/abc123xyz|npm_a{36}/.test(r.command), r.command);
    });
  }
  for (const key of ['bearer', 'connectionString', 'DATABASE_DSN']) {
    test(`BREAK: key ${key}`, async () => {
      const { redact } = await import('../../src/audit/redact.js');
      assert.deepEqual(redact({ [key]: 'abc123xyz' }), { [key]: '[REDACTED]' });
    });
  }
  test('ordinary flags and words stay', async () => {
    const { redact } = await import('../../src/audit/redact.js');
    for (const s of ['npm test -- --max-tokens 5', 'node x.js --token-file ./t.txt', 'ssh-keygen -t ed25519', 'git log --oneline -5', 'https://example.com:8080/a@b']) {
      assert.equal(redact(s), s);
    }
  });
});

describe("another session's spills through a walk of the state dir", () => {
  // read_file of a spill path was refused, but grep/glob with path: ".toolgate" walked into
  // runs/ and returned other sessions' saved output (names and lines). Walks now leave every
  // spill out, as resolve() refuses it.
  for (const [engine, rg] of [['ripgrep', undefined], ['builtin', 'off']] as const) {
    test(`BREAK: grep and glob of .toolgate (${engine}) do not reach runs/`, async () => {
      const ws = path.join(tree.ws, '..', `spill-walk-${engine}`);
      mkdirSync(ws, { recursive: true });
      writeFileSync(path.join(ws, 'many.txt'), Array.from({ length: 300 }, (_, i) => `walked-line-${i}`).join('\n'));
      const saved = process.env.TOOLGATE_RG;
      if (rg) process.env.TOOLGATE_RG = rg; else delete process.env.TOOLGATE_RG;
      const h = new Harness([ws], { policy: policyFromYaml('limits: { output_lines: 5 }\n') });
      try {
        const g = await h.call('grep', { pattern: 'walked-line', path: '.', output_mode: 'content', head_limit: 300 });
        const ref = g.artifacts.storage_ref!;
        assert.ok(ref, g.text);
        const other = new SessionRoots(h.rt, [ws], new Session());
        const call = async (tool: string, args: unknown) => (await runCall(h.rt, other, tool, args, { signal: new AbortController().signal })).envelope;
        for (const [tool, args] of [
          ['grep', { pattern: 'walked-line-2', path: '.toolgate', hidden: true }], ['grep', { pattern: 'walked-line-2', path: '.toolgate', output_mode: 'content' }],
          ['grep', { pattern: 'walked', path: '.toolgate', output_mode: 'count', hidden: true, glob: '*.txt' }],
          ['glob', { pattern: '**', path: '.toolgate', hidden: true, gitignore: false }], ['glob', { pattern: '**/*.txt', path: '.toolgate' }],
        ] as const) {
          const env = await call(tool, args);
          const s = JSON.stringify(env.data ?? env.error);
          assert.ok(!s.includes(path.basename(ref)) && !s.includes('/observations/') && !/walked-line-2\d/.test(s.replace(/"walked-line-2"/g, '')), `${tool} ${JSON.stringify(args)}: ${s.slice(0, 400)}`);
        }
      } finally {
        if (saved === undefined) delete process.env.TOOLGATE_RG; else process.env.TOOLGATE_RG = saved;
        h.close();
      }
    });
  }
});

describe('a denied path after an asked one (several paths in one call)', () => {
  // apply_patch checked each section's state as it resolved it: an asked file that existed let
  // the plan reach the denied section (ToolNotAllowed), a missing one stopped it first (held for
  // approval: ApprovalRequired). The reply told whether the asked file existed, without approval.
  const m = (p: string) => `--- a/${p}\n+++ b/${p}\n@@ -1 +1 @@\n-zz\n+b\n`;
  const add = (p: string) => `--- /dev/null\n+++ b/${p}\n@@ -0,0 +1 @@\n+new\n`;
  const tables: Array<[string, string[]]> = [
    ['modify asked, then a denied file', ['asked/q.txt', 'asked/missing', 'asked/sub', 'asked/nodir/x', 'asked/fifo'].map((p) => m(p) + m('priv/x'))],
    ['add asked, then a denied file', ['asked/q.txt', 'asked/new', 'asked/sub'].map((p) => add(p) + m('priv/x'))],
    ['modify asked, then a missing denied file', ['asked/q.txt', 'asked/missing'].map((p) => m(p) + add('priv/new'))],
  ];
  for (const [label, patches] of tables) {
    test(`BREAK: apply_patch, ${label}: one answer in ci mode`, async () => {
      const h = harness(`${GATE_POLICY}\nmode: ci\n`);
      try {
        const seen = new Set<string>();
        for (const patch of patches) {
          const env = await h.call('apply_patch', { patch, dry_run: true });
          seen.add(`${env.error?.code} ${env.error?.message.replace(/asked\/\S+/g, '<A>')}`);
        }
        assert.equal(seen.size, 1, [...seen].join('\n'));
      } finally {
        h.close();
      }
    });
  }
});

describe('an ask rule holds for a command: its cwd and the files its readers name', () => {
  // A command's cwd and the files a reader (cat, head…) names were resolved (deny held) but never
  // judged for ask: with `command: ["*"]` allowed, `cat asked/q.txt | cat` printed an asked file in
  // ci mode, and `cwd: asked` ran; a missing cwd was held instead (an existence oracle), and a
  // reader on an asked FIFO was refused with a message saying it is a FIFO.
  const cases: Array<[string, string | undefined]> = [
    ['cat asked/q.txt | cat', undefined], ['cat asked/missing | cat', undefined], ['head -1 asked/fifo | cat', undefined], ['cat asked/dangling | cat', undefined],
    ['cat q.txt | cat', 'asked'], ['cat x | cat', 'asked/missing'], ['cat x | cat', 'asked/sub'], ['echo hi', 'asked/nodir/deeper'],
  ];
  test('BREAK: ci mode: every one is held (ApprovalRequired), none runs, one message', async () => {
    const h = harness(`${GATE_POLICY}  - { tool: run_command, command: ["*"], decision: allow }\nmode: ci\n`);
    try {
      const seen = new Set<string>();
      for (const [command, cwd] of cases) {
        const env = await h.call('run_command', { command, ...(cwd ? { cwd } : {}) });
        assert.equal(env.error?.code, 'ApprovalRequired', `${command} in ${cwd ?? '.'}: ${env.text}`);
        assert.ok(!JSON.stringify(env).includes(SECRET_TEXT));
        seen.add(env.error!.message.replace(/`[^`]*`|asked\/\S*/g, '<C>').split('.')[0]!);
      }
      assert.equal(seen.size, 1, [...seen].join('\n'));
      // Denied paths beside asked ones: refused alike whatever the asked path is.
      const d = new Set<string>();
      for (const p of ['asked/q.txt', 'asked/missing', 'asked/fifo', 'asked/dangling']) {
        const env = await h.call('run_command', { command: `cat ${p} priv/x` });
        d.add(`${env.error?.code} ${env.error?.message.replace(p, '<P>')}`);
      }
      assert.equal(d.size, 1, [...d].join('\n'));
      // Control: a command next to the asked folder runs.
      const ok = await h.call('run_command', { command: 'cat pub/a.txt | cat' });
      assert.equal(ok.ok, true, ok.text);
    } finally {
      await h.session.dispose();
      h.close();
    }
  });
});
