// Review (helper-43): a reader of commands toolgate does not know (ed, whose `!cmd` and `r !cmd` run sh) gets
// input unjudged when started directly, and when started from a background bash, its input is judged
// as bash: `r ! cat priv/x` is the program `r` with words, and ed runs `cat priv/x`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';

async function leaks(start: string, writes: string[]): Promise<boolean> {
  process.env.TOOLGATE_STARTER = 'off';
  const { dir, cleanup } = tempDir('tg-r43-ed-');
  mkdirSync(path.join(dir, 'priv'));
  writeFileSync(path.join(dir, 'priv/x'), 'PRIV_MARK\n');
  const h = new Harness([dir], { policy: policyFromYaml('mode: ci\nsandbox: { backend: none }\ncommands: { prefer_tools: false }\nrules:\n  - { tool: "*", path: "priv/**", decision: deny }\n  - { tool: "*", decision: allow }\n') });
  let id = '';
  try {
    assert.equal((await h.call('run_command', { command: 'cat priv/x' })).ok, false, 'control');
    const r = await h.call('run_command', { command: start, background: true });
    if (!r.ok) return false;
    id = (r.data as { id: string }).id;
    for (const input of writes) { await h.call('process_write', { id, input }); await new Promise((res) => setTimeout(res, 200)); }
    await new Promise((res) => setTimeout(res, 400));
    return /PRIV_MARK/.test(((await h.call('process_output', { id })).data as { output: string }).output);
  } finally { if (id) await h.call('process_kill', { id }); await h.session.dispose(); h.close(); cleanup(); delete process.env.TOOLGATE_STARTER; }
}

test('ed started directly: its ! commands are not written unjudged', { skip: !require_('ed') }, async () => {
  assert.equal(await leaks('ed', ['!cat priv/x\n']), false);
});
test('ed started from a background bash: its input is not judged as bash', { skip: !require_('ed') }, async () => {
  assert.equal(await leaks('bash', ['ed\n', 'r ! cat priv/x\n', ',p\n']), false);
});
function require_(p: string): boolean { return ['/usr/bin', '/bin'].some((d) => existsSync(`${d}/${p}`)); }
