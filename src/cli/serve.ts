import { createMcpSession } from '../server/mcp-server.js';
import { LineStdioTransport } from '../server/stdio-transport.js';
import { setup, UsageError, type CommonFlags } from './setup.js';
import { startApprovalHost } from '../approvals/host.js';
import { closeInheritedFds } from '../exec/inherited-fds.js';

export interface ServeFlags extends CommonFlags {
  transport?: string;
  host?: string;
  port?: string;
  console?: string;
}

/** --console off | PORT (default: a free port). */
export function consoleOption(v: string | undefined): 'off' | number {
  if (v === undefined) return 0;
  if (v === 'off') return 'off';
  if (!/^\d{1,5}$/.test(v) || Number(v) > 65535) throw new UsageError(`--console must be off or a port number, not "${v}"`);
  return Number(v);
}

export async function serve(flags: ServeFlags): Promise<void> {
  const transport = flags.transport ?? 'stdio';
  if (transport !== 'stdio' && transport !== 'http') throw new UsageError(`--transport must be stdio or http, not "${transport}"`);
  const consolePort = consoleOption(flags.console);
  // Before anything is spawned (upstreams, the starter, commands): they would inherit them.
  const closedFds = closeInheritedFds();
  const { rt, ceiling, log } = await setup(flags, { upstreamWaitMs: 2500 });
  if (closedFds.length) log.info({ fds: closedFds }, 'closed descriptors inherited without close-on-exec (every command would have inherited them)');
  if (!ceiling) log.warn('no --workspace given: the client\'s MCP roots will be the workspace; without them every call fails');
  const host = await startApprovalHost(rt, { ceiling, stateDir: rt.stateDir(ceiling?.[0]), console: consolePort, log });
  process.on('exit', () => host.close());
  if (transport === 'http') {
    const { serveHttp } = await import('../server/http.js');
    await serveHttp(rt, ceiling, { host: flags.host ?? '127.0.0.1', port: Number(flags.port ?? 3333) });
    return;
  }
  const mcp = createMcpSession(rt, ceiling);
  let closing = false;
  // On a signal, calls in flight are cancelled; when the client closes stdin after sending its
  // requests (`printf … | toolgate`), they are answered first (up to 30 s).
  const shutdown = async (why: string, graceMs = 0) => {
    if (closing) return;
    closing = true;
    log.info({ why }, 'shutting down');
    await mcp.close({ graceMs });
    rt.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.stdin.on('end', () => void shutdown('stdin closed', 30_000));
  // Our own reader: answers JSON-RPC batches and malformed lines, which the SDK's drops.
  const t = new LineStdioTransport();
  t.fastPath = mcp.fastPath;
  t.onclose = () => void shutdown('transport closed');
  await mcp.server.connect(t);
  log.info({ roots: ceiling, policy: rt.policy.origin, profile: rt.policy.profile, mode: rt.policy.mode }, 'toolgate serving on stdio');
  if (process.stdin.isTTY) {
    process.stderr.write('toolgate speaks MCP (JSON-RPC) on stdin/stdout: connect it from an MCP client (see the README for config snippets). Ctrl-C stops it.\n');
  }
}
