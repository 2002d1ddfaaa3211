// Gate-first attacks: a user deny rule (and the secrets list) must give the same answer
// whatever lies behind the path — a file, a folder, nothing, a link, a FIFO, a loop — for
// every tool, dry_run included; walks leave denied entries out; spills stay with their
// session; every audit line carries a decision and a rule.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { verifyAudit } from '../../src/audit/verify.js';
import type { Envelope } from '../../src/core/envelope.js';
import { Harness, policyFromYaml, settle, withEngine } from '../../src/testing/helpers.js';
import { locateRg } from '../../src/tools/grep/rg.js';
import { DENIED_DIRS, GATE_POLICY, gateTree, HIDDEN_NAMES, normalise, probes, RULE_TEXT, SECRET_TEXT, type GateTree } from './gate-fixture.js';

// These tests compare the two engines on small trees: ripgrep runs even where glob and grep would
// search a folder this small themselves (TOOLGATE_GLOB_WALK_MAX, TOOLGATE_GREP_WALK_MAX; servers
// spawned here inherit them).
process.env.TOOLGATE_GLOB_WALK_MAX = '0';
process.env.TOOLGATE_GREP_WALK_MAX = '0';

let tree: GateTree;
let h: Harness;

before(() => {
  tree = gateTree();
  h = new Harness([tree.ws], { policy: policyFromYaml(GATE_POLICY), stateDir: tree.state });
});
after(() => {
  h?.close();
  tree?.cleanup();
});

type Args = (p: string) => Record<string, unknown>;

const patchModify = (p: string) => `--- a/${p}\n+++ b/${p}\n@@ -1 +1 @@\n-a\n+b\n`;
const patchAdd = (p: string) => `--- /dev/null\n+++ b/${p}\n@@ -0,0 +1 @@\n+new\n`;
const patchDelete = (p: string) => `--- a/${p}\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n`;

export const TEMPLATES: Array<[string, string, Args]> = [
  ['read_file', 'text', (p) => ({ path: p })],
  ['read_file', 'base64', (p) => ({ path: p, encoding: 'base64' })],
  ['list_dir', 'plain', (p) => ({ path: p })],
  ['glob', 'star', (p) => ({ pattern: '*', path: p })],
  ['glob', 'deep', (p) => ({ pattern: '**/*', path: p, hidden: true, gitignore: false })],
  ['grep', 'files', (p) => ({ pattern: 'a', path: p })],
  ['grep', 'content', (p) => ({ pattern: 'a', path: p, output_mode: 'content', context: 2 })],
  ['grep', 'count', (p) => ({ pattern: 'a', path: p, output_mode: 'count' })],
  ['write_file', 'write', (p) => ({ path: p, content: 'z' })],
  ['write_file', 'dry_run', (p) => ({ path: p, content: 'z', dry_run: true })],
  ['write_file', 'create_dirs', (p) => ({ path: p, content: 'z', create_dirs: true, dry_run: true })],
  ['write_file', 'expected_sha', (p) => ({ path: p, content: 'z', expected_sha256: '0'.repeat(64) })],
  ['edit_file', 'edit', (p) => ({ path: p, old_string: 'a', new_string: 'b' })],
  ['edit_file', 'dry_run', (p) => ({ path: p, old_string: 'a', new_string: 'b', dry_run: true })],
  ['multi_edit', 'dry_run', (p) => ({ path: p, edits: [{ old_string: 'a', new_string: 'b' }], dry_run: true })],
  ['apply_patch', 'modify', (p) => ({ patch: patchModify(p), dry_run: true })],
  ['apply_patch', 'add', (p) => ({ patch: patchAdd(p), dry_run: true })],
  ['apply_patch', 'delete', (p) => ({ patch: patchDelete(p), dry_run: true })],
  ['delete_file', 'file', (p) => ({ path: p, dry_run: true })],
  ['delete_file', 'recursive', (p) => ({ path: p, recursive: true, dry_run: true })],
  ['run_command', 'cwd', (p) => ({ command: 'echo hi', cwd: p })],
];

/** What no reply may hold: denied content, names no probe gave, any path inside the denied folder other than the probe's own. */
export function leaks(env: unknown, input: string, deniedDir: string): string[] {
  const s = JSON.stringify(env).replace(RULE_TEXT, '<RULE>').split(input).join('<P>');
  const out: string[] = [];
  if (s.includes(SECRET_TEXT)) out.push('secret text');
  for (const n of HIDDEN_NAMES) if (s.includes(n)) out.push(`name ${n}`);
  if (s.includes(`${deniedDir}/`)) out.push(`a path inside ${deniedDir}`);
  return out;
}

describe('a denied folder is no oracle', () => {
  for (const d of DENIED_DIRS) {
    for (const [tool, label, args] of TEMPLATES) {
      test(`${tool} (${label}) under ${d}: one answer for every probe`, async () => {
        const answers = new Map<string, string[]>();
        for (const [what, p] of probes(d, tree.ws)) {
          // delete_file removes a link itself, never what it points at: a link in pub is not in the denied folder.
          if (tool === 'delete_file' && p.startsWith('pub/')) continue;
          const env = await h.call(tool, args(p));
          assert.equal(env.ok, false, `${what} (${p}) was admitted: ${env.text}`);
          assert.deepEqual(leaks(env, p, d), [], `${what} (${p}) leaks: ${JSON.stringify(env.error)}`);
          const key = normalise(env, p);
          answers.set(key, [...(answers.get(key) ?? []), what]);
        }
        assert.equal(answers.size, 1, `different answers:\n${[...answers].map(([k, v]) => `  ${v.join(', ')} → ${k}`).join('\n')}`);
      });
    }
  }

  test('controls next to the denied folders still work', async () => {
    assert.equal((await h.call('read_file', { path: 'pub/a.txt' })).ok, true);
    assert.equal((await h.call('read_file', { path: 'd1/d2/open.txt' })).ok, true);
    assert.equal((await h.call('list_dir', { path: 'd1/d2' })).ok, true);
    const w = await h.call('write_file', { path: 'pub/new.txt', content: 'hello\n' });
    assert.equal(w.ok, true, w.text);
    const e = await h.call('edit_file', { path: 'pub/new.txt', old_string: 'hello', new_string: 'bye' });
    assert.equal(e.ok, true, e.text);
    const g = await h.call('grep', { pattern: 'public', path: '.' });
    assert.deepEqual((g.data as { files: string[] }).files, ['pub/a.txt', 'pub/nested/b.txt']);
    const del = await h.call('delete_file', { path: 'pub/new.txt' });
    assert.equal(del.ok, true, del.text);
  });
});

describe('the secrets list is no oracle either', () => {
  test('read_file/write_file/list_dir on .ssh: same answer for a file, a folder and nothing', async () => {
    const { mkdirSync, writeFileSync } = await import('node:fs');
    mkdirSync(path.join(tree.ws, 'home/.ssh/keys'), { recursive: true });
    writeFileSync(path.join(tree.ws, 'home/.ssh/id_rsa'), SECRET_TEXT);
    for (const tool of ['read_file', 'write_file', 'list_dir', 'grep', 'delete_file'] as const) {
      const seen = new Set<string>();
      for (const p of ['home/.ssh/id_rsa', 'home/.ssh/missing', 'home/.ssh/keys', 'home/.ssh/nodir/x', 'home/.ssh']) {
        const a: Record<string, unknown> = tool === 'write_file' ? { path: p, content: 'x', dry_run: true } : tool === 'grep' ? { pattern: 'a', path: p } : { path: p };
        const env = await h.call(tool, a);
        assert.equal(env.ok, false);
        assert.ok(!JSON.stringify(env).includes(SECRET_TEXT));
        seen.add(normalise(env, p));
      }
      assert.equal(seen.size, 1, `${tool}: ${[...seen].join('\n')}`);
    }
  });
});

function walkLeaks(env: Envelope, given = ''): string[] {
  const raw = JSON.stringify(env).replace(RULE_TEXT, '<RULE>');
  const s = given ? raw.split(given).join('<G>') : raw;
  const out: string[] = [];
  if (s.includes(SECRET_TEXT)) out.push('secret text');
  for (const n of HIDDEN_NAMES) if (s.includes(n)) out.push(`name ${n}`);
  for (const d of DENIED_DIRS) if (s.includes(`${d}/`)) out.push(`a path in ${d}`);
  if (s.includes('asked/q.txt')) out.push('an asked path');
  return out;
}

describe('rules hold in walks', () => {
  const engines: Array<[string, string | undefined]> = [['ripgrep', undefined], ['builtin', 'off']];
  for (const [engine, rg] of engines) {
    test(`grep (${engine}) leaves denied and asked files out, in every mode`, async () => {
      const saved = process.env.TOOLGATE_RG;
      if (rg) process.env.TOOLGATE_RG = rg; else delete process.env.TOOLGATE_RG;
      try {
        for (const extra of [{}, { output_mode: 'content', context: 3 }, { output_mode: 'count' }, { hidden: true }, { glob: '**/x' }, { glob: ['*', '!pub/**'] }, { multiline: true }, { fixed_strings: true }]) {
          for (const where of ['.', 'd1', 'd1/d2', 'pub']) {
            const env = await h.call('grep', { pattern: 'TOPSECRET', path: where, ...extra });
            assert.equal(env.ok, true, env.text);
            assert.deepEqual(walkLeaks(env), [], `${JSON.stringify(extra)} from ${where}: ${JSON.stringify(env.data)}`);
          }
        }
        const asked = await h.call('grep', { pattern: 'asked', path: '.' });
        assert.ok(((asked.data as { skipped_by_policy?: number }).skipped_by_policy ?? 0) >= 1, JSON.stringify(asked.data));
      } finally {
        if (saved === undefined) delete process.env.TOOLGATE_RG; else process.env.TOOLGATE_RG = saved;
      }
    });
  }

  test('glob and list_dir leave denied and asked entries out (glob: every engine)', async () => {
    const rgFound = await locateRg({ ...process.env, TOOLGATE_RG: '' });
    for (const engine of rgFound ? ['rg', 'builtin', 'index'] as const : ['builtin', 'index'] as const) {
      if (engine === 'index') await settle([tree.ws]);
      await withEngine(engine, async () => {
        for (const args of [{ pattern: '**' }, { pattern: '**', hidden: true, gitignore: false }, { pattern: 'priv/*' }, { pattern: 'd1/**/*' }, { pattern: '**/x' }, { pattern: '**', path: 'd1' }]) {
          const env = await h.call('glob', args);
          // A pattern whose literal base is denied is refused as a path would be; anything else runs.
          if (args.pattern.startsWith('priv/')) assert.equal(env.error?.code, 'ToolNotAllowed');
          else {
            assert.equal(env.ok, true, env.text);
            assert.equal((env.data as { engine: string }).engine, engine === 'rg' ? 'ripgrep' : engine);
          }
          assert.deepEqual(walkLeaks(env, args.pattern), [], `${engine} ${JSON.stringify(args)}: ${JSON.stringify(env.data)}`);
        }
        const g = await h.call('glob', { pattern: '**' });
        assert.ok(((g.data as { skipped_by_policy?: number }).skipped_by_policy ?? 0) >= 1, JSON.stringify(g.data));
      });
    }
    for (const p of ['.', 'd1', 'd1/d2']) {
      const env = await h.call('list_dir', { path: p, hidden: true, gitignore: false });
      assert.equal(env.ok, true, env.text);
      assert.deepEqual(walkLeaks(env), []);
      const names = (env.data as { entries: Array<{ name: string }> }).entries.map((e) => e.name);
      assert.ok(!names.includes('priv') && !names.includes('d3'), names.join(','));
    }
  });

  test('a walk answers the same whether a denied folder holds one file or many (counts and caps included)', async () => {
    const { mkdirSync, writeFileSync, rmSync } = await import('node:fs');
    const calls: Array<[string, Record<string, unknown>]> = [
      ['glob', { pattern: '**', hidden: true, gitignore: false }], ['glob', { pattern: '**/*.txt' }],
      ['grep', { pattern: 'line', path: '.', output_mode: 'count' }], ['grep', { pattern: 'nothing-matches-this', path: '.' }],
      ['list_dir', { path: '.', hidden: true }], ['list_dir', { path: 'd1/d2' }],
    ];
    // unchanged_folder_files counts files taken from folders unchanged for a moment: it tells that
    // a folder's entries changed lately, as its mtime in list_dir does, and nothing of what.
    const view = (e: Envelope) => JSON.stringify({ ok: e.ok, text: e.text, data: e.data, stats: { ...e.stats, duration_ms: 0, unchanged_folder_files: 0 } }).replace(/"mtime_ms":\d+/g, '');
    const rgFound = await locateRg({ ...process.env, TOOLGATE_RG: '' });
    for (const engine of rgFound ? ['builtin', 'index', 'rg'] as const : ['builtin', 'index'] as const) {
      await withEngine(engine, async () => {
        // The index answers from folders unchanged for a moment (else glob walks, and says so): settle first.
        if (engine === 'index') await settle([tree.ws]);
        const before = await Promise.all(calls.map(([t, a]) => h.call(t, a).then(view)));
        for (const d of DENIED_DIRS) {
          mkdirSync(path.join(tree.ws, d, 'more-hidden'), { recursive: true });
          for (let i = 0; i < 30; i++) writeFileSync(path.join(tree.ws, d, 'more-hidden', `f${i}.txt`), `line ${SECRET_TEXT}\n`);
        }
        // Secrets-list files beside public ones, and a denied folder that appears where there was none.
        for (let i = 0; i < 5; i++) writeFileSync(path.join(tree.ws, 'pub', `k${i}.pem`), `line ${SECRET_TEXT}\n`);
        mkdirSync(path.join(tree.ws, 'pub/nested/.ssh'), { recursive: true });
        writeFileSync(path.join(tree.ws, 'pub/nested/.ssh/id'), `line ${SECRET_TEXT}\n`);
        if (engine === 'index') await settle([tree.ws]);
        const afterAdd = await Promise.all(calls.map(([t, a]) => h.call(t, a).then(view)));
        for (const d of DENIED_DIRS) rmSync(path.join(tree.ws, d, 'more-hidden'), { recursive: true });
        for (let i = 0; i < 5; i++) rmSync(path.join(tree.ws, 'pub', `k${i}.pem`));
        rmSync(path.join(tree.ws, 'pub/nested/.ssh'), { recursive: true });
        calls.forEach(([t, a], i) => assert.equal(afterAdd[i], before[i], `${engine} ${t} ${JSON.stringify(a)} changed with the denied folder's contents`));
      });
    }
  });

  test('recursive delete of a folder holding a denied or protected path is refused without naming it', async () => {
    const env = await h.call('delete_file', { path: 'd1', recursive: true, dry_run: true });
    assert.equal(env.ok, false);
    assert.deepEqual(walkLeaks(env), []);
    const { mkdirSync, writeFileSync, existsSync } = await import('node:fs');
    mkdirSync(path.join(tree.ws, 'proj/sub/.git'), { recursive: true });
    writeFileSync(path.join(tree.ws, 'proj/sub/.git/config'), '[core]\n');
    mkdirSync(path.join(tree.ws, 'proj/.vscode'), { recursive: true });
    writeFileSync(path.join(tree.ws, 'proj/.vscode/settings.json'), '{}');
    const p = await h.call('delete_file', { path: 'proj', recursive: true });
    assert.equal(p.ok, false);
    assert.ok(existsSync(path.join(tree.ws, 'proj/sub/.git/config')));
  });
});

describe('a rule path written absolute', () => {
  test('matches inside the root (or the policy is refused)', async () => {
    let pol;
    try {
      pol = policyFromYaml(`rules:\n  - { tool: "*", path: "${tree.ws}/pub/nested/**", decision: deny }\n`);
    } catch {
      return; // refused at load: not silently dead
    }
    const h2 = new Harness([tree.ws], { policy: pol, stateDir: tree.state });
    try {
      const r = await h2.call('read_file', { path: 'pub/nested/b.txt' });
      assert.equal(r.ok, false, 'an absolute rule path was accepted but matched nothing');
      const g = await h2.call('grep', { pattern: 'another', path: '.' });
      assert.deepEqual((g.data as { files: string[] }).files, []);
    } finally {
      h2.close();
    }
  });
});

describe('the audit', () => {
  test('every record of the attacks has a decision and a rule, the chain verifies, nothing secret is in it', async () => {
    await h.call('no_such_tool', {});
    await h.call('read_file', { nope: 1 });
    await h.call('read_file', { path: 'pub/a.txt', api_key: 'sk-abcdefghijklmnop1234' });
    const file = path.join(tree.state, 'audit.jsonl');
    const v = await verifyAudit(file);
    assert.ok(v.ok, v.problem);
    const lines = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.ok(lines.length > 100);
    for (const r of lines) {
      assert.ok(['allow', 'ask', 'deny'].includes(r.decision as string), `no decision: ${JSON.stringify(r).slice(0, 300)}`);
      assert.equal(typeof r.rule, 'string', `no rule: ${JSON.stringify(r).slice(0, 300)}`);
    }
    const all = readFileSync(file, 'utf8');
    assert.ok(!all.includes(SECRET_TEXT));
    for (const n of HIDDEN_NAMES) assert.ok(!all.includes(n), n);
    assert.ok(!all.includes('sk-abcdefghijklmnop1234'));
  });
});
