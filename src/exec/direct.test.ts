import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { tempDir } from '../testing/helpers.js';
import { directExec, findInPath, plainWords } from './direct.js';

test('plain lines: one program and words with nothing for bash to expand', () => {
  assert.deepEqual(plainWords('echo hi'), ['echo', 'hi']);
  assert.deepEqual(plainWords('  git   status\t--short '), ['git', 'status', '--short']);
  assert.deepEqual(plainWords('ls -la src/a.ts a,b x@y:z 50% +x'), ['ls', '-la', 'src/a.ts', 'a,b', 'x@y:z', '50%', '+x']);
  assert.deepEqual(plainWords('echo -n -e -E -- x'), ['echo', '-n', '-e', '-E', '--', 'x']);
});

test('anything bash would expand, split, redirect or run itself is not plain', () => {
  const bash = [
    '', '   ', 'echo $HOME', 'echo ${x}', 'echo `id`', 'echo $(id)', "echo 'a  b'", 'echo "a"', 'echo a\\ b', 'echo *.ts', 'echo a?', 'echo [ab]',
    'echo {a,b}', 'echo ~', 'echo ~/x', 'x=1 env', 'env x=1', 'echo a;id', 'echo a; id', 'echo a && id', 'echo a || id', 'echo a | cat', 'echo a > f', 'echo a < f',
    'echo a >> f', 'echo a &', 'echo a\nid', 'echo a\rid', 'echo # c', 'echo !x', '(echo a)', '{ echo a; }', 'echo a=b', 'echo é',
    './run.sh', '/bin/ls', 'bin/ls', '../x', '~/bin/x', 'cd /', 'export A=1', 'exec ls', 'eval ls', 'source x', '. x', 'time ls', 'command ls',
    'kill 1', 'printf x', 'pwd', 'test -f x', '[ -f x ]', 'true', 'false', 'read x', 'type ls', 'hash ls', 'builtin echo', 'enable -n echo', 'coproc ls',
    'if', 'echo --help', 'echo x --version',
  ];
  for (const line of bash) assert.equal(plainWords(line), null, JSON.stringify(line));
});

test('findInPath: the first executable regular file, as bash searches; relative entries and folders skipped', (t) => {
  const d = tempDir('tg-direct-');
  t.after(d.cleanup);
  const [a, b, c] = ['a', 'b', 'c'].map((n) => path.join(d.dir, n));
  for (const x of [a, b, c]) mkdirSync(x!);
  writeFileSync(path.join(a!, 'prog'), '#!/bin/sh\n'); // not executable
  mkdirSync(path.join(b!, 'prog')); // a folder
  writeFileSync(path.join(c!, 'real'), '#!/bin/sh\n');
  chmodSync(path.join(c!, 'real'), 0o755);
  symlinkSync(path.join(c!, 'real'), path.join(c!, 'prog'));
  assert.equal(findInPath('prog', `rel:${a}:${b}/:${c}`), path.join(c!, 'prog'));
  assert.equal(findInPath('prog', `${a}:${b}`), null);
  assert.equal(findInPath('prog', 'c'), null);
});

test('directExec: bash runs the line when its environment changes how bash starts or what it exports', () => {
  const env = { PATH: '/usr/bin:/bin', HOME: '/tmp' };
  const d = directExec('echo hi', env, '/tmp');
  assert.ok(d, 'plain echo runs directly');
  assert.match(d.argv[0]!, /^\/(usr\/)?bin\/echo$/);
  assert.deepEqual(d.argv.slice(1), ['hi']);
  assert.equal(d.argv0, 'echo');
  assert.deepEqual({ PWD: d.env.PWD, SHLVL: d.env.SHLVL, _: d.env._ }, { PWD: '/tmp', SHLVL: '0', _: d.argv[0] });
  for (const k of ['BASH_ENV', 'ENV', 'SHELLOPTS', 'BASHOPTS', 'POSIXLY_CORRECT', 'BASH_FUNC_ls%%', 'CDPATH', 'PWD', 'OLDPWD', 'SHLVL', '_']) {
    assert.equal(directExec('ls', { ...env, [k]: 'x' }, '/tmp'), null, k);
  }
  assert.equal(directExec('no-such-program-tg', env, '/tmp'), null, 'not found: bash says so in its words');
});

test('directExec: echo runs coreutils\' program only when PATH finds it there first (bash runs its builtin, not an earlier echo)', (t) => {
  const d = tempDir('tg-direct-echo-');
  t.after(d.cleanup);
  writeFileSync(path.join(d.dir, 'echo'), '#!/bin/sh\necho FAKE\n');
  chmodSync(path.join(d.dir, 'echo'), 0o755);
  assert.equal(directExec('echo hi', { PATH: `${d.dir}:/usr/bin:/bin` }, '/tmp'), null);
  // Any other program is what bash's own PATH search finds: the earlier one.
  writeFileSync(path.join(d.dir, 'tgprog'), '#!/bin/sh\necho mine\n');
  chmodSync(path.join(d.dir, 'tgprog'), 0o755);
  assert.equal(directExec('tgprog a', { PATH: `${d.dir}:/usr/bin` }, '/tmp')?.argv[0], path.join(d.dir, 'tgprog'));
});
