// Review round 7 (helper-54, H1–H3, M1–M6, regressions): patches (git apply, patch, ed) writing a
// Makefile that make then runs; format-patch --full-diff; @file response files of binutils and the
// gcc driver; a program named like echo or sleep; sed -f / awk -f scripts; dpkg-deb extraction; ed's
// shell commands; zip --unzip-command and wget --use-askpass prefixes. Controls: names and patterns
// the secrets list must not refuse (`grep -n .env .gitignore`, `find . -name .env`…), HEAD~N under path rules.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { analyzeCommand } from '../../src/shell/analyze.js';
import { loadShellParser } from '../../src/shell/parser.js';
import { policyFromYaml, tempDir } from '../../src/testing/helpers.js';
import { attemptsWith } from './attempts-fixture.js';

const SECRET = 'TOPSECRET_R7';
const has = (prog: string, arg = '--version') => { const r = spawnSync(prog, [arg]); return !r.error && r.status === 0; };
const HEAD = 'mode: ci\nsandbox: { backend: none }\ncommands: { prefer_tools: false }\n';
const DENY_PRIV = '  - { tool: "*", path: "priv/**", decision: deny }\n';
/** An allow-list, defaults ask, no path rules (the review's allowmake-np). */
const ALLOWLIST = policyFromYaml(`${HEAD}defaults: ask\nrules:\n  - tool: run_command\n    command: ${JSON.stringify(['git apply', 'git am', 'git status', 'make', 'patch', 'ed', 'echo', 'printf', 'strings', 'cat', 'rev'])}\n    decision: allow\n`);
const PATHDENY = policyFromYaml(`${HEAD}rules:\n${DENY_PRIV}  - { tool: "*", decision: allow }\n`);
const PATHS_DENY = policyFromYaml(`${HEAD}paths: { deny: ["priv/**"] }\nrules:\n  - { tool: "*", decision: allow }\n`);
const NONE = policyFromYaml(`${HEAD}defaults: allow\n`);
const DENYONLY = policyFromYaml(`${HEAD}defaults: allow\nrules:\n  - { tool: run_command, command: ["rm", "touch", "bash", "sh", "python3", "curl"], decision: deny }\n`);

const git = (dir: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: dir, stdio: 'pipe' });

function workspace(withGit: boolean) {
  const { dir, cleanup } = tempDir('tg-r7-');
  mkdirSync(path.join(dir, 'priv'), { recursive: true });
  writeFileSync(path.join(dir, 'priv/secret.txt'), `${SECRET}\n`);
  writeFileSync(path.join(dir, 'pub.txt'), 'one\ntwo\n');
  writeFileSync(path.join(dir, '.env'), `TOKEN=${SECRET}\n`);
  writeFileSync(path.join(dir, '.gitignore'), '.env\n');
  // A program that leaves a mark: what an option names to run.
  writeFileSync(path.join(dir, 'tp'), `#!/bin/sh\n: > '${dir}/P'\n`);
  chmodSync(path.join(dir, 'tp'), 0o755);
  if (withGit) {
    git(dir, 'init', '-q'); git(dir, 'add', 'priv', 'pub.txt', '.gitignore'); git(dir, 'commit', '-qm', 'one');
    writeFileSync(path.join(dir, 'pub.txt'), 'one\ntwo\nthree\n');
    writeFileSync(path.join(dir, 'priv/secret.txt'), `${SECRET}\nmore\n`);
    git(dir, 'commit', '-qam', 'two');
  }
  return { dir, cleanup };
}

const attempts = attemptsWith({ workspace, secret: SECRET, reset: ['P', 'Makefile'] });

const NEW_MAKEFILE = 'diff --git a/Makefile b/Makefile\nnew file mode 100644\n--- /dev/null\n+++ b/Makefile\n@@ -0,0 +1,2 @@\n+x:\n+\t@: > P\n';

test('H1: git apply, patch and ed write the paths their input names: asked, so a Makefile they write is not run by an allowed make', async () => {
  const bad = await attempts(ALLOWLIST, [
    `git apply <<'X'\n${NEW_MAKEFILE}X\nmake -s x`,
    `git --namespace n apply -v <<'X'\n${NEW_MAKEFILE}X\nmake -s x`,
    `patch -s -p1 <<'X'\n${NEW_MAKEFILE}X\nmake -s x`,
    `ed -s <<'X'\na\nx:\n\t@: > P\n.\nw Makefile\nq\nX\nmake -s x`,
  ], { controls: ['git apply --stat <<\'X\'\n' + NEW_MAKEFILE + 'X', 'make --version'] });
  assert.deepEqual(bad, []);
});

test('H2: git format-patch --full-diff prints every file of the commits it selects: refused under path rules', async () => {
  const bad = await attempts(PATHDENY, [
    'git format-patch --full-diff -1 --stdout -- pub.txt',
    'git format-patch --full-diff --root HEAD --stdout -- pub.txt',
    'git log -p --full-diff -- pub.txt',
  ], { git: true, controls: ['git format-patch -1 --stdout -- pub.txt', 'git log --oneline --full-diff -- pub.txt'] });
  assert.deepEqual(bad, []);
});

test('H3: @file response files (binutils, the gcc driver) are refused under path rules', async () => {
  const lines = ["printf 'pri%s/secret.txt' v > l; strings @l", "printf 'pri%s/secret.txt' v > l; strings -a @l"];
  if (has('cpp')) lines.push("printf -- '-P pri%s/secret.txt' v > l; cpp @l");
  if (has('gcc')) lines.push("printf -- '-E -P -xc pri%s/secret.txt' v > l; gcc @l");
  assert.deepEqual([...await attempts(PATHDENY, lines), ...await attempts(PATHS_DENY, lines)], []);
});

test('H3: without path rules a response file asks (an allow-list of programs does not let it read .env)', async () => {
  // (The list is written beforehand: a write to it would ask by itself under this policy.)
  const setup = (dir: string) => writeFileSync(path.join(dir, 'l'), '.env');
  assert.deepEqual(await attempts(ALLOWLIST, ['strings @l', 'strings -a @l', 'cat pub.txt && strings @l'], { setup, controls: ['strings pub.txt'] }), []);
});

test('M1: a program named like echo or sleep but given as a path is judged as any program', async () => {
  const bad = await attempts(PATHDENY, [
    'cp /usr/bin/rev echo && f=priv/secret.txt; ./echo "$f"',
    'ln -sf /usr/bin/rev sleep; f=priv/secret.txt; ./sleep "$f"',
    'cp /usr/bin/rev test; f=priv/secret.txt; ./test "$f"',
  ], { controls: ['f=pub.txt; echo "$f"; sleep 0 "$f" 2>/dev/null; test -n "$f"'] });
  assert.deepEqual(bad, []);
});

test('M1: without path rules, ./echo .env is judged by the secrets list (a copy of rev named echo)', async () => {
  assert.deepEqual(await attempts(NONE, ['cp /usr/bin/rev echo; ./echo .env', 'ln -sf /usr/bin/rev seq; ./seq .env'], { controls: ['echo .env'] }), []);
});

test('M2: sed -f and awk -f scripts may read any file: refused under path rules without a sandbox', async () => {
  const bad = await attempts(PATHDENY, [
    "sed -f - pub.txt <<< '1r priv/secret.txt'",
    "printf '1r pri%s/secret.txt\\n' v > s.sed; sed -f s.sed pub.txt",
    "printf '1r pri%s/secret.txt\\n' v > s.sed; sed -nf s.sed -e p pub.txt",
    "printf '1r pri%s/secret.txt\\n' v > s.sed; sed --file=s.sed pub.txt",
    "printf 'BEGIN{while((getline l < \"pri%s/secret.txt\")>0) print l}' v > a.awk; awk -f a.awk",
  ], { controls: ["sed -n '1p' pub.txt", "awk '{print $1}' pub.txt"] });
  assert.deepEqual(bad, []);
});

test('M3: dpkg-deb -x / -X / -R / --extract / --vextract unpack the package: refused under path rules', { skip: !has('dpkg-deb') }, async () => {
  const setup = (dir: string) => {
    const pkg = path.join(dir, 'pkg');
    mkdirSync(path.join(pkg, 'DEBIAN'), { recursive: true });
    mkdirSync(path.join(pkg, 'priv'), { recursive: true });
    writeFileSync(path.join(pkg, 'DEBIAN/control'), 'Package: p\nVersion: 1\nArchitecture: all\nMaintainer: t <t@t>\nDescription: t\n');
    writeFileSync(path.join(pkg, 'priv/secret.txt'), 'OVERWRITTEN\n');
    execFileSync('dpkg-deb', ['--root-owner-group', '-Zgzip', '--build', pkg, path.join(dir, 'p.deb')], { stdio: 'pipe' });
    rmSync(pkg, { recursive: true, force: true });
  };
  const broken = (dir: string) => readFileSync(path.join(dir, 'priv/secret.txt'), 'utf8').includes('OVERWRITTEN');
  const bad = await attempts(PATHDENY, [
    'dpkg-deb -x p.deb .', 'dpkg-deb -X p.deb .', 'dpkg-deb --extract p.deb .', 'dpkg-deb --vextract p.deb .', 'dpkg-deb -R p.deb . && cat priv/secret.txt',
  ], { setup, broken, controls: ['dpkg-deb -c p.deb'] });
  assert.deepEqual(bad, []);
});

test('M4–M6: ed\'s shell commands, zip --unzip-command and wget --use-askpass prefixes run programs: asked past a deny-list', async () => {
  const lines = [
    "ed -s pub.txt <<< '!touch P'",
    "ed -s <<< 'w !touch P'",
    "printf '%s\\n' 'r !touch P' q | ed -s",
    "zip -q -T --unzip-c='touch P' z.zip pub.txt",
    "zip -q -T --unzip-comm='touch P' z.zip pub.txt",
    "zip -q -T --unzip-com 'touch P' z.zip pub.txt",
  ];
  if (has('wget')) lines.push(
    'wget -q -t1 --use-askpass=@DIR@/tp --user=x http://127.0.0.1:1/x',
    'wget -q -t1 --use-ask=@DIR@/tp --user=x http://127.0.0.1:1/x',
    'wget -q -t1 -e use_askpass=@DIR@/tp --user=x http://127.0.0.1:1/x',
    "printf 'use_askpass = @DIR@/tp\\n' > rc; WGETRC=rc wget -q -t1 --user=x http://127.0.0.1:1/x",
    "printf 'use_askpass = @DIR@/tp\\n' > rc; wget -q -t1 --config=rc --user=x http://127.0.0.1:1/x",
  );
  assert.deepEqual(await attempts(DENYONLY, lines, { controls: ['zip -q z.zip pub.txt', 'ed --version'] }), []);
});

test('regressions: the secrets list does not refuse .env given as a pattern or a name (grep, find -name, git status, --exclude, zip -x)', async () => {
  await attempts(NONE, [], { git: true, controls: [
    'grep -n .env .gitignore', 'git ls-files | grep -c .gitignore', 'git ls-files | grep -v .env', 'rg -n .env .gitignore || true', 'find . -name .env',
    'git status --short .env', 'git check-ignore -v .env', 'tar --exclude .env -cf x.tar pub.txt', 'zip -q z.zip pub.txt -x .env',
    'grep -c --exclude .env one pub.txt', 'git grep -n one -- pub.txt',
  ] });
  // Still refused: the file itself.
  assert.deepEqual(await attempts(NONE, ['grep -n TOKEN .env', 'grep -e x .env .gitignore', 'git status -v .env; cat .env', 'find .env -newer .env -exec cat {} +', 'grep -m 1 T .env']), []);
});

test('regressions: HEAD~N is a revision, not a tilde expansion, under path rules (a ~ after = or : still expands)', async () => {
  await attempts(PATHDENY, [], { git: true, controls: ['git log --oneline HEAD~1..HEAD -- pub.txt', 'git diff HEAD~1 -- pub.txt', 'git reset --soft HEAD~1', 'a=~/x; echo "$a"'] });
  // bash expands `~` at the start of a word and after `=` / `:` in an assignment (or a word that looks like one).
  const parser = await loadShellParser();
  const words = (line: string) => analyzeCommand(parser, line).parts.flatMap((p) => p.words).map((w) => `${w.text}:${w.literal}`);
  assert.deepEqual(words('echo HEAD~1 a~/b x:~'), ['echo:true', 'HEAD~1:true', 'a~/b:true', 'x:~:false']);
  assert.deepEqual(words('echo ~/x b=~/y c=d:~/z'), ['echo:true', '~/x:false', 'b=~/y:false', 'c=d:~/z:false']);
  assert.deepEqual(words('a=~/x'), ['a=~/x:false']);
  assert.deepEqual(words('p=a:~/y'), ['p=a:~/y:false']);
});

test('L1: without path rules, "$HOME/…" and a glob in the last segment are judged by the secrets list (what they name now)', async () => {
  const { dir: home, cleanup } = tempDir('tg-r7home-');
  mkdirSync(path.join(home, '.ssh'), { recursive: true });
  writeFileSync(path.join(home, '.ssh/id_rsa'), `${SECRET}\n`);
  const saved = process.env.HOME;
  process.env.HOME = home;
  try {
    const bad = await attempts(NONE, ['rev "$HOME/.ssh/id_rsa"', 'rev "${HOME}/.ssh/id_rsa"', 'cat "$HOME/.ssh/id_rsa"', 'rev .e*', 'rev .en[v]', 'rev ./.e?v', 'shopt -s dotglob; rev *', 'shopt -s nocaseglob; rev .E*'],
      { controls: ['rev p*.txt', 'wc -l *.txt', 'rev * 2>/dev/null || true', 'echo .e*', 'echo "$HOME/.ssh/id_rsa"'] });
    assert.deepEqual(bad, []);
  } finally { process.env.HOME = saved; cleanup(); }
});

test('HOME set for a nested shell is refused: its ~ would not be the HOME toolgate judges (path rules)', async () => {
  const bad = await attempts(PATHDENY, ["HOME=/ bash -c 'rev ~@DIR@/priv/secret.txt'", "env HOME=/ bash -c 'rev ~@DIR@/priv/secret.txt'"], { controls: ["bash -c 'echo ~ >/dev/null'"] });
  assert.deepEqual(bad, []);
});
