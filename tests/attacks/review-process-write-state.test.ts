// Review (helper-42): process_write judges each call's text on its own, but a shell carries state from one
// call to the next that changes what the next text runs (history expansion and aliases, on by
// default in `bash -i`; `read` taking the next call as data), and a shell reached through a
// launcher toolgate does not know (taskset, flock, setpriv, "$BASH", a renamed bash) gets input
// that is not judged at all (no shell in p.programs: targets []).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';

async function leaks(start: string, writes: string[], control = false): Promise<{ leaked: boolean; codes: string }> {
  process.env.TOOLGATE_STARTER = 'off';
  const { dir, cleanup } = tempDir('tg-r42-pws-');
  mkdirSync(path.join(dir, 'priv'));
  writeFileSync(path.join(dir, 'priv/x'), 'PRIV_MARK\n');
  const h = new Harness([dir], { policy: policyFromYaml('mode: ci\nsandbox: { backend: none }\ncommands: { prefer_tools: false }\nrules:\n  - { tool: "*", path: "priv/**", decision: deny }\n  - { tool: "*", decision: allow }\n') });
  const codes: string[] = [];
  let id = '';
  try {
    const r = await h.call('run_command', { command: start, background: true });
    if (!r.ok) return { leaked: false, codes: `start ${r.error?.code}` };
    id = (r.data as { id: string }).id;
    // Control: the denied read as one line is refused.
    if (control) assert.equal((await h.call('process_write', { id, input: 'cat priv/x\n' })).error?.code, 'ToolNotAllowed', 'control');
    for (const input of writes) {
      const w = await h.call('process_write', { id, input });
      codes.push(w.ok ? 'ok' : w.error!.code);
      await new Promise((res) => setTimeout(res, 150));
    }
    await new Promise((res) => setTimeout(res, 400));
    const out = ((await h.call('process_output', { id })).data as { output: string }).output;
    return { leaked: /PRIV_MARK/.test(out), codes: codes.join('/') };
  } finally {
    if (id) await h.call('process_kill', { id });
    await h.session.dispose(); h.close(); cleanup(); delete process.env.TOOLGATE_STARTER;
  }
}

test('shell state from one process_write call does not run a denied read in the next', async () => {
  const cases: [string, string[]][] = [
    ['bash -i', ['echo cat priv/x\n', '!:1-2\n']],           // history expansion: the second line runs `cat priv/x`
    ['bash -i', ["alias y='cat priv/x'\n", 'y\n']],          // aliases expand in an interactive shell
    ['bash', ['read -r h c f; $c $f\n', '# cat priv/x\n']],  // the next call is read as data; judged, it is a comment
  ];
  const got: string[] = [];
  for (const [start, writes] of cases) {
    const r = await leaks(start, writes, true);
    if (r.leaked) got.push(`${start}: ${JSON.stringify(writes)} (${r.codes})`);
  }
  assert.deepEqual(got, [], 'denied file read through state carried between calls');
});

test('input to a shell started through a launcher toolgate does not know is judged as shell input', async () => {
  const starts = ['taskset -c 0 bash', 'flock /tmp/tg-r42-lock bash', 'setpriv bash', 'cat | $BASH', 'ln -sf /bin/bash b && ./b'];
  const got: string[] = [];
  for (const start of starts) {
    const r = await leaks(start, ['cat priv/x\n']);
    if (r.leaked) got.push(`${start} (${r.codes})`);
  }
  assert.deepEqual(got, [], 'process_write input to these shells was not judged');
});
