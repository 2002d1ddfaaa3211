// Review (helper-42): code for sh (dash here), and input to a background sh/dash, is judged with the bash
// grammar. dash has no $'…': `$'\' ; touch X ; # \''` is one quoted word to bash (judged: echo
// with text) and `$\`, `touch X`, a comment to dash. Under an allow-list of `echo`, any command runs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { existsSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';

const INNER = "echo $'\\' ; touch PWN_DASH ; # \\''";
const isDash = () => { try { return path.basename(readlinkSync('/bin/sh')) === 'dash'; } catch { return false; } };

test('sh -c code that dash reads differently from bash is not allowed by an echo rule', { skip: isDash() ? false : '/bin/sh is not dash' }, async (t) => {
  process.env.TOOLGATE_STARTER = 'off';
  const { dir, cleanup } = tempDir('tg-r42-dash-');
  const h = new Harness([dir], { policy: policyFromYaml('mode: ci\nsandbox: { backend: none }\nrules:\n  - { tool: run_command, command: ["echo"], decision: allow }\n') });
  t.after(() => { h.close(); cleanup(); delete process.env.TOOLGATE_STARTER; });
  const dq = (s: string) => `"${s.replace(/[\\$"`]/g, (c) => `\\${c}`)}"`;
  // Control: bash runs the same code as one echo.
  const b = await h.call('run_command', { command: `bash -c ${dq(INNER)}` });
  assert.equal(b.ok, true);
  assert.equal(existsSync(path.join(dir, 'PWN_DASH')), false);
  const r = await h.call('run_command', { command: `sh -c ${dq(INNER)}` });
  assert.equal(existsSync(path.join(dir, 'PWN_DASH')), false, `sh ran a command the bash grammar saw as text (${r.ok ? 'allowed' : r.error?.code})`);
});

test('input to dash started from a background bash is not judged with the bash grammar alone', { skip: isDash() ? false : '/bin/sh is not dash' }, async (t) => {
  process.env.TOOLGATE_STARTER = 'off';
  const { dir, cleanup } = tempDir('tg-r42-dash-');
  const h = new Harness([dir], { policy: policyFromYaml('mode: ci\nsandbox: { backend: none }\nrules:\n  - { tool: run_command, command: ["echo", "bash", "dash"], decision: allow }\n  - { tool: process_write, decision: allow }\n  - { tool: run_command, command: ["touch"], decision: deny }\n') });
  let id = '';
  t.after(async () => { if (id) await h.call('process_kill', { id }); await h.session.dispose(); h.close(); cleanup(); delete process.env.TOOLGATE_STARTER; });
  id = ((await h.call('run_command', { command: 'bash', background: true })).data as { id: string }).id;
  assert.equal((await h.call('process_write', { id, input: 'touch CONTROL\n' })).error?.code, 'ToolNotAllowed', 'control');
  const a = await h.call('process_write', { id, input: 'dash\n' });
  const b = await h.call('process_write', { id, input: `${INNER}\n` });
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(existsSync(path.join(dir, 'PWN_DASH')), false, `a denied touch ran in dash (${a.ok ? 'ok' : a.error?.code}/${b.ok ? 'ok' : b.error?.code})`);
});
