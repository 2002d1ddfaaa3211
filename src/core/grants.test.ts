import assert from 'node:assert/strict';
import { test } from 'node:test';
import { grantToRule, grantsAsYaml, proposeGrants } from './grants.js';
import type { PlanTarget, ResolvedPath } from './types.js';
import { policyFromYaml } from '../testing/helpers.js';

const p = (rel: string, kind: ResolvedPath['kind'] = 'file', access: 'write' | 'delete' = 'write'): PlanTarget =>
  ({ kind: 'path', access, path: { input: rel, abs: `/ws/${rel}`, display: rel, rootIndex: 0, relToRoot: rel, exists: true, kind } });

test('a path grant covers exactly that path: not a namesake deeper down, not a sibling', () => {
  const [g] = proposeGrants('write_file', [p('a.txt')]);
  const rule = grantToRule(g!, 0);
  assert.equal(rule.path!('a.txt'), true);
  assert.equal(rule.path!('sub/a.txt'), false);
  assert.equal(rule.path!('b.txt'), false);
  assert.equal(rule.path!('a.txt/x'), false);
});

test('glob characters in a file name are escaped in its grant', () => {
  const [g] = proposeGrants('write_file', [p('src/[id]/*.ts')]);
  const rule = grantToRule(g!, 0);
  assert.equal(rule.path!('src/[id]/*.ts'), true);
  assert.equal(rule.path!('src/i/x.ts'), false);
});

test('a recursive delete gets the dir and dir/** grants, not one per entry', () => {
  const grants = proposeGrants('delete_file', [p('d', 'dir', 'delete'), p('d/e', 'dir', 'delete'), p('d/e/f.txt', 'file', 'delete'), p('d/g.txt', 'file', 'delete')]);
  assert.deepEqual(grants.map((g) => g.path), ['d', 'd/**']);
  const rules = grants.map(grantToRule);
  assert.ok(rules.some((r) => r.path!('d/e/f.txt')));
  assert.ok(!rules.some((r) => r.path!('dd/x')));
});

test('a plain directory target (no entries under it in the call) gets no /** grant', () => {
  assert.deepEqual(proposeGrants('list_dir', [p('src', 'dir')]).map((g) => g.path), ['src']);
});

test('the replay rule is YAML naming the tool and path', () => {
  assert.equal(grantsAsYaml(proposeGrants('edit_file', [p('src/a.ts')])), '- tool: edit_file\n  path: "src/a.ts"\n  decision: allow');
});

test('a replay rule for a top-level file is anchored to the root', () => {
  const yaml = grantsAsYaml([{ tool: 'write_file', path: 'a.txt', granted_at: '' }]);
  assert.match(yaml, /path: "\/a\.txt"/);
  const rule = policyFromYaml(`rules:\n${yaml.replace(/^/gm, '  ')}\n`).rules[0]!;
  assert.equal(rule.path!('a.txt'), true);
  assert.equal(rule.path!('sub/a.txt'), false);
});

const target = (abs: string, access = 'write') => ({ access, path: { abs } });

test('a grant for a quoted name does not cover the name without quotes', () => {
  const [g] = proposeGrants('write_file', [p('"run.sh')]);
  const rule = grantToRule(g!, 0);
  assert.equal(rule.pathTarget!(target('/ws/"run.sh')), true);
  assert.equal(rule.pathTarget!(target('/ws/run.sh')), false);
  assert.equal(rule.path!('run.sh'), false);
});

test('a grant in one root does not cover the same name in another root', () => {
  const t: PlanTarget = { kind: 'path', access: 'write', path: { input: '/wsB/a.txt', abs: '/wsB/a.txt', display: '/wsB/a.txt', rootIndex: 1, relToRoot: 'a.txt', exists: true, kind: 'file' } };
  const rule = grantToRule(proposeGrants('write_file', [t])[0]!, 0);
  assert.equal(rule.pathTarget!(target('/wsB/a.txt')), true);
  assert.equal(rule.pathTarget!(target('/wsA/a.txt')), false);
});

test('a grant to change a file does not cover deleting it', () => {
  const rule = grantToRule(proposeGrants('apply_patch', [p('src/a.ts')])[0]!, 0);
  assert.equal(rule.pathTarget!(target('/ws/src/a.ts', 'write')), true);
  assert.equal(rule.pathTarget!(target('/ws/src/a.ts', 'delete')), false);
});

test('a recursive grant covers what is under the folder, not a sibling with the same prefix', () => {
  const grants = proposeGrants('delete_file', [p('d', 'dir', 'delete'), p('d/x', 'file', 'delete')]);
  const rules = grants.map(grantToRule);
  assert.ok(rules.some((r) => r.pathTarget!(target('/ws/d/x/y', 'delete'))));
  assert.ok(!rules.some((r) => r.pathTarget!(target('/ws/dd/x', 'delete'))));
});

test('commandPrefix: a session grant is the narrowest rule — the whole literal command', async () => {
  const { commandPrefix } = await import('./grants.js');
  const w = (...xs: Array<string | [string]>) => xs.map((x) => (typeof x === 'string' ? { text: x, literal: true } : { text: x[0], literal: false }));
  const rows: Array<[string, ReturnType<typeof w>, string[]]> = [
    ['node --version grants only node --version', w('node', '--version'), ['node', '--version']],
    ['git --version grants only git --version', w('git', '--version'), ['git', '--version']],
    ['git status grants git status', w('git', 'status'), ['git', 'status']],
    ['git push origin main is not git push', w('git', 'push', 'origin', 'main'), ['git', 'push', 'origin', 'main']],
    ['python script.py keeps the script and its args', w('python3', 'tools/gen.py', '--out', 'x'), ['python3', 'tools/gen.py', '--out', 'x']],
    ['rm -rf build is not every rm', w('rm', '-rf', 'build'), ['rm', '-rf', 'build']],
    ['npm run test -- --watch grants npm run test', w('npm', 'run', 'test', '--', '--watch=false'), ['npm', 'run', 'test']],
    ['pnpm run lint', w('pnpm', 'run', 'lint'), ['pnpm', 'run', 'lint']],
    ['npm run with an option first is literal', w('npm', 'run', '--silent', 'x'), ['npm', 'run', '--silent', 'x']],
    ['assignments stay', w('CI=1', 'npm', 'run', 'test'), ['CI=1', 'npm', 'run', 'test']],
    ['a non-literal word stays as written (matches nothing later)', w('node', ['$X']), ['node', '$X']],
  ];
  for (const [name, words, want] of rows) assert.deepEqual(commandPrefix(words), want, name);
});

test('a grant for node --version does not cover node -e, node script.js or node alone', async () => {
  const { matchesAnyCommand } = await import('../policy/match-command.js');
  const [g] = proposeGrants('run_command', [{ kind: 'command', words: [{ text: 'node', literal: true }, { text: '--version', literal: true }], text: 'node --version' }]);
  const rule = grantToRule(g!, 0);
  const lit = (s: string) => s.split(' ').map((text) => ({ text, literal: true }));
  assert.equal(matchesAnyCommand(rule.command!, lit('node --version')), true);
  for (const other of ['node -e 1', 'node x.js', 'node', 'node --versions']) assert.equal(matchesAnyCommand(rule.command!, lit(other)), false, other);
});

test('proposeGrants: a hard ask (a write or link to a path known only when it runs) gets no grant; the rest of the call still does', () => {
  const hard: PlanTarget = { kind: 'command', words: [{ text: '> writes $f (a path known only when it runs)', literal: false }], text: 'x', ask_reason: 'a write to a path known only when it runs' };
  const plain: PlanTarget = { kind: 'command', words: [{ text: 'make', literal: true }, { text: 'test', literal: true }], text: 'make test' };
  const grants = proposeGrants('run_command', [hard, plain]);
  assert.deepEqual(grants.map((g) => g.command), [['make', 'test']]);
  assert.deepEqual(proposeGrants('run_command', [hard]), []);
});
