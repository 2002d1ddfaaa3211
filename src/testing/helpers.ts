import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { runCall, type CallMeta } from '../core/pipeline.js';
import { Runtime } from '../core/runtime.js';
import { Session } from '../core/session.js';
import type { Envelope } from '../core/envelope.js';
import { defaultPolicy } from '../policy/load.js';
import { compilePolicy } from '../policy/compile.js';
import { parsePolicyText } from '../policy/load.js';
import type { CompiledPolicy } from '../policy/types.js';
import { SessionRoots } from '../server/session-roots.js';
import { allTools } from '../tools/index.js';
import { ctimeMargin, FINE_MS } from '../tools/glob/recheck.js';
import { CLI_PATH } from '../paths.js';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CLI = CLI_PATH;

/** A fresh temporary directory (real path), removed by the returned cleanup. */
export function tempDir(prefix = 'tg-'): { dir: string; cleanup: () => void } {
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), prefix)));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Pids (Linux /proc) whose command line (arguments joined by NUL) passes `test`. */
export function pidsWhere(test: (cmdline: string) => boolean): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try { if (test(readFileSync(`/proc/${e}/cmdline`, 'utf8'))) out.push(Number(e)); } catch { /* gone */ }
  }
  return out;
}

/** Writes `content` to `rel` under `root`, creating the folders on the way. */
export function writeIn(root: string, rel: string, content: string | Buffer = ''): void {
  mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  writeFileSync(path.join(root, rel), content);
}

/**
 * Runs `f` with grep and glob set to one engine — 'rg': ripgrep (TOOLGATE_GLOB_ENGINE=ripgrep, and
 * grep's small-folder search off: TOOLGATE_GREP_WALK_MAX=0); 'builtin': the walker for glob
 * (TOOLGATE_GLOB_ENGINE=walker) and TOOLGATE_RG off for grep; 'index': glob's folder index, grep
 * as by default — then restores them.
 */
export async function withEngine<T>(engine: 'rg' | 'builtin' | 'index', f: () => Promise<T>): Promise<T> {
  const keys = ['TOOLGATE_RG', 'TOOLGATE_GREP_WALK_MAX', 'TOOLGATE_GLOB_ENGINE'] as const;
  const saved = keys.map((k) => [k, process.env[k]] as const);
  process.env.TOOLGATE_RG = engine === 'builtin' ? 'off' : '';
  if (engine === 'rg') process.env.TOOLGATE_GREP_WALK_MAX = '0';
  process.env.TOOLGATE_GLOB_ENGINE = engine === 'rg' ? 'ripgrep' : engine === 'builtin' ? 'walker' : 'index';
  try {
    return await f();
  } finally {
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/**
 * Waits until every folder under each root changed long enough ago for glob's index to trust it
 * (recheck.ts: ctimeMargin before the call starts). The index answers only from folders proven
 * unchanged; a folder whose entries changed a moment ago makes glob walk instead.
 */
export async function settle(roots: readonly string[]): Promise<void> {
  let until = 0;
  const look = (dir: string) => {
    let st;
    try { st = lstatSync(dir); } catch { return; }
    if (!st.isDirectory()) return;
    until = Math.max(until, st.ctimeMs + Math.max(FINE_MS, ctimeMargin(st.ctimeMs)) + 20);
    try { for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) look(path.join(dir, e.name)); } catch { /* unreadable */ }
  };
  for (const r of roots) look(r);
  const wait = until - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
}

export function policyFromYaml(yaml: string, extra: { protectedAbs?: string[] } = {}): CompiledPolicy {
  const { data, lines } = parsePolicyText(yaml, 'test.yaml');
  return compilePolicy(data, { origin: 'test.yaml', lines, ...extra });
}

/**
 * An in-process harness: the real pipeline (validation, gate, approval, executor,
 * envelope, audit) without a transport. For unit tests of tools and rules.
 */
export class Harness {
  readonly rt: Runtime;
  readonly roots: SessionRoots;
  readonly session: Session;

  constructor(readonly workspace: string[], opts: { policy?: CompiledPolicy; stateDir?: string; session?: Session } = {}) {
    this.rt = new Runtime({
      tools: allTools(),
      policy: opts.policy ?? defaultPolicy(),
      log: pino({ level: 'silent' }),
      stateDir: opts.stateDir,
      replay: { command: ['node', CLI], flags: workspace.flatMap((w) => ['--workspace', w]) },
    });
    this.session = opts.session ?? new Session();
    this.roots = new SessionRoots(this.rt, workspace, this.session);
  }

  async call(tool: string, args: unknown, meta: Partial<CallMeta> = {}): Promise<Envelope> {
    const { envelope } = await runCall(this.rt, this.roots, tool, args, { signal: new AbortController().signal, ...meta });
    return envelope;
  }

  close(): void {
    this.rt.close();
  }
}

/** Spawns the built server (dist/cli.js) and connects the real MCP SDK client over stdio. */
export async function connectStdio(args: string[], opts: { capabilities?: Record<string, unknown>; env?: Record<string, string> } = {}) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, ...args],
    stderr: 'pipe',
    env: { ...(process.env as Record<string, string>), TOOLGATE_LOG_LEVEL: 'warn', ...(opts.env ?? {}) },
  });
  const client = new Client({ name: 'toolgate-test', version: '1.0.0' }, { capabilities: opts.capabilities ?? {} });
  await client.connect(transport);
  return { client, transport, close: () => client.close() };
}

/**
 * Runs `step` (the body of a loop, in CommonJS, with `fs` = node:fs and the `data` fields in scope;
 * errors ignored) as fast as it can in a worker thread until `stop()`.
 */
export async function startRaceLoop(step: string, data: Record<string, string>): Promise<{ stop: () => Promise<void> }> {
  const { Worker } = await import('node:worker_threads');
  const worker = new Worker(`
    const fs = require('node:fs');
    const { workerData, parentPort } = require('node:worker_threads');
    const { ${Object.keys(data).join(', ')} } = workerData;
    let stop = false;
    parentPort.on('message', () => { stop = true; });
    const loop = () => {
      for (let i = 0; i < 200 && !stop; i++) {
        try { ${step} } catch {}
      }
      if (!stop) setImmediate(loop); else parentPort.postMessage('done');
    };
    loop();
  `, { eval: true, workerData: data });
  return {
    stop: async () => {
      const done = new Promise((res) => worker.once('message', res));
      worker.postMessage('stop');
      await done;
      await worker.terminate();
    },
  };
}

/**
 * Swaps `real` (a folder) for a symlink to `out` and back, as fast as it can, in a worker thread,
 * until `stop()`: the race every walk and search must survive (nothing from `out` returned).
 */
export function startFolderSwapper(real: string, out: string): Promise<{ stop: () => Promise<void> }> {
  return startRaceLoop("fs.renameSync(real, real + '.d'); fs.symlinkSync(out, real); fs.unlinkSync(real); fs.renameSync(real + '.d', real);", { real, out });
}

/** Runs `attempt` over and over for `ms` while `real` is swapped for a link to `out` and back (startFolderSwapper); returns how many attempts ran. */
export async function whileSwapping(real: string, out: string, ms: number, attempt: () => Promise<void> | void): Promise<number> {
  const swapper = await startFolderSwapper(real, out);
  let runs = 0;
  try {
    const end = Date.now() + ms;
    while (Date.now() < end) { await attempt(); runs++; }
  } finally { await swapper.stop(); }
  return runs;
}
