// A client that writes its requests and closes stdin at once (`printf … | toolgate`) still
// gets every answer, and every call is audited.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { CLI, tempDir } from '../../src/testing/helpers.js';

test('requests sent before stdin closes are answered before the server exits', async () => {
  const { dir, cleanup } = tempDir('tg-stdin-');
  try {
    writeFileSync(path.join(dir, 'a.txt'), 'hello\n');
    const child = spawn(process.execPath, [CLI, '--workspace', dir], { stdio: ['pipe', 'pipe', 'ignore'], env: { ...process.env, TOOLGATE_LOG_LEVEL: 'warn' } });
    let out = '';
    child.stdout.on('data', (c: Buffer) => { out += c.toString(); });
    const lines = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'read_file', arguments: { path: 'a.txt' } } },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'grep', arguments: { pattern: 'hello' } } },
    ];
    child.stdin.end(lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    assert.equal(code, 0);
    const replies = out.trim().split('\n').map((l) => JSON.parse(l) as { id?: number; result?: { isError?: boolean } });
    for (const id of [2, 3]) {
      const r = replies.find((x) => x.id === id);
      assert.ok(r?.result, `an answer to request ${id}: ${out.slice(0, 300)}`);
      assert.equal(r.result.isError, false);
    }
    const audit = readFileSync(path.join(dir, '.toolgate', 'audit.jsonl'), 'utf8').trim().split('\n');
    assert.equal(audit.length, 2);
  } finally {
    cleanup();
  }
});
