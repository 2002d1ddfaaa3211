/**
 * The cost toolgate adds to a call of an upstream MCP server (SPEC §12): the same tool
 * (server-everything's `echo`) called directly over stdio and through toolgate (mounted as
 * upstream `everything`, an allow rule, audit on), interleaved in one run, p50 of each.
 *
 *   import { measureUpstreamOverhead } from './upstream-overhead.js';
 *   const r = await measureUpstreamOverhead({ calls: 300 });   // { direct_p50_ms, toolgate_p50_ms, overhead_p50_ms, … }
 *
 * Or alone: npm run build && node --import tsx bench/upstream-overhead.ts [calls]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { callOk, connect, TOOLGATE_CLI } from './clients.js';
import { median, percentile } from './stats.js';

const EVERYTHING = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');

export interface UpstreamOverhead {
  calls: number;
  direct_p50_ms: number;
  toolgate_p50_ms: number;
  overhead_p50_ms: number;
  direct_p90_ms: number;
  toolgate_p90_ms: number;
}

export async function measureUpstreamOverhead(opts: { calls?: number; warm?: number } = {}): Promise<UpstreamOverhead> {
  const calls = opts.calls ?? 300;
  const warm = opts.warm ?? 30;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tg-upbench-'));
  const ws = path.join(dir, 'ws');
  mkdirSync(ws);
  const policy = path.join(dir, 'policy.yaml');
  writeFileSync(policy, [
    'upstreams:',
    '  everything:',
    `    command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(EVERYTHING)}, "stdio"]`,
    'rules:',
    '  - { tool: "everything__*", decision: allow }',
  ].join('\n') + '\n');
  const env = { XDG_STATE_HOME: path.join(dir, 'state'), XDG_RUNTIME_DIR: path.join(dir, 'run') };
  const direct = await connect([EVERYTHING, 'stdio']);
  const gate = await connect([TOOLGATE_CLI, '--workspace', ws, '--policy', policy], env);
  try {
    // The upstream may need a moment after toolgate's start-up bound.
    for (let i = 0; i < 100 && !(await gate.client.listTools()).tools.some((t) => t.name === 'everything__echo'); i++) await new Promise((r) => setTimeout(r, 100));
    const d: number[] = [];
    const g: number[] = [];
    for (let i = -warm; i < calls; i++) {
      const args = { message: `m${i}` };
      let t = performance.now();
      await callOk(direct, 'echo', args);
      const td = performance.now() - t;
      t = performance.now();
      await callOk(gate, 'everything__echo', args);
      const tg = performance.now() - t;
      if (i >= 0) { d.push(td); g.push(tg); }
    }
    const r = { calls, direct_p50_ms: median(d), toolgate_p50_ms: median(g), overhead_p50_ms: 0, direct_p90_ms: percentile(d, 90), toolgate_p90_ms: percentile(g, 90) };
    r.overhead_p50_ms = r.toolgate_p50_ms - r.direct_p50_ms;
    return r;
  } finally {
    await gate.close();
    await direct.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const r = await measureUpstreamOverhead({ calls: Number(process.argv[2] ?? 300) });
  process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
}
