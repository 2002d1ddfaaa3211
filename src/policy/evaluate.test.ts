// evaluate() as a table: one row per rule behaviour, named after the behaviour.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { PathAccess, PlanTarget, ResolvedPath } from '../core/types.js';
import { policyFromYaml } from '../testing/helpers.js';
import { deniedOutright, evaluate, stricter } from './evaluate.js';
import type { Decision, ToolFacts } from './types.js';

const readFile: ToolFacts = { name: 'read_file', risk: 'low', permissions: ['fs.read'] };
const listDir: ToolFacts = { name: 'list_dir', risk: 'low', permissions: ['fs.read'] };
const writeFile: ToolFacts = { name: 'write_file', risk: 'medium', permissions: ['fs.write'] };
const deleteFile: ToolFacts = { name: 'delete_file', risk: 'high', permissions: ['fs.delete'] };
const runCommand: ToolFacts = { name: 'run_command', risk: 'medium', permissions: ['proc.exec'] };
const fetchUrl: ToolFacts = { name: 'fetch_url', risk: 'high', permissions: ['net.connect'] };
const display: ToolFacts = { name: 'display', risk: 'low', permissions: [] };

function p(rel: string, access: PathAccess = 'read', rootIndex = 0): PlanTarget {
  const rp: ResolvedPath = { input: rel, abs: `/root${rootIndex}/${rel}`, display: rel, rootIndex, relToRoot: rel, exists: true, kind: 'file' };
  return { kind: 'path', access, path: rp };
}
function cmd(text: string, literal = true): PlanTarget {
  return { kind: 'command', text, words: text.split(' ').map((w) => ({ text: w, literal: literal && !w.includes('$') })) };
}
function dom(host: string): PlanTarget {
  return { kind: 'domain', host, url: `https://${host}/` };
}

interface Row {
  name: string;
  yaml: string;
  tool: ToolFacts;
  targets: PlanTarget[];
  decision: Decision;
  /** A fragment of the rule that made the decision. */
  rule?: RegExp;
}

const rows: Row[] = [
  { name: 'uncovered low risk tool is allowed', yaml: 'version: 1', tool: readFile, targets: [p('a.txt')], decision: 'allow', rule: /default for low risk/ },
  { name: 'uncovered medium risk tool asks', yaml: 'version: 1', tool: writeFile, targets: [p('a.txt', 'write')], decision: 'ask', rule: /default for medium risk/ },
  { name: 'uncovered high risk tool asks', yaml: 'version: 1', tool: deleteFile, targets: [p('a.txt', 'delete')], decision: 'ask', rule: /default for high risk/ },
  { name: 'a call with no targets is judged on the tool', yaml: 'version: 1', tool: display, targets: [], decision: 'allow' },
  {
    name: 'deny beats an earlier allow',
    yaml: 'rules:\n  - {tool: read_file, decision: allow}\n  - {tool: read_file, path: "secret/**", decision: deny}',
    tool: readFile, targets: [p('secret/x.txt')], decision: 'deny', rule: /rules\[1\]/,
  },
  {
    name: 'deny beats a later allow',
    yaml: 'rules:\n  - {tool: read_file, path: "secret/**", decision: deny}\n  - {tool: read_file, decision: allow}',
    tool: readFile, targets: [p('secret/x.txt')], decision: 'deny', rule: /rules\[0\]/,
  },
  {
    name: 'ask beats allow regardless of order (ask first)',
    yaml: 'rules:\n  - {tool: write_file, path: "src/**", decision: ask}\n  - {tool: write_file, decision: allow}',
    tool: writeFile, targets: [p('src/a.ts', 'write')], decision: 'ask',
  },
  {
    name: 'ask beats allow regardless of order (allow first)',
    yaml: 'rules:\n  - {tool: write_file, decision: allow}\n  - {tool: write_file, path: "src/**", decision: ask}',
    tool: writeFile, targets: [p('src/a.ts', 'write')], decision: 'ask', rule: /rules\[1\]/,
  },
  {
    name: 'deny beats ask',
    yaml: 'rules:\n  - {tool: write_file, decision: ask}\n  - {tool: "*", path: "dist/**", decision: deny}',
    tool: writeFile, targets: [p('dist/a.js', 'write')], decision: 'deny',
  },
  {
    name: 'an allow rule lifts the medium risk default',
    yaml: 'rules:\n  - {tool: write_file, path: "src/**", decision: allow}',
    tool: writeFile, targets: [p('src/a.ts', 'write')], decision: 'allow', rule: /rules\[0\] \(line 2\)/,
  },
  {
    name: 'a deny rule overrides the low risk default',
    yaml: 'rules:\n  - {tool: read_file, path: "private/**", decision: deny}',
    tool: readFile, targets: [p('private/notes.txt')], decision: 'deny',
  },
  {
    name: 'rule path globs are relative to the root',
    yaml: 'rules:\n  - {tool: read_file, path: "src/*.ts", decision: deny}',
    tool: readFile, targets: [p('lib/src/a.ts')], decision: 'allow',
  },
  {
    name: 'rule path globs with a slash match from the root',
    yaml: 'rules:\n  - {tool: read_file, path: "src/*.ts", decision: deny}',
    tool: readFile, targets: [p('src/a.ts')], decision: 'deny',
  },
  {
    name: 'a path glob without a slash matches the name at any depth',
    yaml: 'rules:\n  - {tool: read_file, path: "*.min.js", decision: deny}',
    tool: readFile, targets: [p('web/vendor/x.min.js')], decision: 'deny',
  },
  {
    name: '* in an allow glob stays in one folder',
    yaml: 'rules:\n  - {tool: write_file, path: "src/*", decision: allow}',
    tool: writeFile, targets: [p('src/deep/a.ts', 'write')], decision: 'ask',
  },
  {
    name: 'an allow naming a folder does not cover its contents',
    yaml: 'rules:\n  - {tool: write_file, path: "src", decision: allow}',
    tool: writeFile, targets: [p('src/a.ts', 'write')], decision: 'ask',
  },
  {
    name: '** in a path glob crosses folders',
    yaml: 'rules:\n  - {tool: read_file, path: "src/**", decision: deny}',
    tool: readFile, targets: [p('src/deep/a.ts')], decision: 'deny',
  },
  {
    name: 'path globs match dot files',
    yaml: 'rules:\n  - {tool: read_file, path: "cfg/**", decision: deny}',
    tool: readFile, targets: [p('cfg/.hidden')], decision: 'deny',
  },
  {
    name: 'path rules are matched in the root the path is in',
    yaml: 'rules:\n  - {tool: read_file, path: "src/**", decision: deny}',
    tool: readFile, targets: [p('src/a.ts', 'read', 1)], decision: 'deny',
  },
  {
    name: 'path rule only applies to path targets (not to commands)',
    yaml: 'rules:\n  - {tool: run_command, path: "**", decision: deny}',
    tool: runCommand, targets: [cmd('ls')], decision: 'ask',
  },
  {
    name: 'path rule does not cover a call without targets',
    yaml: 'rules:\n  - {tool: display, path: "**", decision: deny}',
    tool: display, targets: [], decision: 'allow',
  },
  {
    name: 'a rule for another tool does not apply',
    yaml: 'rules:\n  - {tool: write_file, decision: deny}',
    tool: readFile, targets: [p('a.txt')], decision: 'allow',
  },
  {
    name: 'tool globs: *_file covers read_file',
    yaml: 'rules:\n  - {tool: "*_file", path: "x/**", decision: deny}',
    tool: readFile, targets: [p('x/a')], decision: 'deny',
  },
  {
    name: 'tool globs: *_file does not cover list_dir',
    yaml: 'rules:\n  - {tool: "*_file", path: "x/**", decision: deny}',
    tool: listDir, targets: [p('x/a', 'list')], decision: 'allow',
  },
  {
    name: 'the strictest target decides (one denied path among allowed ones)',
    yaml: 'rules:\n  - {tool: write_file, decision: allow}\n  - {tool: write_file, path: "infra/**", decision: deny}',
    tool: writeFile, targets: [p('src/a', 'write'), p('infra/b', 'write'), p('src/c', 'write')], decision: 'deny', rule: /infra/,
  },
  {
    name: 'one uncovered part keeps the risk default (ask) even when others are allowed',
    yaml: 'rules:\n  - {tool: write_file, path: "src/**", decision: allow}',
    tool: writeFile, targets: [p('src/a', 'write'), p('docs/b', 'write')], decision: 'ask',
  },
  {
    name: 'command rule allows a matching prefix',
    yaml: 'rules:\n  - {tool: run_command, command: "npm run test", decision: allow}',
    tool: runCommand, targets: [cmd('npm run test -- --watch')], decision: 'allow',
  },
  {
    name: 'command rule does not allow a different command',
    yaml: 'rules:\n  - {tool: run_command, command: "npm run test", decision: allow}',
    tool: runCommand, targets: [cmd('npm run build')], decision: 'ask',
  },
  {
    name: 'every simple command is judged: one denied part denies the whole',
    yaml: 'rules:\n  - {tool: run_command, command: ["ls", "cat"], decision: allow}\n  - {tool: run_command, command: "rm", decision: deny}',
    tool: runCommand, targets: [cmd('ls'), cmd('rm -rf x'), cmd('cat y')], decision: 'deny',
  },
  {
    name: 'a non-literal word never satisfies an allow token, not even *',
    yaml: 'rules:\n  - {tool: run_command, command: "git *", decision: allow}',
    tool: runCommand, targets: [cmd('git $CMD')], decision: 'ask',
  },
  {
    name: 'a parser deny reason denies whatever the rules say',
    yaml: 'rules:\n  - {tool: run_command, decision: allow}',
    tool: runCommand, targets: [{ kind: 'command', text: 'eval x', words: [], deny_reason: 'eval is never allowed' }], decision: 'deny', rule: /eval/,
  },
  {
    name: 'command rule does not apply to path targets',
    yaml: 'rules:\n  - {tool: run_command, command: "cat", decision: deny}',
    tool: runCommand, targets: [p('a.txt')], decision: 'ask',
  },
  {
    name: 'domain not in allow-list is denied',
    yaml: 'rules:\n  - {tool: fetch_url, domain: "docs.python.org", decision: allow}',
    tool: fetchUrl, targets: [dom('evil.example')], decision: 'deny', rule: /network is off/,
  },
  {
    name: 'domain on the allow-list is allowed',
    yaml: 'rules:\n  - {tool: fetch_url, domain: "docs.python.org", decision: allow}',
    tool: fetchUrl, targets: [dom('DOCS.python.org.')], decision: 'allow',
  },
  {
    name: 'a *.domain rule covers sub-domains',
    yaml: 'rules:\n  - {tool: fetch_url, domain: "*.npmjs.org", decision: allow}',
    tool: fetchUrl, targets: [dom('registry.npmjs.org')], decision: 'allow',
  },
  {
    name: 'a *.domain rule does not cover the bare domain',
    yaml: 'rules:\n  - {tool: fetch_url, domain: "*.npmjs.org", decision: allow}',
    tool: fetchUrl, targets: [dom('npmjs.org')], decision: 'deny',
  },
  {
    name: 'a *.domain rule does not cover a look-alike suffix',
    yaml: 'rules:\n  - {tool: fetch_url, domain: "*.npmjs.org", decision: allow}',
    tool: fetchUrl, targets: [dom('evilnpmjs.org')], decision: 'deny',
  },
  {
    name: 'an exact domain rule does not cover its sub-domains',
    yaml: 'rules:\n  - {tool: fetch_url, domain: "example.com", decision: allow}',
    tool: fetchUrl, targets: [dom('api.example.com')], decision: 'deny',
  },
  {
    name: 'a tool-only allow for fetch_url still does not open an unnamed domain… unless it covers it',
    yaml: 'rules:\n  - {tool: fetch_url, decision: allow}',
    tool: fetchUrl, targets: [dom('anything.example')], decision: 'allow',
  },
  {
    name: 'profile readonly denies a write tool',
    yaml: 'profile: readonly\nrules:\n  - {tool: write_file, decision: allow}',
    tool: writeFile, targets: [p('a', 'write')], decision: 'deny', rule: /profile "readonly" does not include fs.write/,
  },
  {
    name: 'profile edit denies commands',
    yaml: 'profile: edit\nrules:\n  - {tool: run_command, decision: allow}',
    tool: runCommand, targets: [cmd('ls')], decision: 'deny', rule: /proc.exec/,
  },
  {
    name: 'profile readonly still allows reads',
    yaml: 'profile: readonly',
    tool: readFile, targets: [p('a')], decision: 'allow',
  },
  {
    name: 'a user profile cannot add permissions its base lacks',
    yaml: 'profile: mine\nprofiles:\n  mine: {base: readonly, permissions: [fs.read, fs.write]}',
    tool: writeFile, targets: [p('a', 'write')], decision: 'deny',
  },
  {
    name: 'a user profile narrows its base',
    yaml: 'profile: mine\nprofiles:\n  mine: {base: edit, permissions: [fs.read]}',
    tool: writeFile, targets: [p('a', 'write')], decision: 'deny',
  },
  {
    name: 'a user profile adds its own rules',
    yaml: 'profile: mine\nprofiles:\n  mine:\n    base: edit\n    rules:\n      - {tool: write_file, decision: allow}',
    tool: writeFile, targets: [p('a', 'write')], decision: 'allow', rule: /profile rules\[0\]/,
  },
  {
    name: 'a profile rule allow does not beat a top-level deny',
    yaml: 'profile: mine\nprofiles:\n  mine:\n    base: edit\n    rules:\n      - {tool: write_file, decision: allow}\nrules:\n  - {tool: write_file, path: "x/**", decision: deny}',
    tool: writeFile, targets: [p('x/a', 'write')], decision: 'deny',
  },
  {
    name: 'rules of a profile that is not selected do not apply',
    yaml: 'profiles:\n  other:\n    rules:\n      - {tool: write_file, decision: allow}',
    tool: writeFile, targets: [p('a', 'write')], decision: 'ask',
  },
];

describe('evaluate', () => {
  for (const r of rows) {
    test(r.name, () => {
      const v = evaluate(r.tool, r.targets, policyFromYaml(r.yaml));
      assert.equal(v.decision, r.decision, `rule: ${v.rule}`);
      if (r.rule) assert.match(v.rule, r.rule);
      assert.ok(v.parts.length >= 1);
      assert.equal(v.parts.length, Math.max(1, r.tool.permissions.every((x) => policyFromYaml(r.yaml).permissions.has(x)) ? r.targets.length : 1));
    });
  }

  test('a session grant (extra rule) can allow an ask', () => {
    const pol = policyFromYaml('version: 1');
    const grant = policyFromYaml('rules:\n  - {tool: write_file, path: "src/**", decision: allow}').rules.map((r) => ({ ...r, source: 'grant' as const }));
    const v = evaluate(writeFile, [p('src/a', 'write')], pol, grant);
    assert.equal(v.decision, 'allow');
    assert.equal(v.source, 'grant');
  });

  test('a session grant never lifts a deny', () => {
    const pol = policyFromYaml('rules:\n  - {tool: write_file, path: "src/**", decision: deny}');
    const grant = policyFromYaml('rules:\n  - {tool: write_file, decision: allow}').rules.map((r) => ({ ...r, source: 'grant' as const }));
    assert.equal(evaluate(writeFile, [p('src/a', 'write')], pol, grant).decision, 'deny');
  });

  test('evaluate is pure: the same input gives the same verdict', () => {
    const pol = policyFromYaml('rules:\n  - {tool: read_file, path: "a/**", decision: ask}');
    const t = [p('a/b')];
    assert.deepEqual(evaluate(readFile, t, pol), evaluate(readFile, t, pol));
  });

  test('stricter orders deny > ask > allow', () => {
    assert.equal(stricter('allow', 'ask'), 'ask');
    assert.equal(stricter('deny', 'ask'), 'deny');
    assert.equal(stricter('allow', 'allow'), 'allow');
  });
});

describe('defaults: the decision for what no rule covers, by risk', () => {
  const rows: Array<[string, string, ToolFacts, string]> = [
    ['built-in: low allows', 'version: 1', readFile, 'allow'],
    ['built-in: medium asks', 'version: 1', writeFile, 'ask'],
    ['built-in: high asks', 'version: 1', deleteFile, 'ask'],
    ['defaults: ask asks for low risk too', 'defaults: ask', readFile, 'ask'],
    ['defaults: deny denies what no rule allows', 'defaults: deny', writeFile, 'deny'],
    ['per risk: medium allow', 'defaults: {medium: allow}', writeFile, 'allow'],
    ['per risk: the others keep their built-in value', 'defaults: {medium: allow}', deleteFile, 'ask'],
    ['per risk: low ask', 'defaults: {low: ask}', readFile, 'ask'],
    ['a rule still beats the default', 'defaults: ask\nrules:\n  - {tool: read_file, path: "src/**", decision: allow}', readFile, 'allow'],
  ];
  for (const [name, yaml, tool, want] of rows) {
    test(name, () => {
      const v = evaluate(tool, [p(name.includes('rule still') ? 'src/x' : 'a', tool === readFile ? 'read' : tool === deleteFile ? 'delete' : 'write')], policyFromYaml(yaml));
      assert.equal(v.decision, want, v.rule);
    });
  }
  test('defaults: allow does not open the network (a domain needs a rule)', () => {
    const v = evaluate(fetchUrl, [{ kind: 'domain', host: 'example.com', url: 'https://example.com/' }], policyFromYaml('defaults: allow'));
    assert.equal(v.decision, 'deny');
  });
  test('a bad defaults value is rejected at load', () => {
    assert.throws(() => policyFromYaml('defaults: maybe'));
    assert.throws(() => policyFromYaml('defaults: {critical: ask}'));
  });
});

describe('deniedOutright (what tools/list hides)', () => {
  const rows: Array<[string, string, ToolFacts, boolean]> = [
    ['profile readonly hides write tools', 'profile: readonly', writeFile, true],
    ['profile readonly hides commands', 'profile: readonly', runCommand, true],
    ['profile readonly keeps read tools', 'profile: readonly', readFile, false],
    ['a tool without permissions is never hidden by a profile', 'profile: readonly', display, false],
    ['tool-only deny hides the tool', 'rules:\n  - {tool: read_file, decision: deny}', readFile, true],
    ['tool-only deny by glob hides every match', 'rules:\n  - {tool: "*", decision: deny}', display, true],
    ['a path-qualified deny does not hide the tool', 'rules:\n  - {tool: read_file, path: "x/**", decision: deny}', readFile, false],
    ['a tool-only ask does not hide the tool', 'rules:\n  - {tool: write_file, decision: ask}', writeFile, false],
    ['a profile rule deny hides the tool', 'profile: p\nprofiles:\n  p:\n    rules:\n      - {tool: read_file, decision: deny}', readFile, true],
  ];
  for (const [name, yaml, tool, hidden] of rows) test(name, () => assert.equal(deniedOutright(tool, policyFromYaml(yaml)), hidden));
});

describe('folder rules cover their contents (gitignore-style)', () => {
  const rows: Array<[string, string, string, Decision]> = [
    ['a bare folder name covers files inside it', 'dist', 'dist/a.js', 'deny'],
    ['a bare folder name covers it at any depth', 'dist', 'pkg/dist/a.js', 'deny'],
    ['a trailing slash covers the folder contents', 'secrets/', 'secrets/db.txt', 'deny'],
    ['a rooted folder covers its contents', 'config/prod', 'config/prod/x.yaml', 'deny'],
    ['a rooted folder does not cover a look-alike sibling', 'config/prod', 'config/production/x.yaml', 'allow'],
    ['a file name does not cover a longer name', 'dist', 'distant/a.js', 'allow'],
  ];
  for (const [name, glob, rel, decision] of rows) {
    test(name, () => {
      const pol = policyFromYaml(`rules:\n  - {tool: read_file, path: ${JSON.stringify(glob)}, decision: deny}`);
      assert.equal(evaluate(readFile, [p(rel)], pol).decision, decision);
    });
  }
});
