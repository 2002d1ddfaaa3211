import path from 'node:path';
import { DECISIONS, isDecision, type RequestView } from '../approvals/inbox.js';
import { serversFor, type ServerEntry } from '../approvals/registry.js';
import { askSocket } from '../approvals/socket-server.js';
import { Workspace } from '../workspace/workspace.js';
import { UsageError, type CommonFlags } from './setup.js';
import { interactiveApprovals } from './approvals-tty.js';

export interface ApprovalsFlags extends CommonFlags {
  json?: boolean;
}

/** The running servers the flags point at (--workspace, --state-dir; neither: all of this user's). */
export async function findServers(flags: CommonFlags): Promise<ServerEntry[]> {
  const roots = flags.workspace?.length ? await Workspace.realRoots(flags.workspace) : undefined;
  const stateDir = flags['state-dir'] ? path.resolve(flags['state-dir']) : undefined;
  return serversFor({ roots, stateDir });
}

function where(flags: CommonFlags): string {
  if (flags['state-dir']) return ` with state dir ${flags['state-dir']}`;
  if (flags.workspace?.length) return ` for ${flags.workspace.join(', ')}`;
  return '';
}

/** Every pending request of those servers. */
export async function pendingOf(servers: ServerEntry[]): Promise<RequestView[]> {
  const out: RequestView[] = [];
  for (const s of servers) {
    try {
      const r = await askSocket(s.socket, { op: 'list' });
      if (r.ok && Array.isArray(r.pending)) out.push(...(r.pending as RequestView[]));
    } catch { /* a server that stopped meanwhile */ }
  }
  return out.sort((a, b) => a.created_at.localeCompare(b.created_at));
}

/** Sends an answer to the server that holds the request. */
export async function sendAnswer(servers: ServerEntry[], id: string, decision: string): Promise<{ ok: boolean; message: string }> {
  let last = `no pending request ${JSON.stringify(id)} in the running servers (already answered, withdrawn, or too old); see toolgate approvals list`;
  for (const s of servers) {
    let r: Record<string, unknown>;
    try {
      r = await askSocket(s.socket, { op: 'answer', id, decision });
    } catch {
      continue;
    }
    if (r.ok) return { ok: true, message: r.applied === 'retry' ? `request ${id}: ${decision} — the call had stopped waiting; the answer applies once to its retry` : `request ${id}: ${decision}` };
    if (r.reason !== 'unknown') last = String(r.message);
  }
  return { ok: false, message: last };
}

export function publicView(r: RequestView) {
  return {
    id: r.id, server_pid: r.server_pid, session_id: r.session_id, tool: r.tool, risk: r.risk, args: r.args,
    rule: r.rule, grant: r.grant, diff: r.diff, created_at: r.created_at, waiting: r.waiting, summary: r.summary,
  };
}

export async function approvalsCommand(sub: string | undefined, rest: string[], flags: ApprovalsFlags): Promise<number> {
  const servers = await findServers(flags);
  if (sub === 'answer') {
    const [id, decision] = rest;
    if (!id || !decision) throw new UsageError(`usage: toolgate approvals answer ID ${DECISIONS.join('|')}`);
    if (!isDecision(decision)) throw new UsageError(`the decision must be one of ${DECISIONS.join(', ')}, not "${decision}"`);
    if (servers.length === 0) {
      process.stderr.write(`toolgate: no running toolgate server${where(flags)}\n`);
      return 1;
    }
    const r = await sendAnswer(servers, id, decision);
    (r.ok ? process.stdout : process.stderr).write(`${r.ok ? '' : 'toolgate: '}${r.message}\n`);
    return r.ok ? 0 : 1;
  }
  if (sub === 'list' || (sub === undefined && (!process.stdin.isTTY || !process.stdout.isTTY || flags.json))) {
    const pending = await pendingOf(servers);
    if (flags.json) {
      process.stdout.write(JSON.stringify(pending.map(publicView), null, 2) + '\n');
      return 0;
    }
    if (servers.length === 0) process.stderr.write(`no running toolgate server${where(flags)}\n`);
    if (pending.length === 0) process.stdout.write('No pending approval requests.\n');
    for (const p of pending) {
      process.stdout.write(`${p.id}  ${p.tool} (${p.risk})  ${p.summary}${p.waiting ? '' : '  [stopped waiting: applies to a retry]'}\n    pid ${p.server_pid}, session ${p.session_id}, ${p.created_at}\n`);
    }
    if (pending.length) process.stdout.write(`Answer with: toolgate approvals answer ID ${DECISIONS.join('|')}\n`);
    return 0;
  }
  if (sub !== undefined) throw new UsageError(`usage: toolgate approvals [list [--json] | answer ID ${DECISIONS.join('|')}]`);
  return interactiveApprovals(servers, flags);
}
