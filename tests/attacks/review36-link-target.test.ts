// Review 36. linkOutOfProtected (review 35) refuses a link in a protected folder only when its
// *realpath* lies in a root, and within 2000 entries. What it does not see, a sandboxed command
// writes and the host then reads as the protected file (VS Code's tasks, a nested repository's
// hooks, Claude's instructions):
//  - a link that leads into a root but dangles (realpath fails: "leads nowhere writable"): the
//    command makes the target — also when the agent first deleted an existing target with delete_file;
//  - a link that leads out of every root *through* a link in a root (`shared -> /elsewhere`): the
//    command replaces `shared` by a folder of its own;
//  - a link past the first 2000 entries (HOME in the workspace: ~/.claude/projects holds thousands
//    of transcripts), depending only on the order readdir returns names;
//  - a hard link (lstat shows a plain file).
// And the file tools: write_file writes the target of .vscode/tasks.json, which toolgate protects.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Harness, policyFromYaml } from '../../src/testing/helpers.js';
import { detectBwrap } from '../../src/exec/sandbox.js';

const POLICY = 'sandbox: { backend: bwrap }\nrules:\n  - tool: run_command\n    decision: allow\n  - tool: delete_file\n    decision: allow\n  - tool: write_file\n    decision: allow\n';
const read = (p: string) => { try { return readFileSync(p, 'utf8'); } catch { return '(missing)'; } };

interface Case { name: string; layout(ws: string, out: string): void; before?(h: Harness): Promise<unknown>; script: string; protectedPath: string }
const cases: Case[] = [
  {
    name: 'a dangling link: .vscode/tasks.json -> ../shared/tasks.json, shared/ not made yet',
    layout: (ws) => { mkdirSync(`${ws}/.vscode`); symlinkSync('../shared/tasks.json', `${ws}/.vscode/tasks.json`); },
    script: 'mkdir -p shared && echo planted > shared/tasks.json', protectedPath: '.vscode/tasks.json',
  },
  {
    name: 'a dangling link: a nested repository\'s .git/hooks -> ../githooks, not checked out',
    layout: (ws) => { mkdirSync(`${ws}/sub/.git`, { recursive: true }); writeFileSync(`${ws}/sub/.git/HEAD`, 'ref: refs/heads/main\n'); symlinkSync('../githooks', `${ws}/sub/.git/hooks`); },
    script: 'mkdir -p sub/githooks && echo planted > sub/githooks/pre-commit', protectedPath: 'sub/.git/hooks/pre-commit',
  },
  {
    name: 'an existing target, refused; the agent deletes it with delete_file, then a command makes it',
    layout: (ws) => { mkdirSync(`${ws}/.vscode`); mkdirSync(`${ws}/shared`); writeFileSync(`${ws}/shared/tasks.json`, 'original\n'); symlinkSync('../shared/tasks.json', `${ws}/.vscode/tasks.json`); },
    before: (h) => h.call('delete_file', { path: 'shared/tasks.json' }),
    script: 'echo planted > shared/tasks.json', protectedPath: '.vscode/tasks.json',
  },
  {
    name: 'out of every root through a link in a root: .vscode/tasks.json -> ../shared/tasks.json, shared -> /elsewhere',
    layout: (ws, out) => { mkdirSync(`${ws}/.vscode`); writeFileSync(`${out}/tasks.json`, 'original\n'); symlinkSync(out, `${ws}/shared`); symlinkSync('../shared/tasks.json', `${ws}/.vscode/tasks.json`); },
    script: 'rm shared && mkdir shared && echo planted > shared/tasks.json', protectedPath: '.vscode/tasks.json',
  },
  {
    name: 'past 2000 entries: .claude/projects with 2100 transcripts (HOME in the workspace), a link to dotfiles',
    layout: (ws) => {
      mkdirSync(`${ws}/.claude/projects/p`, { recursive: true }); mkdirSync(`${ws}/dotfiles`);
      for (let i = 0; i < 2100; i++) writeFileSync(`${ws}/.claude/projects/p/${i}.jsonl`, '');
      writeFileSync(`${ws}/dotfiles/claude.md`, 'original\n');
      // The walk pops names in reverse readdir order: a name readdir lists before `projects` is looked at after it.
      for (const n of ['CLAUDE.md', 'commands', 'agents', 'hooks', 'settings.json', 'skills', 'rules', 'output-styles', 'keybindings.json']) {
        symlinkSync('../dotfiles/claude.md', `${ws}/.claude/${n}`);
        const names = readdirSync(`${ws}/.claude`);
        if (names.indexOf(n) < names.indexOf('projects')) { symlinkSync(n, `${ws}/.which`); return; }
        rmSync(`${ws}/.claude/${n}`);
      }
      throw new Error('no name readdir lists before projects here');
    },
    script: 'echo planted > dotfiles/claude.md', protectedPath: '.claude/$WHICH',
  },
  {
    name: 'a hard link: .vscode/tasks.json and tasks-shared.json are one file',
    layout: (ws) => { mkdirSync(`${ws}/.vscode`); writeFileSync(`${ws}/.vscode/tasks.json`, 'original\n'); linkSync(`${ws}/.vscode/tasks.json`, `${ws}/tasks-shared.json`); },
    script: 'echo planted > tasks-shared.json', protectedPath: '.vscode/tasks.json',
  },
];

for (const c of cases) {
  test(`bwrap: a command cannot write a protected file through ${c.name}`, async (t) => {
    if (!(await detectBwrap())) { t.skip('no usable bubblewrap'); return; }
    const ws = realpathSync(mkdtempSync('/var/tmp/tg-rv36-'));
    const out = realpathSync(mkdtempSync('/var/tmp/tg-rv36-out-'));
    t.after(() => { rmSync(ws, { recursive: true, force: true }); rmSync(out, { recursive: true, force: true }); });
    c.layout(ws, out);
    const which = c.protectedPath.includes('$WHICH') ? (await import('node:fs')).readlinkSync(`${ws}/.which`) : '';
    const target = path.join(ws, c.protectedPath.replace('$WHICH', which));
    writeFileSync(path.join(ws, 'x.sh'), `${c.script}; echo rc=$?\n`);
    const h = new Harness([ws], { policy: policyFromYaml(POLICY) });
    t.after(() => h.close());
    const pre = c.before ? await c.before(h) : undefined;
    const env = await h.call('run_command', { command: 'bash x.sh' });
    if (env.error) { assert.equal(env.error.code, 'ToolNotAllowed', JSON.stringify(env.error)); return; }
    assert.notEqual(read(target), 'planted\n',
      `a sandboxed command wrote ${path.relative(ws, target)}: ${JSON.stringify(env.data)} (before: ${JSON.stringify(pre ?? null).slice(0, 120)})`);
  });
}

// Not fixed this round: the file tools judge the path as written and its realpath, not "is this the
// target of a protected link" (README, "Choices"); commands refuse such a layout (the cases above).
test('write_file cannot write a protected file through the target of its link (.vscode/tasks.json -> ../shared/tasks.json)', { todo: 'the file tools do not know which files protected links lead to' }, async (t) => {
  const ws = realpathSync(mkdtempSync('/var/tmp/tg-rv36-'));
  t.after(() => rmSync(ws, { recursive: true, force: true }));
  mkdirSync(`${ws}/.vscode`); mkdirSync(`${ws}/shared`);
  writeFileSync(`${ws}/shared/tasks.json`, 'original\n');
  symlinkSync('../shared/tasks.json', `${ws}/.vscode/tasks.json`);
  const h = new Harness([ws], { policy: policyFromYaml(POLICY) });
  t.after(() => h.close());
  const direct = await h.call('write_file', { path: '.vscode/tasks.json', content: 'planted\n' });
  assert.ok(direct.error, 'write_file .vscode/tasks.json is refused (protected)');
  await h.call('read_file', { path: 'shared/tasks.json' });
  const w = await h.call('write_file', { path: 'shared/tasks.json', content: 'planted\n' });
  assert.notEqual(read(`${ws}/.vscode/tasks.json`), 'planted\n', `write_file wrote the protected .vscode/tasks.json through its target: ${JSON.stringify(w.error ?? 'ok')}`);
});
