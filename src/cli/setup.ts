import path from 'node:path';
import type { Logger } from 'pino';
import { Runtime } from '../core/runtime.js';
import { defaultPolicy, loadPolicyFile } from '../policy/load.js';
import type { CompiledPolicy } from '../policy/types.js';
import { createLogger } from '../logger.js';
import { allTools } from '../tools/index.js';
import { Workspace } from '../workspace/workspace.js';
import { CLI_PATH } from '../paths.js';
import { lintPolicy } from '../policy/lint.js';
import { loadCustomTools } from '../tools/custom/index.js';
import { GrantStore } from '../approvals/grant-store.js';

export interface CommonFlags {
  workspace?: string[];
  policy?: string;
  profile?: string;
  mode?: string;
  'state-dir'?: string;
}

export class UsageError extends Error {}

export async function loadPolicy(flags: CommonFlags, stateDir?: string): Promise<CompiledPolicy> {
  const mode = flags.mode;
  if (mode !== undefined && mode !== 'interactive' && mode !== 'ci') throw new UsageError(`--mode must be interactive or ci, not "${mode}"`);
  const protectedAbs = [flags.policy ? path.resolve(flags.policy) : undefined, stateDir].filter((x): x is string => !!x);
  const opts = { profile: flags.profile, mode: mode as 'interactive' | 'ci' | undefined, protectedAbs };
  return flags.policy ? loadPolicyFile(path.resolve(flags.policy), opts) : defaultPolicy(opts);
}

export interface Setup {
  rt: Runtime;
  ceiling: string[] | null;
  log: Logger;
}

/** Builds what serve, call, tools and policy check share: roots, policy, runtime. */
export async function setup(flags: CommonFlags, opts: { upstreamWaitMs?: number; forTool?: string } = {}): Promise<Setup> {
  const log = createLogger();
  const ceiling = flags.workspace?.length ? await Workspace.realRoots(flags.workspace) : null;
  const stateDir = flags['state-dir'] ? path.resolve(flags['state-dir']) : undefined;
  const policy = await loadPolicy(flags, stateDir);
  const flagsForReplay: string[] = [];
  for (const w of ceiling ?? []) flagsForReplay.push('--workspace', w);
  if (flags.policy) flagsForReplay.push('--policy', path.resolve(flags.policy));
  if (flags.profile) flagsForReplay.push('--profile', flags.profile);
  if (stateDir) flagsForReplay.push('--state-dir', stateDir);
  const builtIn = allTools();
  const rt = new Runtime({
    tools: [...builtIn, ...loadCustomTools(policy, builtIn.map((t) => t.name))], policy, log, stateDir,
    replay: { command: ['node', CLI_PATH], flags: flagsForReplay },
    // Stored allow_always grants apply to every call of this user, from the server or `toolgate call`.
    approvals: { grants: new GrantStore(process.env, (m) => log.warn(m)) },
  });
  // Upstream MCP servers connect in parallel; serve waits only a moment (their tools appear when ready).
  // The upstream client (SDK client, its transports) is only loaded when the policy has upstreams: start-up.
  if (Object.keys(policy.data.upstreams).length) {
    const { startUpstreams } = await import('../upstream/manager.js');
    await startUpstreams(rt, { waitMs: opts.upstreamWaitMs ?? 10_000, forTool: opts.forTool });
  }
  for (const w of lintPolicy(policy, [...rt.tools.keys(), ...Object.keys(policy.data.upstreams).map((u) => `${u}__…`)])) log.warn(w);
  return { rt, ceiling, log };
}
