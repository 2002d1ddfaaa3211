/**
 * run_command costs: the command policy on a 50-part command (parse + evaluate), and
 * `echo hi` through the built server over stdio (an SDK client, as a user's client runs it) with
 * and without bubblewrap, against execFile('echo') from a fresh Node process measured in the
 * same run. Both are separate processes on purpose: a fork costs more the more memory the
 * forking process holds, and the bench process (tsx, every tree it listed) is neither a server
 * nor a small script.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { promisify } from 'node:util';
import { performance } from 'node:perf_hooks';
import { policyFromYaml } from '../src/testing/helpers.js';
import { loadShellParser } from '../src/shell/parser.js';
import { analyzeCommand } from '../src/shell/analyze.js';
import { evaluate } from '../src/policy/evaluate.js';
import type { PlanTarget } from '../src/core/types.js';
import { detectBwrap } from '../src/exec/sandbox.js';
import { callOk, connect, TOOLGATE_CLI } from './clients.js';
import { median, ratio, timeRuns } from './stats.js';

const run = promisify(execFile);
const scratch = mkdtempSync(path.join(os.tmpdir(), 'tg-bench-echo-'));
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));

/** p50 of `echo hi` through the built server over stdio with `dir` as the workspace; null when the backend is missing. */
export async function benchEcho(dir: string, backend: 'none' | 'bwrap', n = 20): Promise<number | null> {
  if (backend === 'bwrap' && !(await detectBwrap())) return null;
  const policy = path.join(scratch, `echo-${backend}.yaml`);
  writeFileSync(policy, `version: 1\nsandbox: { backend: ${backend} }\nrules:\n  - tool: run_command\n    command: ["echo"]\n    decision: allow\n`);
  const c = await connect([TOOLGATE_CLI, '--workspace', dir, '--policy', policy, '--state-dir', path.join(scratch, 'state'), '--console', 'off']);
  try {
    // 100 warm-up calls, not the 20 of the per-call rows: V8 still compiles the command path (the
    // parser, the policy, the starter's spawn) over a fresh server's first ~100 commands, on the
    // cores the commands need (measured: p50 3.5 ms over calls 30-70, 2.8 ms from call 200 on).
    return median(await timeRuns(n, () => callOk(c, 'run_command', { command: 'echo hi' }), 100));
  } finally {
    await c.close();
  }
}

/** p50 of execFile('echo', ['hi']) in a fresh Node process (its own small heap, as a script would). */
async function execFileBaseline(n: number): Promise<number> {
  const code = `const { execFile } = require('node:child_process'); const xs = []; let i = 0;
const go = () => { const a = performance.now(); execFile('echo', ['hi'], () => { if (i++ >= 3) xs.push(performance.now() - a); if (i < ${n + 3}) go(); else { xs.sort((x, y) => x - y); console.log(xs[xs.length >> 1]); } }); };
go();`;
  const r = await run(process.execPath, ['-e', code]);
  return Number(r.stdout.trim());
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

  const base = await execFileBaseline(n);
  rows.push({ name: "execFile('echo') baseline (a fresh node process)", p50_ms: base });
  // Why run_command spawns with node:child_process and not execa (named in the design): execa's
  // own cost per spawn against execFile, both in this (bench) process.
  const inHere = median(await timeRuns(n, () => run('echo', ['hi']), 3));
  const viaExeca = median(await timeRuns(n, () => execa('echo', ['hi']), 3));
  rows.push({ name: "execa('echo') (not used by run_command), in the bench process", p50_ms: viaExeca, ratio: `${ratio(viaExeca, inHere)} vs execFile there (${inHere.toFixed(2)} ms)` });
  const dir = mkdtempSync(path.join(scratch, 'ws-'));
  for (const b of ['none', 'bwrap'] as const) {
    const p50 = await benchEcho(dir, b, n);
    if (p50 !== null) rows.push({ name: `run_command "echo hi" (sandbox ${b}), server over stdio`, p50_ms: p50, ratio: `${ratio(p50, base)} vs execFile` });
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const r of await benchCommands()) process.stdout.write(`${r.name}: p50 ${r.p50_ms.toFixed(3)} ms ${r.ratio ?? ''}\n`);
}
