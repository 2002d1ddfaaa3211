// Fault test: SIGKILL the built server in the middle of many concurrent writes, edits and
// patches. Every target must hold either its old or its new content — never a mix, never
// empty, never missing — and the audit file must still verify, before and after a restart.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { CLI, connectStdio, tempDir } from '../../src/testing/helpers.js';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const FILES = 30;
const LINES = 4000;

function oldContent(i: number): string {
  return Array.from({ length: LINES }, (_, k) => `file ${i} old line ${k} ${'x'.repeat(40)}`).join('\n') + '\n';
}

function patchFor(i: number): string {
  return [`--- a/f${i}.txt`, `+++ b/f${i}.txt`, '@@ -1,2 +1,2 @@', `-file ${i} old line 0 ${'x'.repeat(40)}`, `+file ${i} PATCHED line 0`, ` file ${i} old line 1 ${'x'.repeat(40)}`,
    `@@ -${LINES - 1},2 +${LINES - 1},2 @@`, ` file ${i} old line ${LINES - 2} ${'x'.repeat(40)}`, `-file ${i} old line ${LINES - 1} ${'x'.repeat(40)}`, `+file ${i} PATCHED last line`].join('\n') + '\n';
}

/** What the audit file holds, line by line (shortened), for a failure message. */
function describeAudit(file: string): string {
  const text = readFileSync(file, 'utf8');
  const head = (() => { try { return readFileSync(`${file}.head`, 'utf8').trim(); } catch { return '(no head)'; } })();
  const lines = text.split('\n').map((l, i) => `  ${i + 1}: ${l.length} chars: ${JSON.stringify(l.slice(0, 160))}${l.length > 160 ? ' … ' + JSON.stringify(l.slice(-80)) : ''}`);
  return `\naudit (${text.length} bytes, head ${head}):\n${lines.join('\n')}`;
}

test('SIGKILL in the middle of many writes and patches: every file old or new, audit verifies', async () => {
  const ws = tempDir('tg-crash-');
  const pol = tempDir('tg-crash-policy-');
  const policy = path.join(pol.dir, 'policy.yaml');
  writeFileSync(policy, 'rules:\n  - tool: "*"\n    decision: allow\n');
  const expected: Array<{ old: string; neu: string }> = [];
  for (let i = 0; i < FILES; i++) {
    const old = oldContent(i);
    writeFileSync(path.join(ws.dir, `f${i}.txt`), old);
    const lines = old.split('\n');
    let neu: string;
    if (i < 10) neu = old.replaceAll('old', 'new');
    else if (i < 20) neu = old.replaceAll(' old ', ' edited ');
    else { lines[0] = `file ${i} PATCHED line 0`; lines[LINES - 1] = `file ${i} PATCHED last line`; neu = lines.join('\n'); }
    expected.push({ old, neu });
  }

  const { client, transport } = await connectStdio(['--workspace', ws.dir, '--policy', policy]);
  const calls: Array<Promise<unknown>> = [];
  const opts = { timeout: 300_000 };
  for (let i = 0; i < FILES; i++) {
    const old = expected[i]!.old;
    if (i < 10) calls.push(client.callTool({ name: 'write_file', arguments: { path: `f${i}.txt`, content: expected[i]!.neu, expected_sha256: sha(old) } }, undefined, opts));
    else if (i < 20) calls.push(client.callTool({ name: 'edit_file', arguments: { path: `f${i}.txt`, old_string: ' old ', new_string: ' edited ', replace_all: true, expected_sha256: sha(old) } }, undefined, opts));
    else if (i % 2 === 0) calls.push(client.callTool({ name: 'apply_patch', arguments: { patch: patchFor(i) + patchFor(i + 1) } }, undefined, opts));
  }
  const settled = calls.map((c) => c.then(() => 'done', () => 'failed'));
  // Kill as soon as the first call has been answered (so it was audited): the rest are in flight.
  await Promise.any(calls);
  const pid = transport.pid!;
  process.kill(pid, 'SIGKILL');
  await Promise.allSettled(settled);
  await client.close().catch(() => {});

  let changed = 0;
  for (let i = 0; i < FILES; i++) {
    const now = readFileSync(path.join(ws.dir, `f${i}.txt`), 'utf8');
    const { old, neu } = expected[i]!;
    assert.ok(now === old || now === neu, `f${i}.txt is neither old nor new (${now.length} bytes)`);
    if (now === neu) changed++;
  }
  // Patched pairs change together unless the kill fell between their two renames; either way each file is whole.
  assert.ok(changed >= 1, 'at least the answered call changed its file');
  process.stderr.write(`crash test: ${changed} of ${FILES} files had their new content when the server was killed\n`);

  const auditFile = path.join(ws.dir, '.toolgate', 'audit.jsonl');
  let v = spawnSync(process.execPath, [CLI, 'audit', 'verify', auditFile], { encoding: 'utf8' });
  assert.equal(v.status, 0, v.stdout + v.stderr + describeAudit(auditFile));

  // A restarted server continues the chain.
  const again = await connectStdio(['--workspace', ws.dir, '--policy', policy]);
  const r = await again.client.callTool({ name: 'write_file', arguments: { path: 'after.txt', content: 'after the crash\n' } });
  assert.equal((r.structuredContent as { ok: boolean }).ok, true);
  await again.close();
  v = spawnSync(process.execPath, [CLI, 'audit', 'verify', auditFile], { encoding: 'utf8' });
  assert.equal(v.status, 0, v.stdout + v.stderr);
  ws.cleanup();
  pol.cleanup();
});
