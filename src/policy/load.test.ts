// Loading policy files: every fault names its line and key; the example file loads.
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { REPO_ROOT, tempDir } from '../testing/helpers.js';
import { defaultPolicy, hasCommandExamples, loadPolicyFile, parsePolicyText, PolicyError } from './load.js';
import { compilePolicy } from './compile.js';

function loadText(yaml: string, opts: { profile?: string } = {}) {
  const { data, lines } = parsePolicyText(yaml, 'p.yaml');
  return compilePolicy(data, { origin: 'p.yaml', lines, ...opts });
}

const scratch = tempDir('tg-pol-');
after(() => scratch.cleanup());
let n = 0;

/** Loads the text as a file, the way the server does, and returns the error. */
async function fault(yaml: string, opts: { profile?: string } = {}): Promise<PolicyError> {
  const f = path.join(scratch.dir, `p${n++}.yaml`);
  writeFileSync(f, yaml);
  try {
    await loadPolicyFile(f, opts);
  } catch (e) {
    assert.ok(e instanceof PolicyError, `not a PolicyError: ${String(e)}`);
    assert.ok(e.message.startsWith(`${f}:`), e.message);
    return e;
  }
  assert.fail('the policy loaded, but it should have been rejected');
}

interface Row {
  name: string;
  yaml: string;
  line: number;
  /** What the message must mention: the key at fault. */
  mentions: RegExp;
  profile?: string;
}

const rows: Row[] = [
  { name: 'unknown top-level key', yaml: 'version: 1\nprofil: edit\n', line: 2, mentions: /"profil"/ },
  { name: 'unknown key inside a rule', yaml: 'rules:\n  - tool: read_file\n    decison: allow\n', line: 3, mentions: /"decison"/ },
  { name: 'unknown key in paths', yaml: 'paths:\n  deny: []\n  allow: ["**"]\n', line: 3, mentions: /"allow"/ },
  { name: 'unknown key in limits', yaml: 'limits:\n  timeout: 5\n', line: 2, mentions: /"timeout"/ },
  { name: 'wrong type: a string for a number', yaml: 'limits:\n  timeout_ms: soon\n', line: 2, mentions: /limits\.timeout_ms/ },
  { name: 'wrong type: a string for a list', yaml: 'paths:\n  deny: "**/x"\n', line: 2, mentions: /paths\.deny/ },
  { name: 'wrong type: a number for a boolean', yaml: 'paths:\n  allow_hardlinks: 1\n', line: 2, mentions: /paths\.allow_hardlinks/ },
  { name: 'bad decision', yaml: 'rules:\n  - tool: read_file\n    decision: maybe\n', line: 3, mentions: /rules\.0\.decision/ },
  { name: 'missing decision', yaml: 'rules:\n  - tool: read_file\n', line: 2, mentions: /rules\.0\.decision/ },
  { name: 'bad mode', yaml: 'version: 1\nmode: yolo\n', line: 2, mentions: /mode/ },
  { name: 'bad version', yaml: 'version: 2\n', line: 1, mentions: /version/ },
  { name: 'bad permission in a profile', yaml: 'profiles:\n  p:\n    permissions: [fs.everything]\n', line: 3, mentions: /profiles\.p\.permissions/ },
  { name: 'bad sandbox backend', yaml: 'sandbox:\n  backend: docker\n', line: 2, mentions: /sandbox\.backend/ },
  { name: 'negative limit', yaml: 'limits:\n  output_bytes: -1\n', line: 2, mentions: /limits\.output_bytes/ },
  { name: 'unknown profile', yaml: 'version: 1\nprofile: nobody\n', line: 2, mentions: /profile.*nobody|nobody.*profile/ },
  { name: 'unknown profile from the flag', yaml: 'version: 1\n', line: 0, mentions: /nobody/, profile: 'nobody' },
  { name: 'YAML syntax error', yaml: 'version: 1\nmode: ci: x\nrules: []\n', line: 2, mentions: /YAML/ },
  { name: 'duplicate key', yaml: 'version: 1\nmode: ci\nmode: interactive\n', line: 3, mentions: /unique|duplicate/i },
  { name: 'match example that does not match its command', yaml: 'rules:\n  - tool: run_command\n    command: "npm test"\n    decision: allow\n    match: ["npm run build"]\n', line: 2, mentions: /match/ },
  { name: 'not_match example that matches its command', yaml: 'rules:\n  - tool: run_command\n    command: "git"\n    decision: allow\n    not_match: ["git push"]\n', line: 2, mentions: /not_match/ },
  // Only a profile rule has examples: the shell parser must still be loaded to check them.
  { name: 'not_match example in a profile rule', yaml: 'profile: p\nprofiles:\n  p:\n    rules:\n      - tool: run_command\n        command: "git"\n        decision: allow\n        not_match: ["git push"]\n', line: 5, mentions: /not_match/ },
  { name: 'match examples without a command', yaml: 'rules:\n  - tool: read_file\n    decision: allow\n    match: ["x"]\n', line: 2, mentions: /match/ },
  { name: 'an empty tool name', yaml: 'rules:\n  - tool: ""\n    decision: allow\n', line: 2, mentions: /rules\.0\.tool/ },
  {
    name: 'a rule with both path and command (it could never match)',
    yaml: 'rules:\n  - tool: run_command\n    command: "rm"\n    path: "src/**"\n    decision: deny\n', line: 2, mentions: /path|command/,
  },
];

describe('policy load errors name the line and the key', () => {
  for (const r of rows) {
    test(r.name, async () => {
      const e = await fault(r.yaml, r.profile ? { profile: r.profile } : {});
      assert.match(e.message, r.mentions);
      if (r.line > 0) {
        assert.equal(e.line, r.line, e.message);
        assert.match(e.message, new RegExp(`\\.yaml:${r.line}: `));
      }
    });
  }
});

describe('policy files', () => {
  test('an empty file gives the defaults', () => {
    const p = loadText('');
    assert.equal(p.profile, 'full');
    assert.equal(p.mode, 'interactive');
    assert.equal(p.rules.length, 0);
    assert.equal(p.data.limits.output_lines, 2000);
    assert.equal(p.data.paths.allow_hardlinks, false);
  });

  test('a file that is not a mapping is rejected', () => {
    assert.throws(() => loadText('- a\n- b\n'), PolicyError);
  });

  test('the CLI profile and mode win over the file', () => {
    const { data, lines } = parsePolicyText('profile: full\nmode: interactive\n', 'p.yaml');
    const p = compilePolicy(data, { origin: 'p.yaml', lines, profile: 'readonly', mode: 'ci' });
    assert.equal(p.profile, 'readonly');
    assert.equal(p.mode, 'ci');
    assert.ok(!p.permissions.has('fs.write'));
  });

  test('paths.deny and paths.protect add to the defaults, never replace them', () => {
    const p = loadText('paths:\n  deny: ["**/secrets/**"]\n  protect: ["infra/**"]\n');
    assert.ok(p.pathRules.isDenied('.env', '/w/.env'));
    assert.ok(p.pathRules.isDenied('a/secrets/x', '/w/a/secrets/x'));
    assert.ok(p.pathRules.isProtected('.git/config', '/w/.git/config'));
    assert.ok(p.pathRules.isProtected('infra/main.tf', '/w/infra/main.tf'));
    assert.ok(!p.pathRules.isProtected('src/a.ts', '/w/src/a.ts'));
  });

  test('a deny entry with a slash and a file name applies', () => {
    const p = loadText('paths:\n  deny: ["config/prod.yaml"]\n');
    assert.ok(p.pathRules.isDenied('config/prod.yaml', '/w/config/prod.yaml'));
    assert.ok(!p.pathRules.isDenied('config/dev.yaml', '/w/config/dev.yaml'));
  });

  test('defaultPolicy is the built-in one', () => {
    const p = defaultPolicy();
    assert.equal(p.origin, '(defaults)');
    assert.equal(p.profile, 'full');
  });

  test('loadPolicyFile prefixes errors with the file name and line', async () => {
    const { dir, cleanup } = tempDir();
    const f = path.join(dir, 'bad.yaml');
    writeFileSync(f, 'version: 1\nrules:\n  - tool: read_file\n    decision: perhaps\n');
    await assert.rejects(loadPolicyFile(f), (e: unknown) => e instanceof PolicyError && e.message.startsWith(`${f}:4:`) && /decision/.test(e.message));
    cleanup();
  });

  test('loadPolicyFile on a missing file says it cannot read it', async () => {
    await assert.rejects(loadPolicyFile('/nonexistent/policy.yaml'), (e: unknown) => e instanceof PolicyError && /cannot read/.test(e.message));
  });

  test('policy.example.yaml at the repo root loads', { skip: !existsSync(path.join(REPO_ROOT, 'policy.example.yaml')) }, async () => {
    const p = await loadPolicyFile(path.join(REPO_ROOT, 'policy.example.yaml'));
    assert.ok(p.rules.length > 0);
    // every rule names its line in the file
    for (const r of p.rules) assert.ok(r.line && r.line > 0, r.text);
    // and every profile it defines can be selected
    for (const name of Object.keys(p.data.profiles)) await loadPolicyFile(path.join(REPO_ROOT, 'policy.example.yaml'), { profile: name });
  });
});

describe('the shell parser is loaded at policy load only for match/not_match examples', () => {
  const rows: Array<[string, string, boolean]> = [
    ['no rules', '', false],
    ['rules without examples', 'rules:\n  - tool: run_command\n    command: "git"\n    decision: allow\n', false],
    ['empty example lists', 'rules:\n  - tool: run_command\n    command: "git"\n    decision: allow\n    match: []\n    not_match: []\n', false],
    ['a top-level match', 'rules:\n  - tool: run_command\n    command: "git"\n    decision: allow\n    match: ["git status"]\n', true],
    ['a profile not_match', 'profiles:\n  p:\n    rules:\n      - tool: run_command\n        command: "git"\n        decision: allow\n        not_match: ["ls"]\n', true],
  ];
  for (const [name, yaml, want] of rows) {
    test(name, () => assert.equal(hasCommandExamples(parsePolicyText(yaml, 'p.yaml').data), want));
  }
  test('a match example that needs the parser (a compound command) is still judged', async () => {
    // "git status; rm x" is not covered by an allow rule for git: the rm part is outside it.
    const e = await fault('rules:\n  - tool: run_command\n    command: "git"\n    decision: allow\n    match: ["git status; rm x"]\n');
    assert.match(e.message, /match/);
  });
});
