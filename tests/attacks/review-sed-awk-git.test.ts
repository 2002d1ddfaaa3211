// Review (sed/awk/git): programs an allow-list names ran commands, wrote files or read denied ones
// through their own languages and options. sed: a command behind an address (`1e touch X`, `$e`, `0~1e`,
// `-e 1e\ touch\ X`), `1w`/`1W` writes, `1r priv/x` reads; awk: `getline l < "priv/x"`,
// `system\⏎(…)`; git: `grep -O'cmd'`, `--open-files-in-pager=cmd`, `ls-remote --upload-pa=cmd`
// (any unambiguous prefix of a long option), `archive --remote=. --exec=cmd`; `git -C a diff
// --no-index ../priv/x /dev/null` read a denied file (its paths were never judged as reads).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { CommandWord } from '../../src/core/types.js';
import { fileEffects, runsCodeFromText } from '../../src/shell/effects.js';
import { parseSedScript } from '../../src/shell/sed.js';
import { CLI, connectStdio, Harness, policyFromYaml, tempDir, writeIn } from '../../src/testing/helpers.js';

const hasGit = spawnSync('git', ['--version']).status === 0;
const hasSed = spawnSync('sed', ['--version']).status === 0;
const SECRET = 'TOPSECRET_R9';

/** Words of a command line as the analyser gives them (all literal here). */
const w = (...ws: string[]): CommandWord[] => ws.map((text) => ({ text, literal: true }));
const code = (...ws: string[]) => runsCodeFromText(ws[0]!, w(...ws));
const files = (...ws: string[]) => fileEffects(ws[0]!, w(...ws)).map((f) => `${f.access} ${f.word.text}`);

test('sed: e, w, W, s///e behind any address cannot be allowed by prefix; r/R/w/W files are judged', () => {
  const runs: string[][] = [
    ['sed', '-n', '1e touch CANARY', 's.sh'], ['sed', '$e touch X'], ['sed', '0~1e touch X', 'f'], ['sed', '-e', '1e touch X'],
    ['sed', '-e1e touch X', 'f'], ['sed', '--expression=1e touch X', 'f'], ['sed', '--expr', '1e touch X', 'f'], ['sed', '-ne', '$e touch X', 'f'],
    ['sed', '/a/,+2!e touch X', 'f'], ['sed', '/a/I,~4 e touch X', 'f'], ['sed', '0,/re/e', 'f'], ['sed', '\\,a,e touch X', 'f'],
    ['sed', '1 ~ 2 e', 'f'], ['sed', '1{e touch X\n}', 'f'], ['sed', 'p;e touch X', 'f'], ['sed', ':a\ne touch X', 'f'],
    ['sed', 's/a/b/e', 'f'], ['sed', 's/a/b/ge', 'f'], ['sed', 's|a|b| e', 'f'], ['sed', 'y/a/b/;e', 'f'],
    ['sed', '-n', 'p', '-e', '1e touch X'], // an -e anywhere: the first operand is then a file
    ['sed', '-f', 'script.sed', 'f'], ['sed', '--fi=script.sed', 'f'], ['sed', '1 q junk', 'f'], ['sed', 's/a/b', 'f'], ['sed', '{p', 'f'],
  ];
  for (const c of runs) assert.ok(code(...c), `not flagged: ${JSON.stringify(c)}`);
  assert.ok(runsCodeFromText('sed', [{ text: 'sed', literal: true }, { text: '$s', literal: false }, { text: 'f', literal: true }]), 'a script known only when it runs');
  assert.deepEqual(files('sed', '1r priv/secret.txt', 's.sh'), ['read s.sh', 'read priv/secret.txt']);
  assert.deepEqual(files('sed', '$R priv/secret.txt', 's.sh'), ['read s.sh', 'read priv/secret.txt']);
  assert.deepEqual(files('sed', '-n', '1w CANARY', 's.sh'), ['read s.sh', 'write CANARY']);
  assert.deepEqual(files('sed', '-n', '/x/W priv/out', 's.sh'), ['read s.sh', 'write priv/out']);
  assert.deepEqual(files('sed', 's/a/b/w priv/out', 's.sh'), ['read s.sh', 'write priv/out']);
  assert.deepEqual(files('sed', '-e1p', 'priv/secret.txt'), ['read priv/secret.txt'], '-eSCRIPT: every operand is a file');
  assert.deepEqual(files('sed', '-l', '5', 'l', 'priv/secret.txt'), ['read priv/secret.txt'], '-l takes a value');
});

test('sed: the script parser follows GNU syntax (text, labels, y, custom delimiters)', () => {
  const ok = (s: string) => parseSedScript(s);
  assert.deepEqual(ok('1a hello; e touch X'), { runs: false, reads: [], writes: [] }, 'a takes the rest of the line as text');
  assert.equal(ok('1a hello\\\ne touch X')?.runs, false, 'a backslash-newline continues the text');
  assert.equal(ok('1a hello\ne touch X')?.runs, true, 'the next line is a command again');
  assert.equal(ok('1i\\\ntext\np')?.runs, false);
  assert.equal(ok('s/e/\\//;p')?.runs, false);
  assert.equal(ok('s/a\\/e/b/;p')?.runs, false);
  assert.equal(ok('y/abc/xyz/')?.runs, false);
  assert.equal(ok(':a;N;$!ba;s/\\n/ /g')?.runs, false);
  assert.equal(ok('/start/,/end/{/skip/d;p}')?.runs, false);
  assert.equal(ok('s/x/y/w /dev/stdout')?.writes[0], '/dev/stdout');
  assert.equal(ok('1r a; e touch X')?.reads[0], 'a; e touch X', 'r takes the rest of the line as its file name');
  assert.equal(ok('t x e touch X\n:x')?.runs, true, 'a label ends at a blank: e is the next command');
  assert.equal(ok('b end; e touch X')?.runs, true, 'a label ends at ;');
});

test('sed: ordinary scripts still pass', () => {
  for (const c of [['sed', '-n', '1,5p', 'f'], ['sed', '-i', 's/a/b/g', 'f'], ['sed', '-e', 's|x|y|', '-e', '/re/d', 'f'], ['sed', '-E', 's/(a|b)+/c/g', 'f'],
    ['sed', '-i.bak', '/^#/d', 'f'], ['sed', '-n', '$=', 'f'], ['sed', '/^$/N;/\\n$/D', 'f'], ['sed', 's/e/E/2', 'f'], ['sed', '--sandbox', '1e x', 'f'],
    ['sed', 'y/abc/xyz/', 'f'], ['sed', '-n', '/a/{p;q}', 'f'], ['sed', '1~3d', 'f'], ['sed', '0,/x/s//y/', 'f'], ['sed', '$a\\\nlast', 'f']]) {
    assert.equal(code(...c), null, JSON.stringify(c));
  }
  assert.deepEqual(files('sed', '-i', 's/a/b/g', 'f'), ['write f']);
});

test('awk: system, getline, pipes, print redirection, @-directives, ARGV and program files cannot be allowed by prefix', () => {
  for (const p of ['BEGIN{getline l < "priv/secret.txt"; print l}', 'BEGIN{system\\\n("touch X")}', 'BEGIN { system ("x") }',
    '{ "date" | getline d }', '{ getline }', '{ print | "sh" }', '{ print |& "sh" }', '{ print > "out" }', '{ printf "%s", $0 >> "out" }',
    '@load "filefuncs"', 'BEGIN { f = "system"; @f("x") }', '@include "x.awk"', 'BEGIN { ARGV[1] = "priv/x"; ARGC = 2 } { print }']) {
    assert.ok(code('awk', p), `not flagged: ${p}`);
  }
  for (const c of [['awk', '-f', 'p.awk', 'f'], ['gawk', '--file=p.awk'], ['gawk', '--fi', 'p.awk'], ['gawk', '-E', 'p.awk'], ['gawk', '-i', 'x', '1'],
    ['gawk', '-l', 'filefuncs', '1'], ['gawk', '--load=x', '1'], ['mawk', '-W', 'exec', 'p'], ['gawk', '-o', '1'], ['gawk', '--dump-variables=o', '1'],
    ['gawk', '-e', 'BEGIN{system("x")}'], ['gawk', '--source', 'BEGIN{system("x")}']]) {
    assert.ok(code(...c), `not flagged: ${JSON.stringify(c)}`);
  }
});

test('awk: ordinary programs still pass', () => {
  for (const c of [['awk', '{print $1}', 'f'], ['awk', '-F:', '$3 > 100 {print $1}', '/etc/passwd'], ['awk', 'a || b {print}', 'f'], ['awk', 'NR>1 {print $2}', 'f'],
    ['awk', '-v', 'x=1', '{ s += $1 } END { print s / x }', 'f'], ['awk', '-F', ',', '{ if ($2 > max) max = $2 } END { print max }', 'f'], ['awk', 'length > 80', 'f']]) {
    assert.equal(code(...c), null, JSON.stringify(c));
  }
});

test('git: options that run a command are found behind prefixes, short clusters and global options', () => {
  for (const c of [['git', 'grep', "-Otouch X", 'base64'], ['git', 'grep', '-nOtouch X', 'base64'], ['git', 'grep', '--open-files-in-pager=touch X', 'b'], ['git', 'grep', '--open-f=x', 'b'],
    ['git', 'ls-remote', '--upload-pa=touch X;false', '.'], ['git', 'ls-remote', '--upload-pack', 'x', '.'], ['git', 'ls-remote', '--exec=x', '.'], ['git', 'ls-remote', '-u', 'x', '.'],
    ['git', 'archive', '--remote=.', '--exec=touch X;false', 'HEAD'], ['git', 'archive', '--remote=.', '--ex', 'x', 'HEAD'], ['git', 'fetch', '--upload-pack=x'],
    ['git', 'clone', '-u', 'x', 'a', 'b'], ['git', 'clone', '--template=t', 'a'], ['git', 'clone', '-c', 'core.hooksPath=h', 'a'], ['git', 'push', '--receive-pack=x'],
    ['git', 'push', '--rec=x'], ['git', 'init', '--templ=t'], ['git', 'diff', '--ext-diff'], ['git', 'log', '-p', '--ext'], ['git', 'rebase', '-x', 'touch X', 'main'],
    ['git', 'rebase', '--exec=x'], ['git', 'difftool', '-x', 'x'], ['git', 'bisect', 'run', 'x'], ['git', 'submodule', 'foreach', 'x'], ['git', 'filter-branch', '--tree-filter', 'x'],
    ['git', '-c', 'core.pager=x', 'log'], ['git', '--config-env=core.pager=X', 'log'], ['git', '--exec-path=.', 'status'],
    ['git', '-C', 'd', '--git-dir=x', '--work-tree', 'y', 'ls-remote', '--upload-pack=x', '.'], ['git', '--no-pager', 'grep', '-O', 'b']]) {
    assert.ok(code(...c), `not flagged: ${JSON.stringify(c)}`);
  }
  assert.ok(runsCodeFromText('git', [{ text: 'git', literal: true }, { text: '$sub', literal: false }, { text: '-Ox', literal: true }]), 'a sub-command known only when it runs');
  // Words known only when they run: judged by what is written of them.
  const mixed = (...ws: Array<string | [string]>) => runsCodeFromText('git', ws.map((x) => (typeof x === 'string' ? { text: x, literal: true } : { text: x[0], literal: false })));
  assert.ok(mixed('git', 'grep', ['-n$x'], 'foo'), '-n$x may be -nOcmd');
  assert.ok(mixed('git', 'log', ['--$x']));
  assert.ok(mixed('git', ['-$x'], 'log'));
  assert.equal(mixed('git', '-C', ['$d'], 'status'), null);
  assert.equal(mixed('git', 'log', ['--author=$me']), null);
  assert.equal(mixed('git', 'commit', ['-m$msg']), null);
  assert.equal(mixed('git', 'show', ['$sha']), null);
});

test('git: ordinary calls still pass; --output, archive -o and --add-file, diff --no-index are judged as files', () => {
  for (const c of [['git', 'grep', '-n', 'foo'], ['git', 'diff', 'HEAD~1'], ['git', 'ls-remote', 'origin'], ['git', 'grep', '-e', 'O', '-e', 'x'], ['git', 'grep', '-eO'],
    ['git', 'show', '--cc'], ['git', 'log', '--exit-code'], ['git', 'diff', '--text'], ['git', 'log', '--oneline', '--', '--exec'], ['git', 'fetch', '-u'],
    ['git', 'commit', '-m', 'x'], ['git', 'archive', '--format=tar', 'HEAD'], ['git', 'grep', '-c', 'x'], ['git', 'log', '-c']]) {
    assert.equal(code(...c), null, JSON.stringify(c));
  }
  assert.ok(files('git', 'diff', '--no-index', 'priv/secret.txt', '/dev/null').includes('read priv/secret.txt'));
  assert.ok(files('git', '-C', 'a', 'diff', '--no-index', '--', '../priv/secret.txt', 'b').includes('read a/../priv/secret.txt'));
  assert.ok(files('git', 'diff', '--output=priv/out').includes('write priv/out'));
  assert.ok(files('git', 'log', '-p', '--output', 'priv/out').includes('write priv/out'));
  assert.ok(files('git', '-C', 'sub', 'archive', '-o', '../priv/a.tar', 'HEAD').includes('write sub/../priv/a.tar'));
  assert.ok(files('git', 'format-patch', '-opriv', 'HEAD~1').includes('write priv'));
  assert.ok(files('git', 'archive', '--add-file=priv/secret.txt', 'HEAD').includes('read priv/secret.txt'));
  assert.ok(files('git', 'blame', '--contents', 'priv/secret.txt', 'pub/a').includes('read priv/secret.txt'));
  assert.ok(files('git', 'grep', '-f', 'priv/secret.txt', 'x').includes('read priv/secret.txt'));
  assert.deepEqual(files('git', 'commit', '-mFix'), []);
});

// ---- end to end: the real pipeline (in process), then the built server over stdio ----

const rules = (names: string[]) => names.map((n) => `  - { tool: run_command, command: ["${n}"], decision: allow }\n`).join('');
const ALLOWED = ['sed', 'awk', 'git grep', 'git ls-remote', 'git archive', 'git diff', 'cat', 'echo'];
const yaml = (deny: boolean, gitAll = false) => `mode: ci\nsandbox: { backend: none }\ncommands: { prefer_tools: false }\nrules:\n${rules(gitAll ? [...ALLOWED, 'git *'] : ALLOWED)}${deny ? '  - { tool: "*", path: "priv/**", decision: deny }\n' : ''}`;

function fixture(dir: string): void {
  writeIn(dir, 's.sh', 'base64 priv/secret.txt\n');
  writeIn(dir, 'f.txt', 'a b\nc d\n');
  writeIn(dir, 'a/keep', 'x\n');
  writeIn(dir, 'priv/secret.txt', `${SECRET}\n`);
  const git = (...a: string[]) => spawnSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...a], { cwd: dir });
  git('init', '-q');
  git('add', 's.sh', 'f.txt', 'a/keep');
  git('commit', '-qm', 'init');
}

const ATTACKS = [
  "sed -n '1e touch CANARY' s.sh", "sed '$e touch CANARY' s.sh", "sed -n '0~1e touch CANARY' s.sh", 'sed -e 1e\\ touch\\ CANARY s.sh',
  "sed -n '1w priv/CANARY' s.sh", "sed -n '1W priv/CANARY' s.sh", "sed 's/b/c/w priv/CANARY' s.sh", "sed '1r priv/secret.txt' s.sh", "sed '1R priv/secret.txt' s.sh",
  'awk \'BEGIN{getline l < "priv/secret.txt"; print l}\'', 'awk \'BEGIN{system\\\n("touch CANARY")}\'',
  "git grep -O'touch CANARY' base64 -- s.sh", "git grep --open-files-in-pager='touch CANARY' base64 -- s.sh",
  "git ls-remote --upload-pa='touch CANARY;false' .", "git ls-remote --exec='touch CANARY;false' .",
  "git archive --remote=. --exec='touch CANARY;false' HEAD -- s.sh",
  'git diff --no-index priv/secret.txt /dev/null', 'git -C a diff --no-index ../priv/secret.txt /dev/null',
];
const CONTROLS = ["sed -n '1,5p' f.txt", "sed -e 's|a|x|' -e '/c/d' f.txt", "awk '{print $1}' f.txt", "awk -F' ' '$2 > \"a\" {print $1}' f.txt", "awk 'a || b {print}' f.txt",
  'git ls-remote .', 'git diff --no-index f.txt s.sh', 'git grep -n base64 -- s.sh'];

const markers = (dir: string) => ['CANARY', 'priv/CANARY', 'a/CANARY'].filter((m) => existsSync(path.join(dir, m)));
const clean = (dir: string) => { for (const m of ['CANARY', 'priv/CANARY', 'a/CANARY']) rmSync(path.join(dir, m), { force: true }); };

for (const [deny, gitAll] of [[true, false], [false, false], [true, true]] as const) {
  test(`end to end (${deny ? 'priv/** denied' : 'no path rules'}${gitAll ? ', git *' : ''}): sed/awk/git allowed by name run no command, write and read nothing they should not`, { skip: hasGit && hasSed ? false : 'needs git and GNU sed' }, async (t) => {
    process.env.TOOLGATE_STARTER = 'off';
    const { dir, cleanup } = tempDir('tg-rsag-');
    fixture(dir);
    const h = new Harness([dir], { policy: policyFromYaml(yaml(deny, gitAll)) });
    t.after(() => { h.close(); cleanup(); delete process.env.TOOLGATE_STARTER; });
    assert.equal((await h.call('run_command', { command: 'touch CANARY' })).ok, false, 'control: touch is not allowed');
    const bad: string[] = [];
    for (const command of ATTACKS) {
      clean(dir);
      const r = await h.call('run_command', { command });
      const out = JSON.stringify(r);
      if (markers(dir).length) bad.push(`${command}: created ${markers(dir).join(', ')}`);
      if (deny && out.includes(SECRET)) bad.push(`${command}: showed the denied file`);
      if (r.ok && !/secret|priv\/CANARY/.test(command)) bad.push(`${command}: allowed`);
    }
    assert.deepEqual(bad, []);
    for (const command of CONTROLS) {
      const r = await h.call('run_command', { command });
      assert.ok(r.ok || r.error?.code === 'ExitNonZero', `${command}: ${r.error?.code} ${r.error?.message}`);
    }
  });
}

test('end to end through the built server (stdio): sed with an address, awk getline and git grep -O are refused and create nothing', { skip: !existsSync(CLI) ? 'dist/cli.js is not built' : hasGit && hasSed ? false : 'needs git and GNU sed' }, async (t) => {
  const ws = tempDir('tg-rsag-ws-');
  const pol = tempDir('tg-rsag-pol-');
  fixture(ws.dir);
  writeFileSync(path.join(pol.dir, 'p.yaml'), yaml(true));
  const conn = await connectStdio(['--workspace', ws.dir, '--policy', path.join(pol.dir, 'p.yaml'), '--console', 'off', '--state-dir', path.join(pol.dir, 'state')], { env: { TOOLGATE_NOTIFY: 'off', TOOLGATE_STARTER: 'off' } });
  t.after(async () => { await conn.close(); ws.cleanup(); pol.cleanup(); });
  const call = async (command: string) => (await conn.client.callTool({ name: 'run_command', arguments: { command } })).structuredContent as { ok: boolean; error?: { code: string }; data?: unknown };
  const control = await call("sed -n '1p' s.sh");
  assert.equal(control.ok, true, `control: ${JSON.stringify(control)}`);
  for (const command of ["sed -n '1e touch CANARY' s.sh", "sed -n '$e touch CANARY' s.sh", "sed '1r priv/secret.txt' s.sh", 'awk \'BEGIN{getline l < "priv/secret.txt"; print l}\'',
    "git grep -O'touch CANARY' base64 -- s.sh", "git ls-remote --upload-pa='touch CANARY;false' .", 'git -C a diff --no-index ../priv/secret.txt /dev/null']) {
    const r = await call(command);
    assert.equal(r.ok, false, `${command} was allowed`);
    assert.ok(!JSON.stringify(r).includes(SECRET), `${command} showed the denied file`);
    assert.deepEqual(markers(ws.dir), [], `${command} created a file`);
  }
});
