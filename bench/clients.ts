import { readFileSync } from 'node:fs';
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
