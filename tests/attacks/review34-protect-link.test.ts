// Review 34. A protected path reached through a link inside a root: bwrapArgs checks it with
// stat/existsSync (they follow the link) and bwrap mounts the stand-in (or the read-only bind)
// where the link leads; ancestorsToPin stops at the link (lstat) and the pin check does not look
// at stand-ins. The link itself stays an ordinary, writable entry of the workspace: the command
// removes it, makes the protected path as real folders and writes into it on the host.
//  - paths.protect: [.github/workflows] with .github a link to docs/gh (docs/gh/workflows missing);
//  - .vscode (protected by default) a dangling relative link.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Harness, policyFromYaml } from '../../src/testing/helpers.js';
import { detectBwrap } from '../../src/exec/sandbox.js';

const POLICY = 'sandbox: { backend: bwrap }\npaths:\n  protect: [".github/workflows"]\nrules:\n  - tool: run_command\n    decision: allow\n';

const cases = [
  { name: '.github -> docs/gh, protect .github/workflows', link: '.github', target: 'docs/gh', made: 'docs/gh', write: '.github/workflows/ci.yml' },
  { name: '.vscode -> a missing folder (default protect)', link: '.vscode', target: 'nowhere', made: null, write: '.vscode/tasks.json' },
];

for (const c of cases) {
  test(`bwrap: a command cannot make a protected path by replacing a link on its way (${c.name})`, async (t) => {
    if (!(await detectBwrap())) { t.skip('no usable bubblewrap'); return; }
    const ws = realpathSync(mkdtempSync('/var/tmp/tg-rv34-plink-'));
    t.after(() => rmSync(ws, { recursive: true, force: true }));
    if (c.made) mkdirSync(path.join(ws, c.made), { recursive: true });
    symlinkSync(c.target, path.join(ws, c.link));
    writeFileSync(path.join(ws, 'x.sh'), `rm -f ${c.link} && mkdir -p ${path.dirname(c.write)} && echo planted > ${c.write}; echo rc=$?\n`);
    const h = new Harness([ws], { policy: policyFromYaml(POLICY) });
    t.after(() => h.close());
    const env = await h.call('run_command', { command: 'bash x.sh' });
    // Refused before anything runs (no mount can hold the link), saying which link and what to do.
    assert.equal(env.error?.code, 'ToolNotAllowed', JSON.stringify(env));
    assert.match(env.error!.message, new RegExp(`^${c.link.replace('.', '\\.')} is a symbolic link.*Replace the link`));
    const made = existsSync(path.join(ws, c.write)) && !lstatSync(path.join(ws, c.link)).isSymbolicLink();
    assert.equal(made, false, `a sandboxed command created the protected ${c.write}: ${JSON.stringify(env.data)}`);
  });
}
