// Review round 6 (helper-50), code findings C1–C5: make reading its makefile from its input through a
// -C or cd into /dev or /proc; getopts storing into OPTIND past `--`; values read from input or
// written literally reaching git as code through the environment (GIT_EXTERNAL_DIFF after a bare
// `export NAME`, `declare -x`, `set -a`, GIT_CONFIG_COUNT/KEY/VALUE outranking toolgate's hardening);
// tar x writing (and hard-linking) paths named inside the archive; split --filter, sdiff/diff3
// --diff-program, install --strip-program and rsync -e running programs past a deny-list.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { CommandWord } from '../../src/core/types.js';
import { fileEffects, runsCodeFromText } from '../../src/shell/effects.js';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';

const SECRET = 'TOPSECRET_R6C';
const has = (prog: string, arg = '--version') => spawnSync(prog, [arg]).status === 0;
const allow = (names: string[]) => `  - tool: run_command\n    command: [${names.map((n) => JSON.stringify(n)).join(', ')}]\n    decision: allow\n`;
const DENY_PRIV = '  - { tool: "*", path: "priv/**", decision: deny }\n';
const NAMES = ['echo', 'printf', 'read', 'set', 'export', 'declare', 'getopts', 'head', 'cat', 'make', 'tar', 'cd', 'unset', 'let', 'env', 'git diff', 'git status', 'git log'];
const HEAD = 'mode: ci\ndefaults: ask\nsandbox: { backend: none }\ncommands: { prefer_tools: false }\nrules:\n';
/** An allow-list without path rules (the review's allowmake-np), and the same with priv/ denied. */
const ALLOWLIST = policyFromYaml(`${HEAD}${allow(NAMES)}`);
const ALLOWLIST_PRIV = policyFromYaml(`${HEAD}${allow(NAMES)}${DENY_PRIV}`);
const PATHDENY = policyFromYaml(`mode: ci\nsandbox: { backend: none }\ncommands: { prefer_tools: false }\nrules:\n${DENY_PRIV}  - { tool: "*", decision: allow }\n`);
const DENYONLY = policyFromYaml('mode: ci\nsandbox: { backend: none }\ncommands: { prefer_tools: false }\nrules:\n  - { tool: run_command, command: ["rm", "touch", "bash", "sh"], decision: deny }\n  - { tool: "*", decision: allow }\n');

const git = (dir: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: dir, stdio: 'pipe' });

function workspace() {
  const { dir, cleanup } = tempDir('tg-r6c-');
  mkdirSync(path.join(dir, 'priv'), { recursive: true });
  mkdirSync(path.join(dir, 'sub'), { recursive: true });
  writeFileSync(path.join(dir, 'priv/secret.txt'), `${SECRET}\n`);
  writeFileSync(path.join(dir, 'pub.txt'), 'one\ntwo\n');
  writeFileSync(path.join(dir, 'Makefile'), 'ok:\n\t@echo MAKE-OK\n');
  // A program that leaves a mark: what an option names to run.
  writeFileSync(path.join(dir, 'tp'), `#!/bin/sh\n: > '${dir}/P'\n`);
  chmodSync(path.join(dir, 'tp'), 0o755);
  return { dir, cleanup };
}

const leaked = (r: { data?: unknown; error?: { message: string } | null }) => (JSON.stringify(r.data ?? '') + (r.error?.message ?? '')).includes(SECRET);

/** Runs each line (`@DIR@` is the workspace) and returns those that ran code (made P) or leaked the secret. */
async function attempts(policy: ReturnType<typeof policyFromYaml>, lines: string[], setup?: (dir: string) => void, controls: string[] = []): Promise<string[]> {
  process.env.TOOLGATE_STARTER = 'off';
  const { dir, cleanup } = workspace();
  setup?.(dir);
  const h = new Harness([dir], { policy });
  const bad: string[] = [];
  try {
    for (const command of controls) {
      const r = await h.call('run_command', { command: command.replaceAll('@DIR@', dir) });
      assert.equal(r.ok, true, `control ${command}: ${JSON.stringify(r.error ?? r.data)}`);
    }
    for (const line of lines) {
      rmSync(path.join(dir, 'P'), { force: true });
      const r = await h.call('run_command', { command: line.replaceAll('@DIR@', dir) });
      if (existsSync(path.join(dir, 'P')) || leaked(r)) bad.push(line);
    }
  } finally { await h.session.dispose(); h.close(); cleanup(); delete process.env.TOOLGATE_STARTER; }
  return bad;
}

test('C1: make does not read its makefile from its input through -C or a cd into /dev or /proc', { skip: !has('make') }, async () => {
  const bad = await attempts(ALLOWLIST, [
    "make -s -C /dev -f stdin x <<< 'x:;touch @DIR@/P'",
    "cd /dev && make -s -f stdin x <<< 'x:;touch @DIR@/P'",
    "make -s -C /dev/fd -f 0 x <<< 'x:;touch @DIR@/P'",
    "make -s -C /proc/self/fd -f 0 x <<< 'x:;touch @DIR@/P'",
    "make -s --directory=/dev -f stdin x <<< 'x:;touch @DIR@/P'",
    "make -s -C/dev --file=stdin x <<< 'x:;touch @DIR@/P'",
    "cd / && make -s -C dev -f stdin x <<< 'x:;touch @DIR@/P'",
  ], undefined, ['make -s ok', 'make -s -f Makefile ok', 'cd sub && make -s -C .. -f Makefile ok']);
  assert.deepEqual(bad, []);
});

test('C2: getopts past `--` does not store into OPTIND or RANDOM (arithmetic on a value read from input)', async () => {
  const bad = await attempts(ALLOWLIST, [
    "set -- -a; read a <<< 'b[$(touch P)]'; getopts -- a OPTIND",
    "set -- -a; read a <<< 'b[$(touch P)]'; getopts -- a RANDOM",
  ], undefined, ['set -- -a; getopts a opt; echo "$opt"', 'set -- -a; getopts -- a opt']);
  assert.deepEqual(bad, []);
});

test('C3: values read from input or written in the line do not reach git as code through the environment', { skip: !has('git') }, async () => {
  const setup = (dir: string) => {
    git(dir, 'init', '-q');
    git(dir, 'add', 'pub.txt');
    git(dir, 'commit', '-qm', 'x');
    writeFileSync(path.join(dir, 'pub.txt'), 'changed\n');
    mkdirSync(path.join(dir, 'cfg/git'), { recursive: true });
    writeFileSync(path.join(dir, 'cfg/git/config'), `[diff]\n\texternal = ${dir}/tp\n`);
  };
  const lines = [
    "read -r GIT_EXTERNAL_DIFF <<< 'touch P'; export GIT_EXTERNAL_DIFF; git diff",
    "read -r GIT_EXTERNAL_DIFF <<< 'touch P'; declare -x GIT_EXTERNAL_DIFF; git diff",
    "set -a; read -r GIT_EXTERNAL_DIFF <<< 'touch P'; git diff",
    "set -o allexport; read -r GIT_EXTERNAL_DIFF <<< 'touch P'; git diff",
    "export GIT_EXTERNAL_DIFF='touch P'; git diff",
    "declare -x GIT_EXTERNAL_DIFF='touch P'; git diff",
    "printf -v GIT_EXTERNAL_DIFF 'touch P'; export GIT_EXTERNAL_DIFF; git diff",
    "read -r GIT_CONFIG_COUNT <<< 1; read -r GIT_CONFIG_KEY_0 <<< core.fsmonitor; read -r GIT_CONFIG_VALUE_0 <<< 'touch P; false'; export GIT_CONFIG_COUNT GIT_CONFIG_KEY_0 GIT_CONFIG_VALUE_0; git status --short",
    "export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=diff.external GIT_CONFIG_VALUE_0='touch P'; git diff",
    "env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=diff.external GIT_CONFIG_VALUE_0='touch P' git diff",
    'XDG_CONFIG_HOME=@DIR@/cfg git diff',
    'GIT_CONFIG_GLOBAL=@DIR@/cfg/git/config git diff',
  ];
  assert.deepEqual(await attempts(ALLOWLIST, lines, setup, ['git log --oneline', 'git diff --stat', 'read -r x <<< 1; export x; git status --short']), []);
  // Under a deny-list (defaults allow), a pager or editor that runs nothing else stays allowed.
  assert.deepEqual(await attempts(DENYONLY, lines, setup, ['GIT_PAGER=cat git log --oneline', 'export GIT_PAGER=cat; git log --oneline', 'GIT_EDITOR=true git log -1', 'git --no-pager diff', 'export LANG=C; read -r x <<< 1; export x; git status --short']), []);
});

test('C3: HOME set in the line does not move `~` (or git\'s ~/.gitconfig) into a denied folder', async () => {
  const bad = await attempts(PATHDENY, [
    'HOME=@DIR@/priv; cat ~/secret.txt',
    'read HOME <<< @DIR@/priv; cat ~/secret.txt',
    'export HOME=@DIR@/priv; cat ~/secret.txt',
    'for HOME in @DIR@/priv; do cat ~/secret.txt; done',
  ], undefined, ['cat ~/.profile 2>/dev/null; true', 'cat pub.txt']);
  assert.deepEqual(bad, []);
});

/** An archive whose only member is a hard link `hard` to priv/secret.txt, and one holding a file P. */
function archives(dir: string) {
  const { dir: src, cleanup } = tempDir('tg-r6c-src-');
  try {
    mkdirSync(path.join(src, 'priv'));
    writeFileSync(path.join(src, 'priv/secret.txt'), 'x\n');
    execFileSync('ln', [path.join(src, 'priv/secret.txt'), path.join(src, 'hard')]);
    execFileSync('tar', ['cf', path.join(dir, 'link.tar'), 'priv/secret.txt', 'hard'], { cwd: src });
    execFileSync('tar', ['--delete', '-f', path.join(dir, 'link.tar'), 'priv/secret.txt']);
    writeFileSync(path.join(src, 'P'), '');
    execFileSync('tar', ['cf', path.join(dir, 'p.tar'), 'P'], { cwd: src });
  } finally { cleanup(); }
}

test('C4: tar x writes and links paths named inside the archive: asked, and refused under path rules', async () => {
  const bad = await attempts(ALLOWLIST, ['tar xf p.tar', 'tar -xf p.tar', 'tar --extract -f p.tar', 'tar --get --file=p.tar', 'cat p.tar | tar x'], archives, ['tar tf p.tar', 'tar xOf p.tar']);
  assert.deepEqual(bad, []);
  const leaks = await attempts(PATHDENY, ['tar xf link.tar && cat hard', 'tar -x -f link.tar; cat hard', 'tar xf p.tar'], archives, ['tar tf link.tar', 'cat pub.txt']);
  assert.deepEqual(leaks, []);
  const strict = await attempts(ALLOWLIST_PRIV, ['tar xf link.tar && cat hard'], archives);
  assert.deepEqual(strict, []);
  // Other unpackers, as the analysis sees them: writes and links to paths known only when it runs.
  const w = (...ws: string[]): CommandWord[] => ws.map((text) => ({ text, literal: true }));
  const unpacks = (...ws: string[]) => fileEffects(ws[0]!, w(...ws)).some((f) => f.access === 'write' && !f.word.literal);
  for (const c of [['unzip', 'a.zip'], ['unzip', '-o', 'a.zip'], ['7z', 'x', 'a.7z'], ['7z', 'e', 'a.7z'], ['ar', 'x', 'a.a'], ['pax', '-r'], ['cpio', '-idv'], ['cpio', '--extract'], ['jar', 'xf', 'a.jar'], ['tar', '-xzf', 'a.tgz'], ['tar', '--ext', '-f', 'a.tar']]) {
    assert.ok(unpacks(...c), `not judged as unpacking: ${c.join(' ')}`);
  }
  for (const c of [['unzip', '-l', 'a.zip'], ['unzip', '-p', 'a.zip', 'f'], ['7z', 'l', 'a.7z'], ['ar', 'rcs', 'a.a', 'x.o'], ['tar', '-czf', 'a.tgz', 'src'], ['tar', 'tf', 'a.tar'], ['tar', '-xOf', 'a.tar'], ['cpio', '-o']]) {
    assert.ok(!unpacks(...c), `judged as unpacking: ${c.join(' ')}`);
  }
});

test('C5: split --filter, sdiff/diff3 --diff-program, install --strip-program and rsync -e do not pass a deny-list', async () => {
  const bad = await attempts(DENYONLY, [
    "split --filter='touch P' pub.txt",
    "split --fil 'touch P' pub.txt",
    "split -l 1 --filt='touch P' pub.txt",
    'sdiff --diff-program=./tp pub.txt pub.txt',
    'sdiff --diff-prog ./tp pub.txt pub.txt',
    'diff3 --diff-program=./tp pub.txt pub.txt pub.txt',
    'install -s --strip-program=./tp pub.txt sub/x',
    'install -s --strip-prog ./tp pub.txt sub/y',
  ], undefined, ['split -l 1 pub.txt sub/part', 'sdiff pub.txt pub.txt', 'install pub.txt sub/z']);
  assert.deepEqual(bad, []);
  const w = (...ws: string[]): CommandWord[] => ws.map((text) => ({ text, literal: true }));
  const code = (...ws: string[]) => runsCodeFromText(ws[0]!, w(...ws));
  for (const c of [['rsync', '-e', 'x', 'a', 'h:b'], ['rsync', '-avze', 'x', 'a', 'h:b'], ['rsync', '--rsh=x', 'a', 'h:b'], ['rsync', '--rsync-path', 'x', 'a', 'h:b'], ['rsync', '--rsync-p=x', 'a', 'h:b'],
    ['tar', '-cI', 'x', '-f', 'a.tar', '.'], ['tar', 'cIf', 'x', 'a.tar', '.'], ['tar', '--to-comm=x', '-xf', 'a.tar'], ['tar', '--use-comp', 'x', '-cf', 'a', '.'], ['sort', '--comp=x', 'f']]) {
    assert.ok(code(...c), `not flagged: ${c.join(' ')}`);
  }
  for (const c of [['rsync', '-avz', 'a', 'b'], ['install', '--strip', 'a', 'b'], ['tar', '--checkpoint=10', '-cf', 'a.tar', '.'], ['tar', '-cf', 'I', '.'], ['split', '-l', '10', 'f']]) {
    assert.equal(code(...c), null, `flagged: ${c.join(' ')}`);
  }
});
