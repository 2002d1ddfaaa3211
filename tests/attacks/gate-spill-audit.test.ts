// Spills stay with the session that got them; an ask rule shows no state before approval
// (ci mode, no elicitation, a user who says no); the audit redacts keys in every case style.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { redact, REDACTED } from '../../src/audit/redact.js';
import { verifyAudit } from '../../src/audit/verify.js';
import { runCall } from '../../src/core/pipeline.js';
import { Session } from '../../src/core/session.js';
import { SessionRoots } from '../../src/server/session-roots.js';
import { Harness, policyFromYaml } from '../../src/testing/helpers.js';
import { GATE_POLICY, gateTree, normalise, SECRET_TEXT, type GateTree } from './gate-fixture.js';

let tree: GateTree;
before(() => {
  tree = gateTree();
  writeFileSync(path.join(tree.ws, 'pub/many.txt'), Array.from({ length: 200 }, (_, i) => `public line ${i}`).join('\n'));
});
after(() => tree?.cleanup());

describe('spills', () => {
  test('a storage_ref is readable by its own session only; guessed spill paths are refused alike', async () => {
    const h = new Harness([tree.ws], { policy: policyFromYaml(`${GATE_POLICY}\nlimits: { output_lines: 5 }\n`) });
    try {
      const g = await h.call('grep', { pattern: 'public', path: 'pub', output_mode: 'content', head_limit: 200 });
      assert.equal(g.ok, true, g.text);
      const ref = g.artifacts.storage_ref;
      assert.ok(ref, `no spill: ${g.text}`);
      const own = await h.call('read_file', { path: ref });
      assert.equal(own.ok, true, `own spill refused: ${own.text}`);

      const other = new SessionRoots(h.rt, [tree.ws], new Session());
      const call = async (tool: string, args: unknown) => (await runCall(h.rt, other, tool, args, { signal: new AbortController().signal })).envelope;
      const theirs = await call('read_file', { path: ref });
      assert.equal(theirs.ok, false, 'another session read the spill');
      assert.ok(!JSON.stringify(theirs).includes('public line 1'));
      const guessed = ref.replace(/[^/]+$/, 'tc_guess.txt');
      const miss = await call('read_file', { path: guessed });
      assert.equal(normalise(miss, guessed), normalise(theirs, ref), 'an existing and a guessed spill answer differently');
      for (const [tool, args] of [['grep', { pattern: 'public', path: ref }], ['list_dir', { path: path.dirname(ref) }], ['glob', { pattern: '**', path: path.dirname(ref) }]] as const) {
        const e = await call(tool, args);
        assert.equal(e.ok, false, `${tool} reached the spill folder`);
      }
      const grepAll = await call('grep', { pattern: 'public line 1', path: '.', hidden: true });
      assert.deepEqual((grepAll.data as { files: string[] }).files, ['pub/many.txt']);
    } finally {
      h.close();
    }
  });
});

describe('an ask rule shows no state before approval', () => {
  const cases: Array<[string, string, (s: Session) => void]> = [
    ['no elicitation', '', () => {}],
    ['ci mode', '\nmode: ci\n', () => {}],
    ['the user says no', '', (s) => { s.elicit = async () => ({ action: 'decline' }); }],
  ];
  for (const [label, extra, setup] of cases) {
    test(`${label}: present, missing and nested-missing paths get one answer, for every tool`, async () => {
      const session = new Session();
      setup(session);
      const h = new Harness([tree.ws], { policy: policyFromYaml(GATE_POLICY + extra), stateDir: tree.state, session });
      try {
        const templates: Array<[string, (p: string) => Record<string, unknown>]> = [
          ['read_file', (p) => ({ path: p })],
          ['list_dir', (p) => ({ path: p })],
          ['grep', (p) => ({ pattern: 'x', path: p })],
          ['write_file', (p) => ({ path: p, content: 'z', dry_run: true })],
          ['edit_file', (p) => ({ path: p, old_string: 'a', new_string: 'b', dry_run: true })],
          ['delete_file', (p) => ({ path: p, dry_run: true })],
        ];
        for (const [tool, args] of templates) {
          const seen = new Map<string, string>();
          for (const p of ['asked/q.txt', 'asked/missing', 'asked/nodir/missing', 'asked/sub', 'asked/fifo', 'asked/out', 'asked/dangling', 'asked/q.txt/x']) {
            const env = await h.call(tool, args(p));
            assert.equal(env.ok, false, `${tool} ${p} ran without approval`);
            assert.ok(['ApprovalRequired', 'ApprovalDenied'].includes(env.error!.code), `${tool} ${p}: ${env.error!.code} ${env.error!.message}`);
            assert.ok(!JSON.stringify(env).includes(SECRET_TEXT));
            seen.set(env.error!.code, p);
          }
          assert.equal(seen.size, 1, `${tool}: ${[...seen].join(' | ')}`);
        }
      } finally {
        h.close();
      }
    });
  }

  test('an approving client: the present file is read, the missing one is NotFound (after approval)', async () => {
    const session = new Session();
    session.elicit = async () => ({ action: 'accept', content: { decision: 'allow_once' } });
    const h = new Harness([tree.ws], { policy: policyFromYaml(GATE_POLICY), stateDir: tree.state, session });
    try {
      const ok = await h.call('read_file', { path: 'asked/q.txt' });
      assert.equal(ok.ok, true, ok.text);
      const missing = await h.call('read_file', { path: 'asked/missing' });
      assert.equal(missing.error?.code, 'NotFound');
      // An approved walk of the asked folder sees inside it; a walk from above leaves it out.
      const inside = await h.call('grep', { pattern: 'asked content', path: 'asked' });
      assert.deepEqual((inside.data as { files: string[] }).files, ['asked/q.txt']);
      const above = await h.call('grep', { pattern: 'asked content', path: '.' });
      assert.deepEqual((above.data as { files: string[] }).files, []);
      assert.ok((above.data as { skipped_by_policy: number }).skipped_by_policy >= 1);
      const listed = await h.call('list_dir', { path: 'asked' });
      assert.ok((listed.data as { entries: Array<{ name: string }> }).entries.some((e) => e.name === 'q.txt'));
    } finally {
      h.close();
    }
  });
});

describe('audit redaction', () => {
  const keys = ['accessKey', 'AccessKey', 'access_key', 'ACCESS_KEY', 'access-key', 'api_key', 'apiKey', 'X-Api-Key', 'x_api_key', 'clientSecret',
    'client-secret', 'CLIENT_SECRET', 'authToken', 'Auth-Token', 'sessionToken', 'privateKey', 'sshKey', 'signingKey', 'password', 'dbPassword', 'Cookie', 'auth'];
  for (const k of keys) {
    test(`"${k}" is redacted, nested and in arrays`, () => {
      assert.deepEqual(redact({ [k]: 'v1' }), { [k]: REDACTED });
      assert.deepEqual(redact({ headers: [{ [k]: 'v2' }] }), { headers: [{ [k]: REDACTED }] });
    });
  }
  test('model-chosen text: JSON bodies and headers inside strings', () => {
    for (const s of ['curl -d \'{"apiKey": "abc123xyz"}\' https://x', 'curl -H "X-Api-Key: abc123xyz" https://x', 'clientSecret=abc123xyz node app.js', 'echo {"client_secret":"abc123xyz"}']) {
      assert.ok(!(redact(s) as string).includes('abc123xyz'), `${s} -> ${redact(s)}`);
    }
  });
  test('a megabyte of letters is redacted in linear time (no regex blow-up on the audit path)', () => {
    for (const big of ['x'.repeat(1024 * 1024), 'token'.repeat(200_000), 'a\n'.repeat(400_000)]) {
      const t = Date.now();
      redact({ old_string: big, command: big });
      assert.ok(Date.now() - t < 1500, `${big.slice(0, 10)}…: ${Date.now() - t} ms`);
    }
  });
  test('ordinary keys stay', () => {
    const a = { path: 'a', keyboard: 1, monkey: 2, max_tokens: 3, keys: 4, author: 5 };
    assert.deepEqual(redact(a), a);
  });

  test('a run_command that fails is audited with its command, exit code, and redacted secrets; every line has a decision', async () => {
    const h = new Harness([tree.ws], { policy: policyFromYaml('rules:\n  - { tool: run_command, command: "sh", decision: allow }\n  - { tool: run_command, command: "false", decision: allow }\n  - { tool: run_command, command: "sleep", decision: allow }\n'), stateDir: path.join(tree.state, 'cmd') });
    try {
      const r = await h.call('run_command', { command: 'false' });
      assert.equal(r.ok, false);
      const secret = await h.call('run_command', { command: 'false --apiKey=abc123xyz' });
      assert.equal(secret.ok, false);
      const bg = await h.call('run_command', { command: 'sleep 0.2', background: true });
      assert.equal(bg.ok, true, bg.text);
      const file = path.join(tree.state, 'cmd', 'audit.jsonl');
      assert.ok((await verifyAudit(file)).ok);
      const text = readFileSync(file, 'utf8');
      assert.ok(!text.includes('abc123xyz'), 'a secret in a command reached the audit');
      const recs = text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>);
      const failed = recs.find((x) => x.args.command === 'false')!;
      assert.ok(failed, 'no record of the failed command');
      assert.deepEqual(failed.commands_run, ['false']);
      assert.equal(failed.command.exit_code, 1);
      assert.equal(failed.decision, 'allow');
      const started = recs.find((x) => x.args.command === 'sleep 0.2')!;
      assert.equal(typeof started.command.pid, 'number');
      assert.match(started.command.process_id, /./);
      const withKey = recs.find((x) => String(x.args.command).startsWith('false --'))!;
      assert.equal(withKey.command?.exit_code, 1, JSON.stringify(withKey));
      assert.deepEqual(withKey.commands_run, ['false --apiKey=[REDACTED]']);
      for (const x of recs) assert.ok(x.decision && typeof x.rule === 'string');
    } finally {
      await h.session.dispose();
      h.close();
    }
  });
});
