// An independent attack review of the gate-first change (issue 8), continued: commands the parser
// cannot see into, the audit a model can read, session grants, other sessions' spills, redaction,
// several paths in one call, ask rules for commands. Breaks found by the review carry "BREAK" in
// their test name (each was fixed in the same commit as its test). File tools: review-gate.test.ts.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCall } from '../../src/core/pipeline.js';
import { Session } from '../../src/core/session.js';
import { SessionRoots } from '../../src/server/session-roots.js';
import { detectBwrap } from '../../src/exec/sandbox.js';
import { Harness, policyFromYaml } from '../../src/testing/helpers.js';
import { deniedLeaks as leaks, GATE_POLICY, gateTree, HIDDEN_NAMES, normalise, SECRET_TEXT, type GateTree } from './gate-fixture.js';

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
