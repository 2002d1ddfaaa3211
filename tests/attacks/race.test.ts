// TOCTOU: a child process keeps swapping a directory for a symlink pointing outside while
// the server is hammered with reads of a file inside it. Not one read may return the outside.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connectStdio, tempDir } from '../../src/testing/helpers.js';
import { locateRg } from '../../src/tools/grep/rg.js';

// These tests compare the two engines on small trees: ripgrep runs even where glob and grep would
// search a folder this small themselves (TOOLGATE_GLOB_WALK_MAX, TOOLGATE_GREP_WALK_MAX; servers
// spawned here inherit them).
process.env.TOOLGATE_GLOB_WALK_MAX = '0';
process.env.TOOLGATE_GREP_WALK_MAX = '0';

const CANARY = 'CANARY-race-outside-91c';
const READS = 500;
const BATCH = 10;

let base: { dir: string; cleanup: () => void };
let swapper: ChildProcess | undefined;
let client: Client;
let close: () => Promise<void>;
let ws: string;

// Runs in the child: swap `swap` between a real directory and a symlink to the outside, forever.
const SWAPPER = `
const fs = require('node:fs');
const [swap, holdDir, holdLink] = process.argv.slice(1);
for (;;) {
  try { fs.renameSync(swap, holdDir); fs.renameSync(holdLink, swap); fs.renameSync(swap, holdLink); fs.renameSync(holdDir, swap); } catch {}
}`;

before(async () => {
  base = tempDir('tg-race-');
  ws = path.join(base.dir, 'ws');
  const out = path.join(base.dir, 'outside');
  mkdirSync(path.join(ws, 'swap'), { recursive: true });
  mkdirSync(out);
  writeFileSync(path.join(ws, 'swap', 'f.txt'), 'inside\n');
  writeFileSync(path.join(out, 'f.txt'), `${CANARY}\n`);
  writeFileSync(path.join(out, `${CANARY}.txt`), `${CANARY}\n`);
  symlinkSync(out, path.join(ws, 'hold-link'));
  ({ client, close } = await connectStdio(['--workspace', ws]));
  swapper = spawn(process.execPath, ['-e', SWAPPER, path.join(ws, 'swap'), path.join(ws, 'hold-dir'), path.join(ws, 'hold-link')], { stdio: 'ignore' });
});

after(async () => {
  if (swapper?.pid && swapper.exitCode === null) swapper.kill('SIGKILL');
  await close?.();
  base?.cleanup();
});

async function hammer(name: string, args: Record<string, unknown>): Promise<{ ok: number; refused: Map<string, number> }> {
  const refused = new Map<string, number>();
  let ok = 0;
  for (let i = 0; i < READS; i += BATCH) {
    const batch = Array.from({ length: BATCH }, () => client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 }));
    for (const r of await Promise.all(batch)) {
      const text = JSON.stringify(r);
      assert.ok(!text.includes(CANARY), `${name} returned the outside file: ${text.slice(0, 300)}`);
      const env = r.structuredContent as { ok: boolean; error: { code: string } | null };
      if (env.ok) ok++;
      else refused.set(env.error!.code, (refused.get(env.error!.code) ?? 0) + 1);
    }
  }
  return { ok, refused };
}

test(`${READS} read_file calls while swap/ flips between a folder and a link out: zero escapes`, async () => {
  const { ok, refused } = await hammer('read_file', { path: 'swap/f.txt' });
  // Each read is either the inside file or a clean refusal, never anything else.
  for (const code of refused.keys()) assert.ok(['PathTraversalBlocked', 'NotFound', 'PathDenied'].includes(code), `unexpected ${code}`);
  assert.equal(ok + [...refused.values()].reduce((a, b) => a + b, 0), READS);
});

test(`${READS} list_dir calls on the swapping folder: zero escapes`, async () => {
  const { refused } = await hammer('list_dir', { path: 'swap' });
  for (const code of refused.keys()) assert.ok(['PathTraversalBlocked', 'NotFound', 'PathDenied', 'InvalidArguments'].includes(code), `unexpected ${code}`);
});

test(`${READS} glob calls into the swapping folder: zero escapes`, async (t) => {
  const tools = (await client.listTools()).tools.map((x) => x.name);
  if (!tools.includes('glob')) return t.skip('glob is not registered');
  await hammer('glob', { pattern: '**', path: 'swap' });
});

test(`${READS / 5} glob calls from the root, walking past the swapping folder (every engine): zero escapes`, async (t) => {
  const tools = (await client.listTools()).tools.map((x) => x.name);
  if (!tools.includes('glob')) return t.skip('glob is not registered');
  // The server uses its folder index by default (each folder's entries remembered, the listing
  // re-checked on disk); a second server lists with ripgrep when it finds it (rg --files reads swap/
  // by name), a third runs the walker. CI's second pass sets TOOLGATE_RG=off: then the second walks.
  const rg = await locateRg();
  const servers: Array<[string, Client]> = [['index', client]];
  for (const [engine, env] of [[rg ? 'ripgrep' : 'builtin', { TOOLGATE_GLOB_ENGINE: 'ripgrep' }], ['builtin', { TOOLGATE_GLOB_ENGINE: 'walker' }]] as const) {
    const other = await connectStdio(['--workspace', ws], { env });
    t.after(() => other.close().catch(() => {}));
    servers.push([engine, other.client]);
  }
  for (const [engine, c] of servers) {
    for (let i = 0; i < READS / 5; i += BATCH) {
      const batch = Array.from({ length: BATCH }, (_, k) => c.callTool({ name: 'glob', arguments: k % 2 ? { pattern: '**', hidden: true, gitignore: false } : { pattern: '**/*.txt' } }, undefined, { timeout: 60_000 }));
      for (const r of await Promise.all(batch)) {
        const text = JSON.stringify(r);
        assert.ok(!text.includes(CANARY), `glob (${engine}) named an outside file: ${text.slice(0, 300)}`);
        const env = r.structuredContent as { ok: boolean; data: { engine: string } | null };
        assert.equal(env.ok, true, text.slice(0, 300));
        // The index cannot prove what it read while swap/ flips: the walker answers those calls.
        if (engine === 'index') assert.ok(['index', 'builtin'].includes(env.data?.engine ?? ''), env.data?.engine);
        else assert.equal(env.data?.engine, engine);
      }
    }
  }
});

test(`${READS} grep calls into the swapping folder: zero escapes`, async (t) => {
  const tools = (await client.listTools()).tools.map((x) => x.name);
  if (!tools.includes('grep')) return t.skip('grep is not registered');
  await hammer('grep', { pattern: 'race-outside', path: 'swap', output_mode: 'content' });
});
