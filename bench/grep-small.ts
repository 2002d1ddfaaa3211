/**
 * node --import tsx bench/grep-small.ts [SIZES] [REPS]
 * Where grep's in-process search of a small folder and ripgrep cross: folders of N files (80-line
 * sources, 20 a folder), `grep TODO` in count mode through a spawned stdio server (dist/cli.js),
 * ripgrep forced (TOOLGATE_GREP_WALK_MAX=0) against the default, twice each, interleaved. Prints the
 * p50 round trip and the server's CPU per call (own + its children's: rg).
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BUILT_CLI } from '../src/server/http-spawn.js';

const sizes = (process.argv[2] ?? '10,50,150,300,600').split(',').map(Number);
const reps = Number(process.argv[3] ?? 40);
const args = { pattern: 'TODO', output_mode: 'count' };

/** CPU time of a process and of its reaped children, ms (/proc/PID/stat; USER_HZ 100). */
function cpu(pid: number): { own: number; kids: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { own: (Number(f[11]) + Number(f[12])) * 10, kids: (Number(f[13]) + Number(f[14])) * 10 };
}

async function measure(dir: string, walkMax: string): Promise<string> {
  const t = new StdioClientTransport({
    command: process.execPath, args: [BUILT_CLI, '--workspace', dir], stderr: 'ignore',
    env: { ...process.env, TOOLGATE_GREP_WALK_MAX: walkMax, TOOLGATE_LOG_LEVEL: 'error' } as Record<string, string>,
  });
  const c = new Client({ name: 'grep-small', version: '1' });
  await c.connect(t);
  try {
    for (let i = 0; i < 5; i++) await c.callTool({ name: 'grep', arguments: args });
    const c0 = cpu(t.pid!);
    const times: number[] = [];
    let engine = '';
    for (let i = 0; i < reps; i++) {
      const s = performance.now();
      const r = await c.callTool({ name: 'grep', arguments: args });
      times.push(performance.now() - s);
      engine = (r.structuredContent as { data: { engine: string } }).data.engine;
    }
    const c1 = cpu(t.pid!);
    times.sort((a, b) => a - b);
    return `${engine.padEnd(8)} p50 ${times[reps >> 1]!.toFixed(2)} ms, cpu ${((c1.own - c0.own) / reps).toFixed(2)} + rg ${((c1.kids - c0.kids) / reps).toFixed(2)} ms`;
  } finally {
    await c.close();
  }
}

for (const n of sizes) {
  const dir = path.join(os.tmpdir(), `tg-grep-small-${process.pid}-${n}`);
  for (let i = 0; i < n; i++) {
    const d = path.join(dir, `d${Math.floor(i / 20)}`);
    mkdirSync(d, { recursive: true });
    writeFileSync(path.join(d, `f${i}.ts`), Array.from({ length: 80 }, (_, j) => `export const value_${i}_${j} = ${j}; // ${j % 7 === 0 ? 'TODO tidy' : 'ok'}`).join('\n') + '\n');
  }
  try {
    const row: string[] = [];
    for (const walkMax of ['0', '', '0', '']) row.push(await measure(dir, walkMax));
    process.stdout.write(`${String(n).padStart(5)} files | ${row.join(' | ')}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
