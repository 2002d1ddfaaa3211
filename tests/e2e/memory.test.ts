// Memory stays bounded on big files: the built server, driven over stdio, edits and reads a 5 MB
// file again and again; its peak resident set (VmHWM) must not climb with every call. Without
// reclaimAfterLargeFile (src/core/reclaim.ts) ten edits and a read took it from ~70 to ~215 MB.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { connectStdio, tempDir } from '../../src/testing/helpers.js';

const linux = process.platform === 'linux';
const mb = (pid: number, key: 'VmHWM' | 'VmRSS') => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

test('ten edits and a full read of a 5 MB file: the server\'s peak memory grows by less than 100 MB', { skip: linux ? false : 'reads /proc/PID/status (Linux)' }, async (t) => {
  const ws = tempDir('tg-mem-');
  const pol = tempDir('tg-mem-policy-');
  t.after(() => { ws.cleanup(); pol.cleanup(); });
  const policy = path.join(pol.dir, 'policy.yaml');
  writeFileSync(policy, 'rules:\n  - tool: "*"\n    decision: allow\n');
  const lines = Array.from({ length: 100_000 }, (_, i) => `line ${i} ${'x'.repeat(40)}`);
  writeFileSync(path.join(ws.dir, 'big.txt'), [...lines, 'UNIQUE_TAIL_LINE'].join('\n') + '\n');
  const s = await connectStdio(['--workspace', ws.dir, '--policy', policy], { env: { XDG_STATE_HOME: path.join(pol.dir, 'state'), XDG_RUNTIME_DIR: path.join(pol.dir, 'run') } });
  t.after(() => s.close().catch(() => {}));
  const pid = s.transport.pid!;
  const ok = async (name: string, args: Record<string, unknown>) => {
    const r = await s.client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
    assert.equal((r.structuredContent as { ok: boolean }).ok, true, JSON.stringify(r.structuredContent).slice(0, 400));
  };
  await ok('read_file', { path: 'big.txt', limit: 1 });
  const before = mb(pid, 'VmHWM');
  for (let k = 0; k < 10; k++) {
    const [a, b] = k % 2 === 0 ? ['UNIQUE_TAIL_LINE', 'UNIQUE_TAIL_EDITED'] : ['UNIQUE_TAIL_EDITED', 'UNIQUE_TAIL_LINE'];
    await ok('edit_file', { path: 'big.txt', old_string: a, new_string: b });
  }
  await ok('read_file', { path: 'big.txt' });
  const grown = mb(pid, 'VmHWM') - before;
  process.stderr.write(`memory test: peak resident set ${before.toFixed(0)} -> ${(before + grown).toFixed(0)} MB\n`);
  assert.ok(grown < 100, `peak resident set grew by ${grown.toFixed(0)} MB over ten 5 MB edits and a read`);
});
