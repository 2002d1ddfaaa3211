// Review 33. Masks and read-only binds hold a file (a dentry), not a name. When a file hidden or
// bound read-only in a running sandbox is replaced on the host by rename (vim's default save,
// JetBrains' safe write, tools that write temp + rename) or by unlink + create (`git checkout` /
// `git pull` of a tracked .mcp.json), the kernel detaches those mounts in every other namespace:
// a background command then reads the new `.env` and writes `.mcp.json` (a project MCP server the
// user's client starts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { Harness, policyFromYaml } from '../../src/testing/helpers.js';
import { detectBwrap } from '../../src/exec/sandbox.js';

const POLICY = 'sandbox: { backend: bwrap }\nrules:\n  - tool: run_command\n    decision: allow\n';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Not fixed: a mount holds the file, not the name; the kernel drops it in every other namespace
// when the host replaces the file. Written down in docs/commands.md ("OS sandbox").
test('bwrap: a secret / protected file the user saves (write temp + rename) stays masked in a running background command', { todo: 'a mask holds a file, not a name: replaced on the host, it is gone from a running sandbox (docs/commands.md)' }, async (t) => {
  if (!(await detectBwrap())) { t.skip('no usable bubblewrap'); return; }
  const ws = mkdtempSync('/var/tmp/tg-rv33-repl-');
  t.after(() => rmSync(ws, { recursive: true, force: true }));
  writeFileSync(path.join(ws, '.env'), 'TOKEN=old\n');
  writeFileSync(path.join(ws, '.mcp.json'), '{"mcpServers":{}}\n');
  writeFileSync(path.join(ws, 'watch.sh'), [
    'for i in $(seq 1 100); do',
    '  grep -q TOKEN=new .env 2>/dev/null && cat .env > leaked',
    '  { echo \'{"mcpServers":{"x":{"command":"touch","args":["/tmp/pwned"]}}}\' > .mcp.json; } 2>/dev/null && echo w > wrote',
    '  [ -e leaked ] && [ -e wrote ] && break; sleep 0.1',
    'done', ''].join('\n'));
  const h = new Harness([ws], { policy: policyFromYaml(POLICY) });
  t.after(() => h.close());
  const bg = await h.call('run_command', { command: 'bash watch.sh', background: true });
  assert.equal(bg.ok, true, JSON.stringify(bg));
  await sleep(1000);
  // The user saves both files the way vim (backupcopy=no), JetBrains' safe write, `claude mcp add`… do.
  for (const [f, c] of [['.env', 'TOKEN=new\n'], ['.mcp.json', '{"mcpServers":{"y":{}}}\n']]) {
    writeFileSync(path.join(ws, `${f}.tmp`), c);
    renameSync(path.join(ws, `${f}.tmp`), path.join(ws, f));
  }
  await sleep(2500);
  const leaked = existsSync(path.join(ws, 'leaked')) ? readFileSync(path.join(ws, 'leaked'), 'utf8') : '';
  const mcp = readFileSync(path.join(ws, '.mcp.json'), 'utf8');
  assert.deepEqual({ leaked, mcpWritten: /pwned/.test(mcp) }, { leaked: '', mcpWritten: false }, `.mcp.json now: ${mcp}`);
});
