// Review 35. linkOnTheWay (review 34) walks the way *to* each protected path it is given — the
// root's own names (.vscode, .git/hooks, .git/config…), the literal paths.protect entries and the
// mask index's top-most read-only paths (sub/.git, sub/.vscode) — and stops there. A link *below*
// such a path is not looked at: bwrap binds the protected folder read-only, which holds the link
// itself, but the file or folder it leads to elsewhere in the workspace stays writable. A command
// writes .vscode/tasks.json (a link to a shared file: VS Code runs its tasks), or the hooks and
// config of a nested repository (sub/.git/hooks a link to ../githooks, git-new-workdir's
// sub/.git/config): the host's next `git commit` / `git status` there runs the command's code.
// The root's own .git/hooks as a link is refused (it is on the list); the same link one repository
// down is not, though docs/commands.md says `.git/hooks` of a nested repository is read-only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Harness, policyFromYaml } from '../../src/testing/helpers.js';
import { detectBwrap } from '../../src/exec/sandbox.js';

const POLICY = 'sandbox: { backend: bwrap }\nrules:\n  - tool: run_command\n    decision: allow\n';

const cases = [
  { name: '.vscode/tasks.json -> ../shared/tasks.json', dirs: ['.vscode', 'shared'], target: 'shared/tasks.json', link: '.vscode/tasks.json', to: '../shared/tasks.json', write: '.vscode/tasks.json' },
  { name: 'sub/.git/hooks -> ../githooks (nested repository)', dirs: ['sub/.git', 'sub/githooks'], target: 'sub/githooks/pre-commit', link: 'sub/.git/hooks', to: '../githooks', write: 'sub/.git/hooks/pre-commit' },
  { name: 'sub/.git/config -> ../../shared/gitconfig (git-new-workdir)', dirs: ['sub/.git', 'shared'], target: 'shared/gitconfig', link: 'sub/.git/config', to: '../../shared/gitconfig', write: 'sub/.git/config' },
];

for (const c of cases) {
  test(`bwrap: a command cannot write a protected path that is a link below a protected folder (${c.name})`, async (t) => {
    if (!(await detectBwrap())) { t.skip('no usable bubblewrap'); return; }
    const ws = realpathSync(mkdtempSync('/var/tmp/tg-rv35-below-'));
    t.after(() => rmSync(ws, { recursive: true, force: true }));
    for (const d of c.dirs) mkdirSync(path.join(ws, d), { recursive: true });
    writeFileSync(path.join(ws, c.target), 'original\n');
    if (c.dirs.includes('sub/.git')) writeFileSync(path.join(ws, 'sub/.git/HEAD'), 'ref: refs/heads/main\n');
    symlinkSync(c.to, path.join(ws, c.link));
    // A script: the parser refuses a redirect that names the protected path; inside the sandbox nothing looks at names.
    writeFileSync(path.join(ws, 'x.sh'), `echo planted > ${c.write}; echo rc=$?\n`);
    const h = new Harness([ws], { policy: policyFromYaml(POLICY) });
    t.after(() => h.close());
    const env = await h.call('run_command', { command: 'bash x.sh' });
    if (env.error) { assert.equal(env.error.code, 'ToolNotAllowed', JSON.stringify(env.error)); return; }
    assert.equal(readFileSync(path.join(ws, c.target), 'utf8'), 'original\n',
      `a sandboxed command wrote ${c.write} through the link to ${c.target}: ${JSON.stringify(env.data)}`);
  });
}
