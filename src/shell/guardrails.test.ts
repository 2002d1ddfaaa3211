import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyzeCommand } from './analyze.js';
import { DEFAULT_DENY_PROGRAMS, DEFAULT_INTERACTIVE, DEFAULT_REPL } from './guard-defaults.js';
import { gitCall } from './git.js';
import { guardParts, type GuardContext } from './guardrails.js';
import { loadShellParser } from './parser.js';

const guards = { prefer_tools: true, deny_programs: DEFAULT_DENY_PROGRAMS, interactive: DEFAULT_INTERACTIVE, repl: DEFAULT_REPL };

async function why(command: string, over: Partial<GuardContext> = {}): Promise<string | null> {
  const a = analyzeCommand(await loadShellParser(), command);
  const r = guardParts(a, { guards, gitWrite: true, profile: 'full', stdin: false, command, ...over });
  return r.find((x) => x !== null) ?? null;
}

test('guardrails: refused, with the reason', async () => {
  const rows: Array<[string, RegExp, Partial<GuardContext>?]> = [
    ['vim notes.txt', /interactive program.*no terminal/],
    ['nano a', /interactive/],
    ['emacs', /interactive/],
    ['less README.md', /interactive/],
    ['top', /interactive/],
    ['htop', /interactive/],
    ['man ls', /interactive/],
    ['ssh host', /interactive login/],
    ['ssh -p 22 host', /interactive login/],
    ['python3', /interactive prompt/],
    ['python', /interactive prompt/],
    ['node', /interactive prompt/],
    ['irb', /interactive prompt/],
    ['psql mydb', /interactive prompt/],
    ['mysql -u root', /interactive prompt/],
    ['sudo ls', /deny_programs/],
    ['su root', /deny_programs/],
    ['doas ls', /deny_programs/],
    ['mkfs.ext4 /dev/sda1', /deny_programs/],
    ['fdisk -l', /deny_programs/],
    ['dd if=/dev/zero of=/dev/sda', /device/],
    ['shutdown -h now', /deny_programs/],
    ['reboot', /deny_programs/],
    ['halt', /deny_programs/],
    ['poweroff', /deny_programs/],
    ['echo ok && sudo rm -rf /', /deny_programs/],
    ['ls -la', /list_dir/],
    ['cat README.md', /read_file/],
    ['head -5 a.txt', /read_file/],
    ['tail -n 20 log.txt', /read_file/],
    ['grep -rn foo src', /grep tool/],
    ['rg foo', /grep tool/],
    ['find . -name "*.ts"', /glob/],
    ['git push origin main', /git\.write/, { gitWrite: false, profile: 'reviewer' }],
    ['git commit -m x', /git\.write/, { gitWrite: false }],
    ['git -C sub config core.hooksPath x', /git\.write/, { gitWrite: false }],
    ['git branch -D old', /git\.write/, { gitWrite: false }],
    ['git stash', /git\.write/, { gitWrite: false }],
    ['git remote add o url', /git\.write/, { gitWrite: false }],
    ['git co main', /git\.write/, { gitWrite: false }],
  ];
  for (const [cmd, re, over] of rows) assert.match(String(await why(cmd, over)), re, cmd);
});

test('guardrails: allowed (controls)', async () => {
  const rows: Array<[string, Partial<GuardContext>?]> = [
    ['ls -la | grep foo'], ['cat a.txt | wc -l'], ['grep foo a.txt | head -3'], ['find . -name x | xargs wc -l'],
    ['cat a > b'], ['python3 script.py'], ['python3 -c "print(1)"'], ['node --version'], ['node -e 1'], ['python3 -m pytest'],
    ['python3', { stdin: true }], ['echo "print(1)" | python3'], ['ssh host uptime'], ['ssh -p 22 host ls /'],
    ['dd if=a of=b'], ['npm test'], ['echo hi'],
    ['git status', { gitWrite: false }], ['git log --oneline', { gitWrite: false }], ['git diff', { gitWrite: false }],
    ['git --version', { gitWrite: false }], ['git branch', { gitWrite: false }], ['git branch -a', { gitWrite: false }],
    ['git tag', { gitWrite: false }], ['git config --get user.name', { gitWrite: false }], ['git stash list', { gitWrite: false }],
    ['git remote -v', { gitWrite: false }], ['git push', { gitWrite: true }],
    ['cat README.md', { guards: { ...guards, prefer_tools: false } }],
    ['sudo ls', { guards: { ...guards, deny_programs: [] } }],
    ['vim x', { guards: { ...guards, interactive: [] } }],
  ];
  for (const [cmd, over] of rows) assert.equal(await why(cmd, over), null, cmd);
});

test('git: write sub-commands carry git.write; reads do not', () => {
  const w = (s: string) => s.split(' ').map((text) => ({ text, literal: true }));
  for (const c of ['git commit -m x', 'git push', 'git tag v1', 'git merge x', 'git rebase main', 'git reset --hard', 'git checkout x', 'git switch x',
    'git config a b', 'git branch -d x', 'git stash', 'git cherry-pick a', 'git revert a', 'git clean -fd', 'git rm a', 'git mv a b', 'git am p', 'git apply p',
    'git pull', 'git fetch', 'git remote add o u', 'git add .', 'git init', 'git clone u', 'git -C sub push', 'git --no-pager commit']) {
    assert.equal(gitCall(w(c)).writes, true, c);
  }
  for (const c of ['git status', 'git log', 'git diff', 'git show HEAD', 'git blame a', 'git --version', 'git branch', 'git branch --list', 'git tag -l',
    'git config --get a', 'git config -l', 'git stash list', 'git remote -v', 'git ls-files', 'git rev-parse HEAD', 'git -C sub status']) {
    assert.equal(gitCall(w(c)).writes, false, c);
  }
  assert.deepEqual(gitCall(w('git -C sub config a b')).dirs.map((d) => d.text), ['sub']);
});
