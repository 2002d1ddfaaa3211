import { readFileSync } from 'node:fs';
import { childrenMap } from '../src/exec/kill.js';
import { STARTER_TITLE } from '../src/tools/grep/rg-spawn.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const TOOLGATE_CLI = path.join(REPO, 'dist', 'cli.js');
export const FS_SERVER = path.join(REPO, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');

export interface Connected {
  client: Client;
  tools: Set<string>;
  /** The server process (for its peak RSS). */
  pid: number | null;
  close(): Promise<void>;
}

export async function connect(args: string[], env: Record<string, string> = {}): Promise<Connected> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args,
    stderr: process.env.BENCH_STDERR ? 'inherit' : 'ignore',
    env: { ...(process.env as Record<string, string>), TOOLGATE_LOG_LEVEL: 'error', ...env },
  });
  const client = new Client({ name: 'toolgate-bench', version: '1.0.0' });
  await client.connect(transport);
  const tools = new Set((await client.listTools()).tools.map((t) => t.name));
  return { client, tools, pid: transport.pid, close: () => client.close() };
}

/** Calls a tool and fails loudly when the result is an error: a benchmark of failures measures nothing. */
export async function callOk(c: Connected, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  let r;
  try {
    r = await c.client.callTool({ name, arguments: args }, undefined, { timeout: 600_000 });
  } catch (e) {
    throw new Error(`${name} ${JSON.stringify(args).slice(0, 200)}: ${(e as Error).message}`);
  }
  if (r.isError) {
    const text = (r.content as Array<{ text?: string }>)?.[0]?.text ?? '';
    throw new Error(`${name} failed: ${text.slice(0, 300)}`);
  }
  return (r.structuredContent ?? {}) as Record<string, unknown>;
}

/** Peak resident set of a live process in MB (VmHWM), or undefined off Linux. */
export function peakRssMb(pid: number | null): number | undefined {
  if (!pid) return undefined;
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** The pids of a process's children whose command line contains `marker` (Linux /proc). */
export function childPids(pid: number, marker?: string): number[] {
  return (childrenMap().get(pid) ?? []).filter((p) => {
    if (!marker) return true;
    try { return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(marker); } catch { return false; }
  });
}

/** Memory only this process holds, MB (Private_Clean + Private_Dirty of /proc/PID/smaps_rollup): its share beyond what it maps in common with others, such as the node binary. */
export function privateMb(pid: number): number {
  try {
    const t = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(t)?.[1] ?? 0);
    return (kb('Private_Clean') + kb('Private_Dirty')) / 1024;
  } catch { return 0; }
}

/**
 * toolgate's peak memory in MB: the server's peak resident set (VmHWM, as for the filesystem server)
 * plus what its starter process (src/exec/starter.ts) holds of its own. The starter is a
 * plain node process: most of its ~42 MB resident set is the node binary, shared with the server.
 */
export function toolgatePeakRssMb(pid: number | null): number | undefined {
  const own = peakRssMb(pid);
  if (own === undefined || !pid) return own;
  return own + childPids(pid, STARTER_TITLE).reduce((sum, p) => sum + privateMb(p), 0);
}
