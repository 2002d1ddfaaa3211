// Review round 8 (helper review9, H1–H3, M1–M3): grep/rg options after the pattern operand (-ve X,
// -vf F, --rege X: getopt permutes them), `--exclude WORD` / `--ignore WORD` exempted for every
// program and past `--`, a program path named like grep, writes to a path known only when it runs
// (`> ~+/…`, `> $f`) under `defaults: allow`, ex/vim by other names, gcc's -wrapper / -B.
// Controls: names and patterns the secrets list must not refuse, common commands that must stay allowed.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { policyFromYaml, tempDir } from '../../src/testing/helpers.js';
import { attemptsWith } from './attempts-fixture.js';

const SECRET = 'TOPSECRET_R8';
const has = (prog: string, arg = '--version') => { const r = spawnSync(prog, [arg]); return !r.error && r.status === 0; };
const HEAD = 'mode: ci\nsandbox: { backend: none }\ncommands: { prefer_tools: false }\n';
const DENY_PRIV = '  - { tool: "*", path: "priv/**", decision: deny }\n';
/** An allow-list, defaults ask, no path rules (the review's allowmake-np). */
const ALLOWLIST = policyFromYaml(`${HEAD}defaults: ask\nrules:\n  - tool: run_command\n    command: ${JSON.stringify(['grep', 'egrep', 'rg', 'echo', 'cat', 'tar', 'git log'])}\n    decision: allow\n`);
const PATHDENY = policyFromYaml(`${HEAD}defaults: allow\nrules:\n${DENY_PRIV}`);
const PATHS_DENY = policyFromYaml(`${HEAD}defaults: allow\npaths: { deny: ["priv/**"] }\n`);
const NONE = policyFromYaml(`${HEAD}defaults: allow\n`);
const DENYONLY = policyFromYaml(`${HEAD}defaults: allow\nrules:\n  - { tool: run_command, command: ["rm", "touch", "bash", "sh", "python3", "curl"], decision: deny }\n`);

const git = (dir: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: dir, stdio: 'pipe' });

function workspace(withGit: boolean) {
  const { dir, cleanup } = tempDir('tg-r8-');
  mkdirSync(path.join(dir, 'priv'), { recursive: true });
  mkdirSync(path.join(dir, 'src'), { recursive: true });
  writeFileSync(path.join(dir, 'priv/secret.txt'), `${SECRET}\n`);
  writeFileSync(path.join(dir, 'pub.txt'), 'one\ntwo\n');
  writeFileSync(path.join(dir, 'src/a.txt'), 'foo\n');
  writeFileSync(path.join(dir, 'foo.c'), 'int x;\n');
  writeFileSync(path.join(dir, '.env'), `TOKEN=${SECRET}\n`);
  writeFileSync(path.join(dir, '.gitignore'), '.env\n');
  // A program that leaves a mark: what an option names to run.
  writeFileSync(path.join(dir, 'tp'), `#!/bin/sh\n: > '${dir}/P'\n`);
  chmodSync(path.join(dir, 'tp'), 0o755);
  if (withGit) { git(dir, 'init', '-q'); git(dir, 'add', 'pub.txt', '.gitignore'); git(dir, 'commit', '-qm', 'one'); git(dir, 'commit', '-q', '--allow-empty', '-m', 'two'); }
  return { dir, cleanup };
}

const attempts = attemptsWith({ workspace, secret: SECRET, reset: ['P'] });

test('H1: grep/rg -e / -f given after the operand (options permute), in clusters or as long prefixes: the first operand is a file', async () => {
  const lines = [
    'grep .env -ve zzz', 'grep .env -vf /dev/null', 'grep .env --rege TOKEN', 'grep .env --regex=TOKEN', 'egrep .env -ve zzz',
    'grep .env -ive zzz', 'grep .env -eTOKEN', 'grep .env --fil /dev/null', 'grep .env -c -e zzz -v', 'fgrep .env -- -e',
  ];
  if (has('rg')) lines.push('rg .env -ie TOKEN', 'rg .env --regexp TOKEN');
  const bad = [...await attempts(NONE, lines, { controls: ['grep -n .env .gitignore', 'grep -rn foo src', 'grep -c --exclude .env one pub.txt', 'grep -e one -n pub.txt'] }),
    ...await attempts(ALLOWLIST, ['grep .env -ve zzz', 'egrep .env -ve zzz'], { controls: ['grep -n .env .gitignore', 'grep -v zzz pub.txt'] })];
  assert.deepEqual(bad, []);
});

test('H1: an allow-list that allows grep asks for a file outside the workspace however the options are placed', async () => {
  const { dir: out, cleanup } = tempDir('tg-r8out-');
  writeFileSync(path.join(out, 'key'), `${SECRET}\n`);
  try {
    const key = path.join(out, 'key');
    assert.deepEqual(await attempts(ALLOWLIST, [`grep ${key} -ve zzz`, `grep ${key} -vf /dev/null`, `grep ${key} --regexp=zzz -v`, `grep -v zzz ${key}`]), []);
  } finally { cleanup(); }
});

test('H2: --exclude / --ignore WORD is a pattern only for programs that take one, before the first operand and `--`', async () => {
  const lines = [
    'fmt -- --exclude .env', 'base32 --ignore .env | base32 -d', 'join -a1 --ignore .env /dev/null', 'rev -- --ignore .env',
    'tar -cf - -- --exclude .env | tar -xOf -', 'tar -cf t.tar -- --exclude .env; tar -xOf t.tar', 'grep -e --exclude .env',
    'grep -c -e x --ignore .env; cat .env', 'tar -f --exclude .env -c; tar -xOf ./--exclude', 'cat -- --exclude .env',
  ];
  const bad = await attempts(NONE, lines, { controls: [
    'tar --exclude .env -cf x.tar pub.txt', 'tar czf y.tgz --exclude .env pub.txt', 'zip -q z.zip pub.txt -x .env', 'du -s --exclude .env .',
    'ls --ignore .env', 'grep -rn --exclude .env foo .', 'grep -rn foo . --exclude=.env', 'diff --exclude .env src src',
  ] });
  assert.deepEqual(bad, []);
});

test('M1: a program given as a path is no grep, whatever its name: its operands are judged as files', async () => {
  const cat = execFileSync('sh', ['-c', 'command -v cat']).toString().trim();
  const bad = [...await attempts(NONE, [`ln -s ${cat} grep && ./grep .env`, `cp ${cat} find; ./find -name .env`]),
    ...await attempts(PATHS_DENY, [`ln -s ${cat} grep && ./grep priv/secret.txt`])];
  assert.deepEqual(bad, []);
});

test('H3: a write to a path known only when it runs is asked even under defaults: allow (protected paths, path rules)', async () => {
  const broken = (dir: string) => !readFileSync(path.join(dir, 'priv/secret.txt'), 'utf8').includes(SECRET);
  const paths = ['echo OVERWRITTEN > ~+/priv/secret.txt', 'f=priv/secret.txt; echo x > $f', 'cd priv && echo x > ~+/secret.txt', 'echo x | tee ~+/priv/secret.txt'];
  const bad = [...await attempts(PATHDENY, paths, { broken, controls: ['echo x > pub.txt', 'f=pub.txt; echo "$f"'] }),
    ...await attempts(PATHS_DENY, paths, { broken })];
  const cfg = (dir: string) => readFileSync(path.join(dir, '.git/config'), 'utf8').includes('external');
  bad.push(...await attempts(DENYONLY, [
    "printf '[diff]\\n\\texternal = @DIR@/tp\\n' >> ~+/.git/config; echo z >> pub.txt; git diff",
    "c=.git/config; printf '[diff]\\n\\texternal = @DIR@/tp\\n' >> $c; echo z >> pub.txt; git diff",
  ], { git: true, broken: cfg, controls: ['echo z >> pub.txt; git diff --stat'] }));
  assert.deepEqual(bad, []);
});

test('M2: ex / vim by other names run shell commands and write any path: asked past a deny-list, refused under path rules', { skip: !has('ex') }, async () => {
  const names = ['ex', 'vim.basic', 'vim.tiny', 'editor', 'vi', 'vim'].filter((n) => spawnSync('sh', ['-c', `command -v ${n}`]).status === 0);
  const bad = await attempts(DENYONLY, names.map((n) => `${n} -s +"!touch @DIR@/P" +q`));
  const broken = (dir: string) => !readFileSync(path.join(dir, 'priv/secret.txt'), 'utf8').includes(SECRET);
  bad.push(...await attempts(PATHDENY, names.map((n) => `${n} -s +"w! priv/secret.txt" +q pub.txt`), { broken }));
  bad.push(...await attempts(NONE, names.map((n) => `${n} -s +"w! priv/secret.txt" +q pub.txt`), { broken }));
  assert.deepEqual(bad, []);
});

test('M3: gcc -wrapper / -B / -specs= run a program they name: asked past a deny-list', { skip: !has('gcc') }, async () => {
  const setup = (dir: string) => {
    mkdirSync(path.join(dir, 'b'), { recursive: true });
    for (const n of ['cc1', 'as']) { writeFileSync(path.join(dir, 'b', n), `#!/bin/sh\n: > '${dir}/P'\n`); chmodSync(path.join(dir, 'b', n), 0o755); }
    writeFileSync(path.join(dir, 's.specs'), `*cc1:\n+ %(cc1_cpu) %:getenv(X x)\n\n*invoke_as:\n%{!S:-o %|.s |\n @DIR@/tp %g.s }\n`.replaceAll('@DIR@', dir));
  };
  const bad = await attempts(DENYONLY, ['gcc -wrapper @DIR@/tp -c foo.c', 'gcc -wrapper=@DIR@/tp -c foo.c', 'gcc -B@DIR@/b/ -c foo.c', 'gcc -B @DIR@/b/ -c foo.c', 'cc -B@DIR@/b/ -c foo.c'], { setup, controls: ['gcc -c foo.c -o foo.o', 'gcc -O2 -Wall -c foo.c'] });
  assert.deepEqual(bad, []);
});

// Review round 9 (helper-59): a link to a path known only when it runs is a way to write there
// later (`ln -s "$PWD/.git" g; echo >> g/config`): a hard ask like the write itself. And
// variables that make allowed programs read options or code (RIPGREP_CONFIG_PATH, TAR_OPTIONS,
// PERL5OPT, NODE_OPTIONS…) count as code in the command.
test('R9: a link to a path known only when it runs is a hard ask without a sandbox (.git/config stays as it was)', async () => {
  const gitConfig = (dir: string) => { try { return readFileSync(path.join(dir, '.git/config'), 'utf8').includes('EVIL'); } catch { return false; } };
  const lines = [
    'ln -s "$PWD/.git" g; echo EVIL >> g/config', 'ln -s ~+/.git g2; echo EVIL >> g2/config', 'd=.git; ln -s $d g3; echo EVIL >> g3/config',
    'ln ~+/.git/config h; echo EVIL >> h', 'link "$PWD/.git/config" h2; echo EVIL >> h2', 'cp -s "$PWD/.git/config" l; echo EVIL >> l',
    'cp -l "$PWD/.git/config" l2; echo EVIL >> l2', 'cp --link "$PWD/.git/config" l3; echo EVIL >> l3',
  ];
  const bad = await attempts(NONE, lines, { git: true, broken: gitConfig, controls: ['ln -s pub.txt p.lnk', 'cp pub.txt p2.txt'] });
  assert.deepEqual(bad, []);
});

test('R9: environment variables that hand options or code to allowed programs ask past command deny rules', async () => {
  const lines = [
    'printf -- "--pre=@DIR@/tp\\n" > cfg; RIPGREP_CONFIG_PATH=cfg rg x pub.txt',
    'TAR_OPTIONS="--checkpoint=1 --checkpoint-action=exec=@DIR@/tp" tar -cf /dev/null pub.txt',
    'export TAR_OPTIONS="--checkpoint=1 --checkpoint-action=exec=@DIR@/tp"; tar -cf /dev/null pub.txt',
  ];
  const bad = await attempts(DENYONLY, has('rg') ? lines : lines.slice(1), { controls: ['tar -cf /dev/null pub.txt'] });
  assert.deepEqual(bad, []);
  const leak = await attempts(NONE, has('rg') ? ['printf -- "-e\\nTOKEN\\n" > cfg; RIPGREP_CONFIG_PATH=cfg rg .env'] : []);
  assert.deepEqual(leak, []);
});

// Review round 10 (helper-60): long-option abbreviations (`cp --l` is --link, `ln --sym` is
// --symbolic) and rsync's --link-dest, which hard-links the destination's files to a folder.
test('R10: cp --l, rsync --link-dest and ln --sym are judged as the links they make', async () => {
  const gitConfig = (dir: string) => { try { return readFileSync(path.join(dir, '.git/config'), 'utf8').includes('EVIL'); } catch { return false; } };
  const lines = ['cp --l .git/config h; echo EVIL >> h', 'cp -r --l "$PWD/.git" g; echo EVIL >> g/config', 'cp --li .git/config h2; echo EVIL >> h2'];
  if (has('rsync')) lines.push('rsync -a --link-dest=../.git .git/ g3/; echo EVIL >> g3/config', 'rsync -a --link-dest="$PWD/.git" .git/ g4/; echo EVIL >> g4/config');
  assert.deepEqual(await attempts(NONE, lines, { git: true, broken: gitConfig, controls: ['cp pub.txt p2.txt'] }), []);
  assert.deepEqual(await attempts(PATHDENY, ['ln --sym ../priv src/l; cat src/l/secret.txt', 'ln --sym ../priv/secret.txt src/s; cat src/s'], { controls: ['ln -s pub.txt p.lnk'] }), []);
});
