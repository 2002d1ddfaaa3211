import picomatch from 'picomatch';
import pino from 'pino';
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { createLogger } from '../logger.js';
import type { UpstreamConfig } from '../upstream/config.js';
import { connectUpstream, listAllTools } from '../upstream/connect.js';
import { pinFile, pinHash, readPins, trustPins } from '../upstream/pins.js';
import { listedName } from '../upstream/upstream-tool.js';
import { loadPolicy, UsageError, type CommonFlags } from './setup.js';

interface Probe {
  name: string;
  transport: string;
  state: 'ready' | 'failed';
  error?: string;
  pin_file: string;
  pins: 'none' | 'ok' | 'corrupt';
  tools: Array<{ name: string; listed_as: string; pin: 'trusted' | 'changed' | 'new' | 'corrupt' | 'unpinned' }>;
  hashes: Record<string, string>;
}

/** Connects to one upstream itself (not through a running server), lists its mounted tools and compares them with the pins. */
async function probe(name: string, cfg: UpstreamConfig, timeoutMs: number): Promise<Probe> {
  const pins = readPins(name);
  const base: Probe = { name, transport: cfg.command ? 'stdio' : 'http', state: 'failed', pin_file: pinFile(name), pins: pins.kind, tools: [], hashes: Object.create(null) };
  let tools: McpTool[];
  const log = process.env.TOOLGATE_LOG_LEVEL ? createLogger() : pino({ level: 'silent' });
  try {
    const conn = await connectUpstream(name, cfg, { env: process.env, log, timeoutMs, setup: () => {} });
    base.transport = conn.kind;
    try { tools = await listAllTools(conn.client, timeoutMs); } finally { await conn.client.close().catch(() => {}); }
  } catch (e) {
    return { ...base, error: (e as Error)?.message ?? String(e) };
  }
  const wanted = cfg.tools ? picomatch(cfg.tools) : () => true;
  for (const t of tools.filter((x) => wanted(x.name))) {
    const h = pinHash(t);
    base.hashes[t.name] = h;
    const pinned = pins.kind === 'ok' ? pins.pins.tools[t.name] : undefined;
    const pin = pins.kind === 'none' ? 'unpinned' : pins.kind === 'corrupt' ? 'corrupt' : pinned === undefined ? 'new' : pinned === h ? 'trusted' : 'changed';
    base.tools.push({ name: t.name, listed_as: listedName(name, t.name), pin });
  }
  return { ...base, state: 'ready' };
}

export async function upstreamCommand(sub: string | undefined, args: string[], flags: CommonFlags & { json?: boolean }): Promise<number> {
  const policy = await loadPolicy(flags);
  const ups = policy.data.upstreams;
  if (sub === 'list') {
    const probes = await Promise.all(Object.entries(ups).map(([n, c]) => probe(n, c, 15_000)));
    if (flags.json) {
      process.stdout.write(JSON.stringify(probes.map(({ hashes: _h, ...p }) => p), null, 2) + '\n');
      return 0;
    }
    if (probes.length === 0) process.stdout.write(`no upstreams in ${policy.origin}\n`);
    for (const p of probes) {
      const pending = p.tools.filter((t) => t.pin === 'changed' || t.pin === 'new' || t.pin === 'corrupt');
      process.stdout.write(`${p.name}  ${p.state}${p.error ? ` (${p.error})` : ''}  ${p.transport}  ${p.tools.length} tools${pending.length ? `, ${pending.length} pending trust: toolgate upstream trust ${p.name}` : ''}\n`);
      if (p.pins === 'corrupt') process.stdout.write(`  pin file ${p.pin_file} is corrupt: every tool is refused until trusted again\n`);
      for (const t of p.tools) process.stdout.write(`  ${t.listed_as.padEnd(40)} ${t.pin}\n`);
    }
    return probes.some((p) => p.state === 'failed') ? 1 : 0;
  }
  if (sub === 'trust') {
    const [name, tool] = args;
    if (!name) throw new UsageError('usage: toolgate upstream trust NAME [TOOL]');
    const cfg = ups[name];
    if (!cfg) throw new UsageError(`no upstream "${name}" in ${policy.origin}; upstreams: ${Object.keys(ups).join(', ') || '(none)'}`);
    const p = await probe(name, cfg, 15_000);
    if (p.state === 'failed') {
      process.stderr.write(`toolgate: cannot reach upstream ${name}: ${p.error}\n`);
      return 1;
    }
    const changed = trustPins(name, p.hashes, tool);
    process.stdout.write(changed.length
      ? `trusted ${changed.map((t) => listedName(name, t)).join(', ')} (${pinFile(name)})\n`
      : `nothing to trust: ${tool ? listedName(name, tool) : `every tool of ${name}`} is already pinned as it is now\n`);
    return 0;
  }
  throw new UsageError('usage: toolgate upstream list [--json] | toolgate upstream trust NAME [TOOL]');
}
