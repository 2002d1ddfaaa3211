// Review (helper-42): the grammar (tree-sitter-bash) ends a here-document on lines bash does not take
// for its delimiter ("EOF " with a trailing blank, "EOF\r", " EOF", spaces before it under <<-,
// a delimiter glued to the line above by a backslash-newline in an unquoted body). What follows
// is judged as commands, while bash reads it as body text and runs its $(…): under a policy that
// allows only `cat` and `echo`, any command runs. Across process_write calls the first call looks
// complete (its heredoc "ends") and the next one's "commands" are body text.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';

const allowlist = () => policyFromYaml('mode: ci\nsandbox: { backend: none }\ncommands: { prefer_tools: false }\nrules:\n  - { tool: run_command, command: ["cat", "echo", "bash"], decision: allow }\n  - { tool: process_write, decision: allow }\n');

test('a here-document the grammar ends early does not hide commands (run_command, cat/echo allow-list)', async (t) => {
  process.env.TOOLGATE_STARTER = 'off';
  const { dir, cleanup } = tempDir('tg-r42-hd-');
  const h = new Harness([dir], { policy: allowlist() });
  t.after(() => { h.close(); cleanup(); delete process.env.TOOLGATE_STARTER; });
  // Control: the same $(…) in single quotes on its own is text, and `touch` alone is refused.
  assert.equal((await h.call('run_command', { command: 'touch CONTROL' })).ok, false);
  assert.equal((await h.call('run_command', { command: "echo '$(touch CONTROL)'" })).ok, true);
  const lines = [
    "cat <<EOF\nx\nEOF \necho '$(touch P1)'\n",                 // trailing blank after the delimiter
    "cat <<EOF\nx\nEOF\r\necho '$(touch P2)'\n",                // CR after the delimiter
    "cat <<-EOF\nx\n  EOF\necho '$(touch P3)'\n",               // <<- strips tabs only, not spaces
    "cat <<EOF\nx\\\nEOF\necho '$(touch P4)'\n",                // backslash-newline joins "x" and "EOF"
    "cat <<echo\nx\necho \necho '$(touch P5)'\necho\n",        // closed for bash by a line the grammar takes for `echo`
  ];
  const got: string[] = [];
  for (const command of lines) {
    const r = await h.call('run_command', { command });
    got.push(r.ok ? 'ran' : r.error!.code);
  }
  const made = ['CONTROL', 'P1', 'P2', 'P3', 'P4', 'P5'].filter((f) => existsSync(path.join(dir, f)));
  assert.deepEqual(made, [], `commands hidden in here-documents ran (${got.join(', ')})`);
});

test('a here-document left open by one process_write call does not turn the next call into body text', async (t) => {
  process.env.TOOLGATE_STARTER = 'off';
  const { dir, cleanup } = tempDir('tg-r42-hd-');
  mkdirSync(path.join(dir, 'priv'));
  writeFileSync(path.join(dir, 'priv/x'), 'PRIV_MARK\n');
  const h = new Harness([dir], { policy: policyFromYaml('mode: ci\nsandbox: { backend: none }\ncommands: { prefer_tools: false }\nrules:\n  - { tool: "*", path: "priv/**", decision: deny }\n  - { tool: "*", decision: allow }\n') });
  let id = '';
  t.after(async () => { if (id) await h.call('process_kill', { id }); await h.session.dispose(); h.close(); cleanup(); delete process.env.TOOLGATE_STARTER; });
  id = ((await h.call('run_command', { command: 'bash', background: true })).data as { id: string }).id;
  assert.equal((await h.call('process_write', { id, input: 'cat priv/x\n' })).error?.code, 'ToolNotAllowed', 'control');
  const a = await h.call('process_write', { id, input: 'cat <<EOF\nx\nEOF \n' });
  const b = a.ok ? await h.call('process_write', { id, input: "echo '$(cat priv/x)'\nEOF\n" }) : a;
  await new Promise((r) => setTimeout(r, 500));
  const out = ((await h.call('process_output', { id })).data as { output: string }).output;
  assert.doesNotMatch(out, /PRIV_MARK/, `the denied file was read (${a.ok ? 'ok' : a.error?.code}/${b.ok ? 'ok' : b.error?.code})`);
});
