import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { detectBwrap } from '../../src/exec/sandbox.js';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';

// Protected paths that do not exist (.bashrc, .vscode…) get a read-only empty stand-in inside
// the sandbox; bwrap needs a mount point for it on the host. These attacks try to get a
// protected path created through the window when one sandbox's stand-in goes away while
// another sandbox still relies on it.
const hasBwrap = await detectBwrap();
const allow = () => policyFromYaml('sandbox: { backend: bwrap }\nrules:\n  - tool: "*"\n    decision: allow\n');
const until = async (cond: () => boolean, ms: number) => {
  for (const end = Date.now() + ms; Date.now() < end && !cond();) await new Promise((r) => setTimeout(r, 25));
  return cond();
};

test('a sandbox started while another holds the stand-ins keeps them after the first one ends', { skip: !hasBwrap && 'needs bubblewrap (detectBwrap found none, or TOOLGATE_SANDBOX=none)' }, async (t) => {
  const { dir, cleanup } = tempDir('tg-standin-');
  const h = new Harness([dir], { policy: allow() });
  t.after(async () => { await h.session.dispose(); h.close(); cleanup(); });
  // A makes the stand-ins; B starts while A runs and writes through names built at run time after A has ended.
  const a = await h.call('run_command', { command: 'sleep 0.6', background: true });
  assert.equal(a.ok, true, JSON.stringify(a.error));
  // Long enough for the mask index to see A's stand-ins as protected paths of the workspace.
  await new Promise((r) => setTimeout(r, 250));
  const b = await h.call('run_command', { command: 'sleep 1.8; f=.bash; g=.vs; echo evil > ${f}rc; mkdir -p ${g}code; echo evil > ${g}code/tasks.json; echo done', background: true });
  assert.equal(b.ok, true, JSON.stringify(b.error));
  const id = (b.data as { id: string }).id;
  let out = '';
  assert.ok(await until(() => { void h.call('process_output', { id }).then((r) => { out = JSON.stringify(r.data); }); return /"exit_code":\d/.test(out); }, 8000), `B did not finish: ${out}`);
  const bashrc = existsSync(`${dir}/.bashrc`) ? readFileSync(`${dir}/.bashrc`, 'utf8') : '';
  assert.equal(bashrc, "", `.bashrc was written by the second sandbox: ${out}`);
  assert.equal(existsSync(`${dir}/.vscode/tasks.json`), false, '.vscode/tasks.json was created by the second sandbox');
});

test('stand-ins are removed once no sandbox needs them, and a later command is still refused', { skip: !hasBwrap && 'needs bubblewrap (detectBwrap found none, or TOOLGATE_SANDBOX=none)' }, async (t) => {
  const { dir, cleanup } = tempDir('tg-standin-');
  const h = new Harness([dir], { policy: allow() });
  t.after(async () => { await h.session.dispose(); h.close(); cleanup(); });
  for (let i = 0; i < 3; i++) {
    const r = await h.call('run_command', { command: 'g=.vs; mkdir -p ${g}code && echo x > ${g}code/tasks.json' });
    assert.equal(r.ok, false, `run ${i}: the stand-in let the command create .vscode/tasks.json`);
    assert.equal(existsSync(`${dir}/.vscode/tasks.json`), false);
  }
  const ok = await h.call('run_command', { command: 'echo hi' });
  assert.equal(ok.ok, true, JSON.stringify(ok.error));
  // Left for a short idle time (so back-to-back commands do not pay for unmounting them), then removed.
  assert.ok(await until(() => !existsSync(`${dir}/.vscode`) && !existsSync(`${dir}/.bashrc`) && !existsSync(`${dir}/.git`), 5000), 'the stand-ins were not cleaned up');
});
