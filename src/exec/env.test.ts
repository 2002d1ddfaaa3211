import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Harness, policyFromYaml, tempDir } from '../testing/helpers.js';
import { glibcRealOrPlanned } from '../testing/path-oracles.js';
import { buildEnv, commandHome, realOrPlanned, safePath } from './env.js';

test('safePath drops empty, relative and in-workspace entries', () => {
  const { dir, cleanup } = tempDir('tg-env-');
  mkdirSync(`${dir}/bin`);
  assert.equal(safePath(`:.:bin:${dir}/bin:${dir}:/usr/bin:/bin:/usr/bin`, [dir]), '/usr/bin:/bin');
  assert.equal(safePath(`${dir}/bin`, [dir]), '/usr/local/bin:/usr/bin:/bin');
  cleanup();
});

test('buildEnv pins PATH and forces the git hardening settings', () => {
  const env = buildEnv({ PATH: '.:/usr/bin', GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.fsmonitor', GIT_CONFIG_VALUE_0: 'x', MY_SECRET_TOKEN: 's' }, { allow: ['GIT_*'], set: { PATH: '/ws/bin:/bin' } }, ['/ws']);
  assert.equal(env.PATH, '/bin');
  assert.equal(env.GIT_CONFIG_COUNT, '3');
  assert.deepEqual([env.GIT_CONFIG_KEY_0, env.GIT_CONFIG_VALUE_0], ['core.fsmonitor', 'false']);
  assert.deepEqual([env.GIT_CONFIG_KEY_1, env.GIT_CONFIG_VALUE_1], ['core.hooksPath', '/dev/null']);
  assert.deepEqual([env.GIT_CONFIG_KEY_2, env.GIT_CONFIG_VALUE_2], ['safe.bareRepository', 'explicit']);
  assert.equal(env.MY_SECRET_TOKEN, undefined);
});

test('git status / git log work in a normal repository and ignore a planted fsmonitor', async () => {
  const { dir, cleanup } = tempDir('tg-env-git-');
  const git = (...a: string[]) => execFileSync('git', ['-C', dir, ...a], { stdio: 'pipe' });
  git('init', '-q');
  writeFileSync(`${dir}/a.txt`, 'a\n');
  git('add', '.');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'first');
  // As if a command had managed to write the repository config.
  git('config', 'core.fsmonitor', `touch ${dir}/canary; false`);
  writeFileSync(`${dir}/a.txt`, 'changed\n');
  const h = new Harness([dir], { policy: policyFromYaml('mode: ci\nsandbox: { backend: none }\nrules:\n  - tool: run_command\n    command: ["git status", "git log"]\n    decision: allow\n') });
  const st = await h.call('run_command', { command: 'git status --porcelain' });
  assert.equal(st.ok, true, JSON.stringify(st.error));
  assert.match(String((st.data as { output: string }).output), /M a\.txt/);
  const log = await h.call('run_command', { command: 'git log --oneline' });
  assert.equal(log.ok, true, JSON.stringify(log.error));
  assert.match(String((log.data as { output: string }).output), /first/);
  assert.equal(existsSync(`${dir}/canary`), false);
  h.close(); cleanup();
});

test('commandHome is the HOME buildEnv gives a command (env.set wins, then the server\'s HOME)', () => {
  const cases: Array<[NodeJS.ProcessEnv, Record<string, string>]> = [
    [{ HOME: '/home/a', PATH: '/bin' }, {}],
    [{ HOME: '/home/a' }, { HOME: '/srv/b' }],
    [{ PATH: '/bin' }, { HOME: '/srv/c' }],
  ];
  for (const [source, set] of cases) assert.equal(commandHome({ set }, source), buildEnv(source, { allow: [], set }).HOME);
});

test('realOrPlanned answers as the throwing version it replaced, for missing entries, dangling links, chains and files; a loop ends as itself', (t) => {
  const { dir, cleanup } = tempDir('tg-env-rop-');
  t.after(cleanup);
  // The version before: every miss found by an exception (realpath, then readlink).
  const reference = glibcRealOrPlanned;
  mkdirSync(`${dir}/real/deep`, { recursive: true });
  writeFileSync(`${dir}/file`, 'x');
  const links: Array<[string, string]> = [
    ['toreal', 'real'], ['abs', `${dir}/real/deep`], ['dangling', 'nothere/sub'], ['chain1', 'chain2'], ['chain2', 'dangling'],
    ['loop1', 'loop2'], ['loop2', 'loop1'], ['self', 'self'], ['tofile', 'file'], ['up', '..'], ['real/deep/back', '../../dangling'],
  ];
  for (const [name, target] of links) symlinkSync(target, `${dir}/${name}`);
  const names = ['real', 'real/deep', 'file', 'missing', ...links.map(([n]) => n)];
  // safePath hands it resolved absolute paths (no `..`: path.resolve took them out).
  for (const name of names) for (const tail of ['', '/bin', '/a/b', '/real/deep']) {
    const p = path.resolve(dir, name + tail);
    // A loop (ELOOP: nothing runs through it) ended wherever the old depth bound cut it; now as the entry itself.
    if (/loop|self/.test(name)) assert.equal(realOrPlanned(p), p, p);
    else assert.equal(realOrPlanned(p), reference(p), p);
  }
  // A missing entry under a link that dangles into a folder made later resolves where it will be.
  assert.equal(realOrPlanned(`${dir}/chain1/bin`), `${realpathSync(dir)}/nothere/sub/bin`);
});
