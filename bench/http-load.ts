/**
 * HTTP load: N concurrent MCP sessions (3 of 4 Streamable HTTP, 1 of 4 legacy SSE) against a
 * spawned `dist/cli.js --transport http`, each doing `callsPerSession` mixed calls (display,
 * list_dir, read_file, grep, glob — whichever are registered). Reports throughput, latency, and
 * the server's file descriptors / RSS / child processes before and after (leaks show there).
 *
 *   node --import tsx bench/http-load.ts [sessions] [callsPerSession] [rounds]
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { spawnHttpServer, type SpawnedHttp } from '../src/server/http-spawn.js';
import { STARTER_TITLE } from '../src/tools/grep/rg-spawn.js';
import { childPids } from './clients.js';

export interface HttpLoadResult {
  calls_per_s: number;
  p50_ms: number;
  p99_ms: number;
  failed: number;
  fds_before: number;
  fds_after: number;
  rss_before_mb: number;
  rss_after_mb: number;
  /** Child processes of the server left after the run (should be 0). */
  children_after: number;
  /** CPU per call: the server itself, its children (rg, and the starter with what it started), and this load generator (the SDK clients). */
  server_cpu_ms_per_call: number;
  children_cpu_ms_per_call: number;
  client_cpu_ms_per_call: number;
}

/** The process's own and its waited-for children's CPU time, ms (/proc/PID/stat utime+stime, cutime+cstime). */
function cpuMs(pid: number): { own: number; children: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const tick = 1000 / 100; // USER_HZ is 100 on Linux
  return { own: (Number(f[11]) + Number(f[12])) * tick, children: (Number(f[13]) + Number(f[14])) * tick };
}

function fdCount(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round((Number(m[1]) / 1024) * 10) / 10 : NaN;
}

/** Child processes of the server other than its starter (which lives as long as the server). */
function childCount(pid: number): number {
  return childPids(pid).filter((p) => !childPids(pid, STARTER_TITLE).includes(p)).length;
}

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function makeWorkspace(): string {
  const dir = path.join(os.tmpdir(), `tg-http-load-${process.pid}`);
  mkdirSync(path.join(dir, 'src', 'lib'), { recursive: true });
  for (let i = 0; i < 40; i++) {
    const lines = Array.from({ length: 60 }, (_, j) => `export const value_${i}_${j} = ${j}; // ${j % 7 === 0 ? 'TODO tidy' : 'ok'}`);
    writeFileSync(path.join(dir, i % 2 ? 'src' : 'src/lib', `file${i}.ts`), lines.join('\n') + '\n');
  }
  writeFileSync(path.join(dir, 'README.md'), '# load test\n');
  return dir;
}

async function connect(srv: SpawnedHttp, sse: boolean) {
  const requestInit = { headers: { Authorization: `Bearer ${srv.token}` } };
  const transport = sse
    ? new SSEClientTransport(new URL(`${srv.url}/sse`), { requestInit })
    : new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit });
  const client = new Client({ name: 'http-load', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

type Call = { name: string; arguments: Record<string, unknown> };

function mix(tools: Set<string>): Call[] {
  const all: Call[] = [
    { name: 'display', arguments: { content: 'working…', level: 'progress' } },
    { name: 'list_dir', arguments: { path: 'src' } },
    { name: 'read_file', arguments: { path: 'src/file1.ts', limit: 20 } },
    { name: 'grep', arguments: { pattern: 'TODO', path: 'src', output_mode: 'count' } },
    { name: 'glob', arguments: { pattern: '**/*.ts' } },
    { name: 'read_file', arguments: { path: 'README.md' } },
  ];
  return all.filter((c) => tools.has(c.name));
}

export async function benchHttpLoad(opts: { sessions: number; callsPerSession: number; rounds?: number; cli?: string }): Promise<HttpLoadResult> {
  const ws = makeWorkspace();
  const srv = await spawnHttpServer(['--workspace', ws], { env: { TOOLGATE_LOG_LEVEL: 'error' }, ...(opts.cli ? { cli: opts.cli } : {}) });
  const pid = srv.proc.pid!;
  try {
    // Warm up one session (JIT, parser wasm, first audit open), then take the "before" numbers.
    const warm = await connect(srv, false);
    const tools = new Set((await warm.client.listTools()).tools.map((t) => t.name));
    const calls = mix(tools);
    for (const c of calls) await warm.client.callTool(c);
    await (warm.transport as StreamableHTTPClientTransport).terminateSession();
    await warm.client.close();
    await new Promise((r) => setTimeout(r, 300));
    const fds_before = fdCount(pid);
    const rss_before_mb = rssMb(pid);

    const latencies: number[] = [];
    let failed = 0;
    const started = performance.now();
    // rg and commands run as children of the server's starter (src/exec/starter.ts): its CPU, and the starter's own, count as the server's children's.
    const starters = childPids(pid, STARTER_TITLE);
    const childrenCpu = () => cpuMs(pid).children + starters.reduce((sum, p) => { try { const c = cpuMs(p); return sum + c.own + c.children; } catch { return sum; } }, 0);
    const cpu0 = cpuMs(pid);
    const kids0 = childrenCpu();
    const client0 = process.cpuUsage();
    // More than one round shows whether memory keeps growing with the work done (a leak) or levels off.
    for (let round = 0; round < (opts.rounds ?? 1); round++) {
    if (round > 0) process.stderr.write(`round ${round}: rss ${rssMb(pid)} MB, fds ${fdCount(pid)}\n`);
    await Promise.all(Array.from({ length: opts.sessions }, async (_, s) => {
      const sse = s % 4 === 3;
      const { client, transport } = await connect(srv, sse);
      for (let i = 0; i < opts.callsPerSession; i++) {
        const c = calls[(i + s) % calls.length]!;
        const t0 = performance.now();
        try {
          const r = await client.callTool(c);
          if (r.isError || (r.structuredContent as { ok?: boolean } | undefined)?.ok !== true) failed++;
        } catch {
          failed++;
        }
        latencies.push(performance.now() - t0);
      }
      if (!sse) await (transport as StreamableHTTPClientTransport).terminateSession().catch(() => {});
      await client.close();
    }));
    }
    const elapsed = (performance.now() - started) / 1000;
    const cpu1 = cpuMs(pid);
    const kids1 = childrenCpu();
    const client1 = process.cpuUsage(client0);
    // Let the server close the sessions and the clients' idle keep-alive sockets (5 s) before counting.
    for (let i = 0; i < 40 && fdCount(pid) > fds_before; i++) await new Promise((r) => setTimeout(r, 250));
    latencies.sort((a, b) => a - b);
    const round = (x: number) => Math.round(x * 100) / 100;
    return {
      calls_per_s: Math.round(latencies.length / elapsed),
      p50_ms: round(pct(latencies, 50)),
      p99_ms: round(pct(latencies, 99)),
      failed,
      fds_before,
      fds_after: fdCount(pid),
      rss_before_mb,
      rss_after_mb: rssMb(pid),
      children_after: childCount(pid),
      server_cpu_ms_per_call: round((cpu1.own - cpu0.own) / latencies.length),
      children_cpu_ms_per_call: round((kids1 - kids0) / latencies.length),
      client_cpu_ms_per_call: round((client1.user + client1.system) / 1000 / latencies.length),
    };
  } finally {
    await srv.stop();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const sessions = Number(process.argv[2] ?? 20);
  const callsPerSession = Number(process.argv[3] ?? 1000);
  const rounds = Number(process.argv[4] ?? 1);
  benchHttpLoad({ sessions, callsPerSession, rounds }).then((r) => {
    process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
  }, (e: unknown) => {
    process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
    process.exitCode = 1;
  });
}
