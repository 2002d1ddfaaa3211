/**
 * node --import tsx bench/glob-ab.ts TREE [SUBDIR] [REPS]
 * glob's two engines in-process, interleaved on the same tree (so machine load hits both
 * alike), against `rg --files -g '*.h'`: medians of wall time and of the server's own CPU.
 */
import { spawn } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { Harness } from '../src/testing/helpers.js';

if (!process.argv[2]) throw new Error('usage: bench/glob-ab.ts TREE [SUBDIR] [REPS]');
const root = realpathSync(process.argv[2]);
const sub = process.argv[3] ?? '.';
const reps = Number(process.argv[4] ?? 5);
const h = new Harness([root]);
const raw = () => new Promise<void>((res) => {
  const c = spawn('rg', ['--files', '-g', '*.h', sub], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] });
  c.stdout.on('data', () => {});
  c.on('close', () => res());
});
const wall: Record<string, number[]> = { ripgrep: [], builtin: [], raw: [] };
const cpu: Record<string, number[]> = { ripgrep: [], builtin: [] };
let totals = '';
for (let i = 0; i < reps; i++) {
  for (const engine of ['ripgrep', 'builtin']) {
    process.env.TOOLGATE_RG = engine === 'ripgrep' ? '' : 'off';
    const t = performance.now();
    const c0 = process.cpuUsage();
    const env = await h.call('glob', { pattern: '**/*.h', path: sub, limit: 10_000 });
    const c1 = process.cpuUsage(c0);
    wall[engine]!.push(performance.now() - t);
    cpu[engine]!.push((c1.user + c1.system) / 1000);
    if (!env.ok) throw new Error(env.text);
    const d = env.data as { total: number; engine: string };
    if (i === 0) totals += ` ${engine}: ${d.total} (${d.engine})`;
  }
  const t = performance.now();
  await raw();
  wall.raw!.push(performance.now() - t);
}
h.close();
const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!.toFixed(1);
console.log(`matches:${totals}`);
console.log(`wall ms: ripgrep engine ${med(wall.ripgrep!)}, walker ${med(wall.builtin!)}, rg --files -g ${med(wall.raw!)}`);
console.log(`server CPU ms: ripgrep engine ${med(cpu.ripgrep!)}, walker ${med(cpu.builtin!)}`);
