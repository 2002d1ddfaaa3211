import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Harness, policyFromYaml, tempDir } from './helpers.js';

/** A tree of `files` small files in folders of 100, with one nested secret and one nested repo. */
export function makeTree(dir: string, files: number): void {
  for (let i = 0; i < files; i++) {
    const d = path.join(dir, `d${Math.floor(i / 1000)}`, `e${Math.floor(i / 100) % 10}`);
    if (i % 100 === 0) mkdirSync(d, { recursive: true });
    writeFileSync(path.join(d, `f${i}.txt`), 'x\n');
  }
  mkdirSync(path.join(dir, 'sub/.git/hooks'), { recursive: true });
  writeFileSync(path.join(dir, 'sub/.git/config'), '[core]\n');
  writeFileSync(path.join(dir, 'sub/.env'), 'S=1\n');
}

/**
 * p50/p90 of `run_command echo hi` through the real pipeline (in process, audit on) on a tree of
 * `files` files. The first call (index build, bwrap probe) is reported apart as `first_ms`.
 * For the perf bench: `measureEchoHi({ files: 50_000, backend: 'bwrap' })`.
 */
export async function measureEchoHi(o: { files: number; runs?: number; backend?: 'bwrap' | 'none' }): Promise<{ files: number; backend: string; first_ms: number; p50_ms: number; p90_ms: number; sandbox: string }> {
  const { dir, cleanup } = tempDir('tg-measure-');
  try {
    makeTree(dir, o.files);
    const h = new Harness([dir], { policy: policyFromYaml(`mode: ci\nsandbox: { backend: ${o.backend ?? 'bwrap'} }\nrules:\n  - { tool: run_command, command: ["echo"], decision: allow }\n  - { tool: "*", path: "d0/**", decision: deny }\n`) });
    let t = performance.now();
    const first = await h.call('run_command', { command: 'echo hi' });
    const first_ms = performance.now() - t;
    if (!first.ok) throw new Error(`echo hi failed: ${JSON.stringify(first.error)}`);
    const times: number[] = [];
    for (let i = 0; i < (o.runs ?? 30); i++) {
      t = performance.now();
      await h.call('run_command', { command: 'echo hi' });
      times.push(performance.now() - t);
    }
    h.close();
    times.sort((a, b) => a - b);
    const q = (p: number) => Math.round(times[Math.min(times.length - 1, Math.floor(p * times.length))]! * 10) / 10;
    return { files: o.files, backend: o.backend ?? 'bwrap', first_ms: Math.round(first_ms), p50_ms: q(0.5), p90_ms: q(0.9), sandbox: String((first.data as { sandbox?: string }).sandbox) };
  } finally {
    cleanup();
  }
}

// `npx tsx src/testing/measure-command.ts 10 50000 200000` prints one line per tree size.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0);
  for (const files of sizes.length ? sizes : [10, 50_000]) process.stdout.write(`${JSON.stringify(await measureEchoHi({ files }))}\n`);
}
