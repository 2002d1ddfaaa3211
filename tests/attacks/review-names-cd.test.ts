// Review (helper-44): array subscripts bash evaluates as arithmetic (`test -v 'b[_]'` runs the
// `$(…)` held in `$_`), folders a command or a background shell is in that the analysis did not
// follow (`cd -`, CDPATH, a cd chain, process_write after `cd ..`), `exec 0<file` in a shell's
// input, literal operands of programs toolgate does not know, deny rules written for a program
// met with `X=1`, `/bin/…` or git's global options, compgen / jobs -x, and launchers.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';

const SECRET = 'TOPSECRET_R44';
const allow = (names: string[]) => `  - tool: run_command\n    command: [${names.map((n) => JSON.stringify(n)).join(', ')}]\n    decision: allow\n`;
const DENY_PRIV = '  - { tool: "*", path: "priv/**", decision: deny }\n';
const ALLOWLIST = policyFromYaml(`mode: ci\ndefaults: ask\nsandbox: { backend: none }\ncommands: { prefer_tools: false }\nrules:\n${allow(['echo', 'test', 'printf', 'read', 'unset', 'cd', 'base64', 'cat', 'ls', 'mapfile', 'wait', 'getopts', 'declare', 'local', 'export', 'let', 'shopt', 'set'])}${DENY_PRIV}`);
const PATHDENY = policyFromYaml(`mode: ci\nsandbox: { backend: none }\ncommands: { prefer_tools: false }\nrules:\n${DENY_PRIV}  - { tool: "*", decision: allow }\n`);

function workspace() {
  const { dir, cleanup } = tempDir('tg-r44-');
  mkdirSync(path.join(dir, 'priv/inner'), { recursive: true });
  mkdirSync(path.join(dir, 'a/b'), { recursive: true });
  writeFileSync(path.join(dir, 'priv/secret.txt'), `${SECRET}\n`);
  writeFileSync(path.join(dir, 'priv/inner/key.txt'), `${SECRET}\n`);
  writeFileSync(path.join(dir, 's.sh'), 'base64 priv/secret.txt\ntouch P\n');
  return { dir, cleanup };
}

const b64 = Buffer.from(`${SECRET}\n`).toString('base64');
const leaked = (r: { data?: unknown; error?: { message: string } | null }) => {
  const s = JSON.stringify(r.data ?? '') + (r.error?.message ?? '');
  return s.includes(SECRET) || s.includes(b64.slice(0, 12));
};

async function attempts(policy: ReturnType<typeof policyFromYaml>, lines: string[], controls: { touch?: boolean; priv?: boolean } = { touch: true, priv: true }, setup?: (dir: string) => void): Promise<string[]> {
  process.env.TOOLGATE_STARTER = 'off';
  const { dir, cleanup } = workspace();
  setup?.(dir);
  const h = new Harness([dir], { policy });
  const bad: string[] = [];
  try {
    if (controls.touch) assert.equal((await h.call('run_command', { command: 'touch P' })).ok, false, 'control: touch is not allowed');
    if (controls.priv) assert.equal((await h.call('run_command', { command: 'base64 priv/secret.txt' })).ok, false, 'control: priv is denied');
    if (!controls.touch) rmSync(path.join(dir, 'P'), { force: true });
    for (const command of lines) {
      rmSync(path.join(dir, 'P'), { force: true });
      const r = await h.call('run_command', { command });
      if (existsSync(path.join(dir, 'P')) || leaked(r)) bad.push(command);
    }
  } finally { await h.session.dispose(); h.close(); cleanup(); delete process.env.TOOLGATE_STARTER; }
  return bad;
}

test('subscripts bash evaluates as arithmetic do not run code held in a variable ($_, BASH_REMATCH)', async () => {
  const bad = await attempts(ALLOWLIST, [
    "echo 'a[$(touch P)]' >/dev/null; test -v 'b[_]'",
    "echo 'a[$(touch P)]' >/dev/null; printf -v 'b[_]' x",
    "echo 'a[$(touch P)]' >/dev/null; unset 'b[_]'",
    "echo 'a[$(touch P)]' >/dev/null; read 'b[_]' <<< x",
    "echo 'a[$(touch P)]' >/dev/null; mapfile -t 'b[_]' <<< x",
    "echo 'a[$(touch P)]' >/dev/null; declare 'b[_]=1'",
    "echo 'a[$(touch P)]' >/dev/null; export 'b[_]=1'",
    "echo 'a[$(touch P)]' >/dev/null; b[_]=1",
    "echo 'a[$(touch P)]' >/dev/null; b=([_]=1)",
    "echo 'a[$(touch P)]' >/dev/null; let _",
    "echo 'a[$(touch P)]' >/dev/null; declare -i n; n=_",
    "echo 'a[$(touch P)]' >/dev/null; getopts a 'b[_]'",
    "[[ $'a[\\x24(touch P)]' =~ .+ ]]; test -v 'b[BASH_REMATCH]'",
    "x='a[$(touch P)]'; unset \"$x\"",
  ]);
  assert.deepEqual(bad, []);
});

test('a cd the analysis cannot follow does not reach a denied folder (cd -, CDPATH, cdable_vars, chains)', async () => {
  const bad = await attempts(PATHDENY, [
    'for OLDPWD in priv; do cd - >/dev/null; base64 secret.txt; done',
    'OLDPWD=priv cd - >/dev/null && base64 secret.txt',
    'for CDPATH in priv; do cd inner >/dev/null; base64 key.txt; done',
    'CDPATH=priv cd inner >/dev/null && base64 key.txt',
    'shopt -s cdable_vars; d=priv; cd d && base64 secret.txt',
    'cd a; cd b; cd ../../priv; base64 secret.txt',
  ], { priv: true });
  assert.deepEqual(bad, []);
});

test('without a sandbox, literal operands of programs toolgate does not know are judged by the path rules', async () => {
  const bad = await attempts(PATHDENY, [
    'rev priv/secret.txt | rev',
    'iconv -f utf-8 priv/secret.txt',
    'git diff --no-index priv/secret.txt /dev/null',
    'tac --separator=x priv/secret.txt',
  ], { priv: true });
  assert.deepEqual(bad, []);
});

test('deny rules hold for the program behind X=1, /bin/…, env and git global options', async () => {
  process.env.TOOLGATE_STARTER = 'off';
  const { dir, cleanup } = workspace();
  const policy = policyFromYaml('mode: ci\nsandbox: { backend: none }\ncommands: { prefer_tools: false }\nrules:\n  - { tool: run_command, command: ["touch"], decision: deny }\n  - { tool: run_command, command: ["git reset --hard", "git push"], decision: deny }\n  - { tool: "*", decision: allow }\n');
  const h = new Harness([dir], { policy });
  try {
    for (const command of ['FOO=1 touch P', 'X= touch P', 'env FOO=1 touch P', '/usr/bin/touch P', 'git -C . reset --hard', 'git --no-pager push', 'git -c x.y=1 push origin']) {
      const r = await h.call('run_command', { command });
      assert.equal(r.error?.code, 'ToolNotAllowed', `${command}: ${JSON.stringify(r.data ?? r.error)}`);
      assert.equal(existsSync(path.join(dir, 'P')), false, command);
    }
    // Controls: other programs and subcommands are not caught.
    assert.equal((await h.call('run_command', { command: 'FOO=1 echo hi' })).ok, true);
    assert.equal((await h.call('run_command', { command: 'git --version' })).ok, true);
  } finally { await h.session.dispose(); h.close(); cleanup(); delete process.env.TOOLGATE_STARTER; }
});

test('an allow rule is not widened by the same normalisation (X=1 and git -c stay outside "git status")', async () => {
  process.env.TOOLGATE_STARTER = 'off';
  const { dir, cleanup } = workspace();
  const h = new Harness([dir], { policy: policyFromYaml(`mode: ci\ndefaults: ask\nsandbox: { backend: none }\ncommands: { prefer_tools: false }\nrules:\n${allow(['git status'])}`) });
  try {
    for (const command of ['GIT_PAGER=x git status', 'git -c core.fsmonitor=x status', '/tmp/git status']) {
      assert.notEqual((await h.call('run_command', { command })).ok, true, command);
    }
  } finally { await h.session.dispose(); h.close(); cleanup(); delete process.env.TOOLGATE_STARTER; }
});

test('compgen, jobs -x and launchers are refused under a deny-list', async () => {
  const policy = policyFromYaml('mode: ci\nsandbox: { backend: none }\ncommands: { prefer_tools: false }\nrules:\n  - { tool: run_command, command: ["touch"], decision: deny }\n  - { tool: "*", decision: allow }\n');
  const bad = await attempts(policy, [
    "compgen -C 'touch P' x",
    "compgen -W '$(touch P)' x",
    'jobs -x touch P',
    'taskset 1 touch P', 'flock f touch P', 'setpriv touch P', 'prlimit touch P', 'chrt -o 0 touch P',
    'fakeroot touch P', 'dbus-run-session touch P', 'strace -o /dev/null touch P',
  ], { touch: true });
  assert.deepEqual(bad, []);
});

test('process_write judges paths in every folder earlier input may have left the shell in', async (t) => {
  process.env.TOOLGATE_STARTER = 'off';
  const { dir, cleanup } = workspace();
  const h = new Harness([dir], { policy: PATHDENY });
  let id = '';
  t.after(async () => { if (id) await h.call('process_kill', { id }); await h.session.dispose(); h.close(); cleanup(); delete process.env.TOOLGATE_STARTER; });
  id = ((await h.call('run_command', { command: 'bash', background: true, cwd: 'a' })).data as { id: string }).id;
  assert.equal((await h.call('process_write', { id, input: 'cd ..\n' })).ok, true);
  const r = await h.call('process_write', { id, input: 'base64 priv/secret.txt\n' });
  assert.equal(r.error?.code, 'ToolNotAllowed', JSON.stringify(r.data ?? r.error));
  // A cd the analysis cannot follow leaves every later relative read refused while rules deny paths.
  assert.equal((await h.call('process_write', { id, input: 'cd - >/dev/null\n' })).ok, true);
  assert.equal((await h.call('process_write', { id, input: 'base64 s.sh\n' })).error?.code, 'ToolNotAllowed');
  await new Promise((r2) => setTimeout(r2, 300));
  const out = await h.call('process_output', { id });
  assert.ok(!leaked(out), JSON.stringify(out.data));
});

test('process_write refuses exec redirecting the shell\'s own input (it would run a file unjudged)', async (t) => {
  process.env.TOOLGATE_STARTER = 'off';
  const { dir, cleanup } = workspace();
  const h = new Harness([dir], { policy: PATHDENY });
  let id = '';
  t.after(async () => { if (id) await h.call('process_kill', { id }); await h.session.dispose(); h.close(); cleanup(); delete process.env.TOOLGATE_STARTER; });
  id = ((await h.call('run_command', { command: 'bash', background: true })).data as { id: string }).id;
  for (const input of ['exec 0<s.sh\n', 'exec <s.sh\n', 'exec 3<s.sh 0<&3\n', 'exec < s.sh 2>/dev/null\n']) {
    assert.equal((await h.call('process_write', { id, input })).error?.code, 'ToolNotAllowed', input);
  }
  assert.equal((await h.call('process_write', { id, input: 'exec 2>/dev/null\n' })).ok, true, 'control: a redirection of stderr');
  await new Promise((r2) => setTimeout(r2, 300));
  assert.equal(existsSync(path.join(dir, 'P')), false);
  assert.ok(!leaked(await h.call('process_output', { id })));
});

// Second review (helper-46) of the fixes above.
test('bash\'s integer variables, quoted compound values, options known only at run time and {a[_]}> run no code', async () => {
  const bad = await attempts(ALLOWLIST, [
    "read RANDOM <<< 'a[$(touch P)]'",
    "echo 'a[$(touch P)]' | { read OPTIND; }",
    "mapfile -t OPTIND <<< 'x[$(touch P)]'",
    "printf -v RANDOM %b 'a[\\x24(touch P)]'",
    "echo 'a[$(touch P)]' >/dev/null; declare -a 'a=($[_])'",
    "echo 'a[$(touch P)]' >/dev/null; declare -a 'a=(${b[_]})'",
    "read o <<< -v; echo 'a[$(touch P)]' >/dev/null; test $o 'b[_]'",
    "echo 'a[$(touch P)]' >/dev/null; test {-v,'b[_]'}",
    "echo 'a[$(touch P)]' >/dev/null; printf {-v,b\\[_\\]} %s x",
    "read o <<< -p; true & echo 'a[$(touch P)]' >/dev/null; wait -n $o 'b[_]'",
    "echo 'a[$(touch P)]' >/dev/null; echo {a[_]}>/dev/null",
  ]);
  assert.deepEqual(bad, []);
});

test('without a sandbox: words a wrapper takes, operands after an unknown cd, links made in the same line and program paths are judged', async () => {
  const bad = await attempts(PATHDENY, [
    'env -C priv cat secret.txt', 'env --chdir=priv cat secret.txt', 'env -Cpriv cat secret.txt',
    'xargs -a priv/secret.txt echo', 'xargs --arg-file=priv/secret.txt echo',
    'read OLDPWD <<< priv; cd - >/dev/null; iconv -f utf-8 -t utf-8 secret.txt',
    'mkdir -p sub && ln -s ../priv sub/lnk && rev sub/lnk/secret.txt | rev',
    './priv/run.sh', 'priv/run.sh', 'echo x | priv/run.sh',
  ], { priv: true }, (dir) => writeFileSync(path.join(dir, 'priv/run.sh'), '#!/bin/sh\ncat "$(dirname "$0")/secret.txt"\n', { mode: 0o755 }));
  assert.deepEqual(bad, []);
});

test('without a sandbox: a link made by an earlier call is followed when an operand is judged', async () => {
  process.env.TOOLGATE_STARTER = 'off';
  const { dir, cleanup } = workspace();
  const h = new Harness([dir], { policy: PATHDENY });
  try {
    mkdirSync(path.join(dir, 'sub'));
    const { symlinkSync } = await import('node:fs');
    symlinkSync('../priv', path.join(dir, 'sub/lnk'));
    const r = await h.call('run_command', { command: 'iconv -f utf-8 -t utf-8 sub/lnk/secret.txt' });
    assert.equal(r.error?.code, 'ToolNotAllowed', JSON.stringify(r.data ?? r.error));
    assert.equal((await h.call('run_command', { command: 'iconv -f utf-8 -t utf-8 s.sh' })).ok, true, 'control');
  } finally { await h.session.dispose(); h.close(); cleanup(); delete process.env.TOOLGATE_STARTER; }
});

test('git: a raw object id or --source names no sub-tree the path rules would not see', async () => {
  process.env.TOOLGATE_STARTER = 'off';
  const { dir, cleanup } = workspace();
  const { execFileSync } = await import('node:child_process');
  const git = (...a: string[]) => execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...a], { cwd: dir, encoding: 'utf8' }).trim();
  git('init', '-q'); git('add', '-A'); git('commit', '-qm', 'x');
  const tree = git('rev-parse', 'HEAD:priv');
  const empty = git('hash-object', '-t', 'tree', '/dev/null');
  const h = new Harness([dir], { policy: PATHDENY });
  try {
    for (const command of [`git diff ${empty} ${tree} -- secret.txt`, `git grep -h ${SECRET} ${tree} -- secret.txt`, `git diff ${empty.slice(0, 8)} ${tree.slice(0, 8)}`,
      'git restore --source=HEAD:priv --worktree -- .', 'git restore -sHEAD:priv -- .', `git checkout ${tree} -- .`, 'git show HEAD^{tree}']) {
      const r = await h.call('run_command', { command });
      assert.equal(r.error?.code, 'ToolNotAllowed', `${command}: ${JSON.stringify(r.data ?? r.error)}`);
    }
    assert.equal(existsSync(path.join(dir, 'secret.txt')), false);
    assert.equal((await h.call('run_command', { command: 'git log --oneline -1' })).ok, true, 'control');
  } finally { await h.session.dispose(); h.close(); cleanup(); delete process.env.TOOLGATE_STARTER; }
});

test('under a deny-list, a part that runs code the analysis cannot see into asks instead of running', async () => {
  const policy = policyFromYaml('mode: ci\nsandbox: { backend: none }\ncommands: { prefer_tools: false }\nrules:\n  - { tool: run_command, command: ["touch"], decision: deny }\n  - { tool: "*", decision: allow }\n');
  const bad = await attempts(policy, [
    "sed -n '1e touch P' s.sh",
    "awk 'BEGIN{system(\"touch P\")}'",
    "git -c alias.x='!touch P' x",
    "sed -n $':x\\ra\\nt x\\ra e touch P' s.sh",
  ], { touch: true });
  assert.deepEqual(bad, []);
});

// Third review (helper-47).
test('a word bash splits ($o, "$@") cannot hold -v NAME for test, [ or wait', async () => {
  const bad = await attempts(ALLOWLIST, [
    "set -- -v 'b[_]'; echo 'a[$(touch P)]' >/dev/null; test \"$@\"",
    "set -- -v 'b[_]'; echo 'a[$(touch P)]' >/dev/null; [ \"$@\" ]",
    "o='-v b[_]'; echo 'a[$(touch P)]' >/dev/null; test $o",
    "true & set -- -p 'b[_]'; echo 'a[$(touch P)]' >/dev/null; wait -n \"$@\"",
  ]);
  assert.deepEqual(bad, []);
});

test('{a[_]} before a here-string or a here-document runs no code', async () => {
  const policy = policyFromYaml('mode: ci\nsandbox: { backend: none }\ncommands: { prefer_tools: false }\nrules:\n  - { tool: run_command, command: ["touch"], decision: deny }\n  - { tool: "*", decision: allow }\n');
  const bad = await attempts(policy, [
    "echo 'a[$(touch P)]' >/dev/null; echo {a[_]}<<<x",
    "echo 'a[$(touch P)]' >/dev/null; echo {a[_]}<<END\nx\nEND",
    "make -f /dev/stdin <<< $'x:\\n\\ttouch P'",
  ], { touch: true });
  assert.deepEqual(bad, []);
});

test('without a sandbox: long options with a separate value, values glued to short options, moved links, file: URLs and code parts\' operands are judged', async () => {
  const bad = await attempts(PATHDENY, [
    'env --unset X -C priv cat secret.txt', 'env --unset X --chdir priv cat secret.txt',
    'xargs --max-args 1 -a priv/secret.txt echo', 'xargs --delimiter x -a priv/secret.txt echo', 'xargs --max-procs 1 --arg-file priv/secret.txt echo',
    'cp -tpriv s.sh', 'sort -mopriv/x /dev/null', 'make -fpriv/secret.txt', 'curl -Kpriv/secret.txt',
    'mkdir -p sub/d && ln -s ../priv sub/d/l && mv sub/d/l sub/l && cat sub/l/secret.txt',
    'sed -n -f priv/secret.txt s.sh', "awk -v f=priv/secret.txt 'BEGIN{getline l < f; print l}'",
    'curl -s file:///proc/self/cwd/priv/secret.txt', 'rev /proc/self/cwd/priv/secret.txt | rev',
  ], { priv: true }, (dir) => mkdirSync(path.join(dir, 'sub'), { recursive: true }));
  assert.deepEqual(bad, []);
});

test('git: a raw tree id cannot become a ref that later reads pass as a name (tag, update-ref, fetch)', async () => {
  process.env.TOOLGATE_STARTER = 'off';
  const { dir, cleanup } = workspace();
  const { execFileSync } = await import('node:child_process');
  const git = (...a: string[]) => execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...a], { cwd: dir, encoding: 'utf8' }).trim();
  git('init', '-q'); git('add', '-A'); git('commit', '-qm', 'x');
  const tree = git('rev-parse', 'HEAD:priv').slice(0, 8);
  const h = new Harness([dir], { policy: PATHDENY });
  try {
    for (const command of [`git tag t1 ${tree}`, `git update-ref refs/tags/t2 ${tree}`, `git fetch . ${tree}:refs/heads/x`, `git replace -f HEAD ${tree}`]) {
      const r = await h.call('run_command', { command });
      assert.equal(r.error?.code, 'ToolNotAllowed', `${command}: ${JSON.stringify(r.data ?? r.error)}`);
    }
    assert.equal(git('tag', '-l'), '', 'no tag was made');
  } finally { await h.session.dispose(); h.close(); cleanup(); delete process.env.TOOLGATE_STARTER; }
});

// Fourth review (helper-48).
test('a glob that expands to -v NAME runs no code in test, [ or wait', async () => {
  const bad = await attempts(ALLOWLIST, [
    "echo 'a[$(touch P)]' >/dev/null; test ?v*",
    "echo 'a[$(touch P)]' >/dev/null; [ ?v* ]",
    "echo 'a[$(touch P)]' >/dev/null; true & wait -n ?p*",
  ], { touch: true, priv: true }, (dir) => { for (const f of ['-v', 'xv[_]', '-p', 'xp[_]']) writeFileSync(path.join(dir, f), ''); });
  assert.deepEqual(bad, []);
});

test('make given recipes in the command asks under a deny-list (--eval prefixes, -E in a cluster, stdin makefiles, $(shell), SHELL, MAKEFLAGS)', async () => {
  const policy = policyFromYaml('mode: ci\nsandbox: { backend: none }\ncommands: { prefer_tools: false }\nrules:\n  - { tool: run_command, command: ["touch"], decision: deny }\n  - { tool: "*", decision: allow }\n');
  const bad = await attempts(policy, [
    "make --ev='x:;touch P' x", "make -sE 'x:;touch P' x", "MAKEFLAGS='--eval=x:;touch\\ P' make x",
    "printf 'x:\\n\\ttouch P\\n' | make -sf - x", "make -f //dev/stdin x <<< $'x:\\n\\ttouch P'", "make -f <(printf 'x:\\n\\ttouch P\\n') x",
    "make x 'y:=$(shell touch P)'", 'make x SHELL=/usr/bin/touch .SHELLFLAGS=P', "MAKEFILES=/dev/stdin make x <<< $'y:\\n\\ttouch P\\nx: y'",
  ], { touch: true }, (dir) => writeFileSync(path.join(dir, 'Makefile'), 'x: ; @true\n'));
  assert.deepEqual(bad, []);
});

test('without a sandbox: response files, file: URL globs, path lists read from a file and quoted paths in code are judged', async () => {
  const bad = await attempts(PATHDENY, [
    'cat @priv/secret.txt', "curl -s 'file:///proc/self/cwd/p{riv,x}/secret.txt'", "curl -s 'file:///proc/self/cwd/pri[u-w]/secret.txt'",
    'tar -cf - --files-from=sub/list | tar -xOf -', 'tar -cf - -Tsub/list | tar -xOf -',
    "awk 'BEGIN{while((getline l < \"priv/secret.txt\")>0) print l}'", "python3 -c \"print(open('priv/secret.txt').read())\"",
  ], { priv: true }, (dir) => { mkdirSync(path.join(dir, 'sub'), { recursive: true }); writeFileSync(path.join(dir, 'sub/list'), 'priv/secret.txt\n'); });
  assert.deepEqual(bad, []);
});

test('git: ids from a substitution or stdin, read-tree and update-index do not bring committed denied files out', async () => {
  process.env.TOOLGATE_STARTER = 'off';
  const { dir, cleanup } = workspace();
  const { execFileSync } = await import('node:child_process');
  const git = (...a: string[]) => execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...a], { cwd: dir, encoding: 'utf8' }).trim();
  git('init', '-q'); git('add', '-A'); git('commit', '-qm', 'x');
  mkdirSync(path.join(dir, 'sub'));
  const h = new Harness([dir], { policy: PATHDENY });
  try {
    for (const command of [
      "git tag t $(git ls-tree HEAD | awk '$4==\"priv\"{print $3}') && git tag e $(git hash-object -t tree /dev/null) && git diff e t -- secret.txt",
      "git ls-tree HEAD | awk '$4==\"priv\"{print \"create refs/tags/v \" $3}' | git update-ref --stdin",
      'git read-tree --prefix=sub/y/ HEAD && git checkout -- sub/y && cat sub/y/priv/secret.txt',
      "git ls-tree -r HEAD | sed 's#priv/#sub/q/#' | git update-index --index-info",
    ]) {
      const r = await h.call('run_command', { command });
      assert.equal(r.error?.code, 'ToolNotAllowed', `${command}: ${JSON.stringify(r.data ?? r.error)}`);
    }
    assert.equal(git('tag', '-l'), '');
    assert.equal(existsSync(path.join(dir, 'sub/y')), false);
  } finally { await h.session.dispose(); h.close(); cleanup(); delete process.env.TOOLGATE_STARTER; }
});

// Fifth review (helper-49).
test('make given values in the command asks (X!=cmd, SHELL =, CC=…, -j then --eval, dev/stdin under -C, MAKEFLAGS exported)', async () => {
  const policy = policyFromYaml('mode: ci\nsandbox: { backend: none }\ncommands: { prefer_tools: false }\nrules:\n  - { tool: run_command, command: ["touch"], decision: deny }\n  - { tool: "*", decision: allow }\n');
  const bad = await attempts(policy, [
    "make 'X!=touch P' nothing", "make 'SHELL =/usr/bin/touch' '.SHELLFLAGS =P' foo", "make CC='touch P;' foo",
    "make -j '--eval=x:;touch P' x", "make -C / -f proc/self/cwd/m x", "read -r MAKEFLAGS <<< '--eval=x:;touch\\ P'; export MAKEFLAGS; make x",
  ], { touch: true }, (dir) => { writeFileSync(path.join(dir, 'foo.c'), 'int main(){return 0;}\n'); writeFileSync(path.join(dir, 'm'), 'x:\n\ttouch P\n'); });
  assert.deepEqual(bad, []);
});

test('getopts with a brace word evaluates no name it did not show', async () => {
  const bad = await attempts(ALLOWLIST, ["set -- -a; read a <<< 'b[$(touch P)]'; getopts {a,OPTIND}"]);
  assert.deepEqual(bad, []);
});

test('without a sandbox: git index paths and REV:path in option values, git apply, old-style tar T, zip -q@, curl -K and x@file are judged', async () => {
  const bad = await attempts(PATHDENY, [
    'git add -A >/dev/null 2>&1; git tag t :0:priv/secret.txt && git for-each-ref --format="%(raw)" refs/tags/t',
    'git config --blob=HEAD:priv/secret.txt --list',
    "git apply --cached <<'X'\ndiff --git a/priv/secret.txt b/pub.txt\nsimilarity index 100%\ncopy from priv/secret.txt\ncopy to pub.txt\nX\ngit restore pub.txt && cat pub.txt",
    'tar cT - <<< priv/secret.txt | tar xO', 'zip -0q@ - <<< priv/secret.txt | cat -v',
    "curl -s -K - <<< 'url = \"file:///proc/self/cwd/pri%76/secret.txt\"'", 'curl -s --data-urlencode x@priv/secret.txt file:///dev/null',
  ], { priv: true }, (dir) => {
    execFileSync('git', ['init', '-q'], { cwd: dir }); execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', 'add', '-A'], { cwd: dir });
    execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', 'commit', '-qm', 'x'], { cwd: dir });
  });
  assert.deepEqual(bad, []);
});
