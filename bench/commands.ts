/**
 * run_command costs: the command policy on a 50-part command (parse + evaluate), and
 * `echo hi` through the whole in-process pipeline with and without bubblewrap, against
 * execFile('echo') measured in the same run.
 */
import { execFile } from 'node:child_process';
import { execa } from 'execa';
import { promisify } from 'node:util';
import { performance } from 'node:perf_hooks';
import { Harness, policyFromYaml, tempDir } from '../src/testing/helpers.js';
import { loadShellParser } from '../src/shell/parser.js';
import { analyzeCommand } from '../src/shell/analyze.js';
import { evaluate } from '../src/policy/evaluate.js';
import type { PlanTarget } from '../src/core/types.js';
import { detectBwrap } from '../src/exec/sandbox.js';
import { median, ratio, timeRuns } from './stats.js';

const run = promisify(execFile);

const echoPolicy = (backend: string) => policyFromYaml(`sandbox: { backend: ${backend} }\nrules:\n  - tool: run_command\n    command: ["echo"]\n    decision: allow\n`);

/** p50 of `echo hi` through the in-process pipeline with `dir` as the workspace; null when the backend is missing. */
export async function benchEcho(dir: string, backend: 'none' | 'bwrap', n = 20): Promise<number | null> {
  if (backend === 'bwrap' && !(await detectBwrap())) return null;
  const h = new Harness([dir], { policy: echoPolicy(backend) });
  try {
    return median(await timeRuns(n, async () => {
      const env = await h.call('run_command', { command: 'echo hi' });
      if (!env.ok) throw new Error(JSON.stringify(env.error));
    }, 3));
  } finally {
    h.close();
  }
}

export async function benchCommands(n = 40): Promise<Array<{ name: string; p50_ms: number; ratio?: string }>> {
  const rows: Array<{ name: string; p50_ms: number; ratio?: string }> = [];
  const policy = (backend: string) => policyFromYaml(`sandbox: { backend: ${backend} }\nrules:\n  - tool: run_command\n    command: ["echo", "ls", "git status", "cat"]\n    decision: allow\n  - tool: run_command\n    command: ["rm -rf"]\n    decision: deny\n`);

  // Policy evaluation: parse + unwrap + evaluate a 50-part command.
  const parser = await loadShellParser();
  const cmd = Array.from({ length: 50 }, (_, i) => (i % 3 === 0 ? `echo part${i} | cat` : i % 3 === 1 ? `ls -la dir${i} && git status` : `env A=1 timeout 5 echo "$(ls x${i})"`)).join('; ');
  const pol = policy('none');
  const facts = { name: 'run_command', risk: 'medium' as const, permissions: ['proc.exec' as const] };
  const times: number[] = [];
  for (let i = -20; i < 500; i++) {
    const t = performance.now();
    const a = analyzeCommand(parser, cmd);
    const targets: PlanTarget[] = a.parts.map((p) => ({ kind: 'command', words: p.words, text: p.text }));
    evaluate(facts, targets, pol);
    if (i >= 0) times.push(performance.now() - t);
  }
  rows.push({ name: `policy: parse + evaluate a 50-part command (${analyzeCommand(parser, cmd).parts.length} parts)`, p50_ms: median(times) });

  const base = median(await timeRuns(n, () => run('echo', ['hi']), 3));
  rows.push({ name: "execFile('echo') baseline", p50_ms: base });
  // Why run_command spawns with node:child_process and not execa (named in the design): execa's
  // own cost per spawn, in the same run.
  const viaExeca = median(await timeRuns(n, () => execa('echo', ['hi']), 3));
  rows.push({ name: "execa('echo') (not used by run_command)", p50_ms: viaExeca, ratio: `${ratio(viaExeca, base)} vs execFile` });
  const { dir, cleanup } = tempDir('tg-bench-cmd-');
  try {
    const backends = (await detectBwrap()) ? ['none', 'bwrap'] : ['none'];
    for (const b of backends) {
      const h = new Harness([dir], { policy: policy(b) });
      const p50 = median(await timeRuns(n, async () => {
        const env = await h.call('run_command', { command: 'echo hi' });
        if (!env.ok) throw new Error(JSON.stringify(env.error));
      }, 3));
      rows.push({ name: `run_command "echo hi" (sandbox ${b})`, p50_ms: p50, ratio: `${ratio(p50, base)} vs execFile` });
      h.close();
    }
  } finally {
    cleanup();
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const r of await benchCommands()) process.stdout.write(`${r.name}: p50 ${r.p50_ms.toFixed(3)} ms ${r.ratio ?? ''}\n`);
}
