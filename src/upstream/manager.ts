import path from 'node:path';
import { circuitFor } from '../core/circuit.js';
import { ToolError } from '../core/errors.js';
import type { Runtime } from '../core/runtime.js';
import { Upstream } from './upstream.js';

export interface StartOptions {
  /** How long start-up waits for the upstreams before serving without them (their tools appear later). */
  waitMs: number;
  env?: NodeJS.ProcessEnv;
  connectTimeoutMs?: number;
  /** Start only the upstream this tool belongs to (`toolgate call github__x` needs no other). */
  forTool?: string;
  backoff?: { firstMs: number; maxMs: number };
}

/**
 * Connects every upstream of the policy in parallel, one connection each, shared by every
 * session; their tools are published into the runtime as they become ready. Start-up waits at
 * most `waitMs`: a slow or broken upstream never holds up the server or the other tools.
 */
export async function startUpstreams(rt: Runtime, opts: StartOptions): Promise<Upstream[]> {
  // One call from the CLI needs only its own upstream: the others are not even started.
  const cfgs = Object.entries(rt.policy.data.upstreams).filter(([name]) => !opts.forTool || opts.forTool.startsWith(`${name}__`));
  if (cfgs.length === 0) return [];
  // A stdio upstream's folder is fixed now, absolute: restarts must not inherit wherever the
  // process is then (list_dir steps into folders, and its step back can fail: dir-stat.ts).
  const ups = cfgs.map(([name, cfg]) => new Upstream(name, cfg.command ? { ...cfg, cwd: path.resolve(cfg.cwd ?? '.') } : cfg, {
    log: rt.log, env: opts.env ?? process.env,
    timeoutMs: rt.policy.data.limits.timeout_ms, elicitTimeoutMs: rt.policy.data.approvals.timeout_ms,
    connectTimeoutMs: opts.connectTimeoutMs, backoff: opts.backoff,
    publish: (tools) => {
      rt.setTools(`upstream:${name}`, tools);
      // A restarted upstream starts with a clean record: its failures while down are not held against it.
      for (const t of tools) circuitFor(rt).record(t.name, null);
    },
  }));
  rt.onClose(() => Promise.allSettled(ups.map((u) => u.close())));
  rt.onMissingTool((tool) => {
    const u = ups.find((x) => tool.startsWith(`${x.name}__`));
    if (!u || u.state === 'ready') return undefined;
    try { u.ensureReady(); } catch (e) { return e as ToolError; }
    return new ToolError('IOError', `upstream ${u.name} is not ready.`);
  });
  const first = ups.map((u) => u.start());
  await Promise.race([Promise.allSettled(first), new Promise((r) => setTimeout(r, opts.waitMs).unref())]);
  return ups;
}
