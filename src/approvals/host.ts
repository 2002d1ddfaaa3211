import { rmSync } from 'node:fs';
import type { Logger } from 'pino';
import type { Runtime } from '../core/runtime.js';
import type { ConsoleServer } from '../console/server.js';
import { CallLog } from '../console/calls.js';
import { GrantStore } from './grant-store.js';
import { Inbox, type RequestView } from './inbox.js';
import { notifier } from './notify.js';
import { register, socketPath } from './registry.js';
import { markingOn, ptraceOpen } from '../exec/mark.js';
import { chooseBackend } from '../exec/sandbox.js';
import { starterPid } from '../exec/starter-use.js';
import { judgePeer } from './peer.js';
import { listenSocket } from './socket-server.js';

export interface HostOptions {
  ceiling: string[] | null;
  stateDir: string;
  /** 'off', or a port (0: a free one). */
  console: 'off' | number;
  log: Logger;
  env?: NodeJS.ProcessEnv;
}

export interface ApprovalHost {
  console: ConsoleServer | null;
  socket: string | null;
  /** Synchronous, so it can run on the way out of the process. */
  close(): void;
}

/**
 * What makes a server process answerable out of band: the inbox, the Unix socket that
 * `toolgate approvals` talks to, the registry entry that finds it, and the console.
 */
export async function startApprovalHost(rt: Runtime, o: HostOptions): Promise<ApprovalHost> {
  const env = o.env ?? process.env;
  const inbox = new Inbox(rt.policy.data.approvals.retry_window_ms);
  const grants = rt.approvals?.grants ?? new GrantStore(env, (m) => o.log.warn(m));
  const calls = new CallLog();
  rt.onCall((r) => calls.add(r));
  const roots = new Set(o.ceiling ?? []);
  // Answers only from a person's process, not from one an agent's command started (peer.ts).
  const own = () => { const p = starterPid(); return p === null ? [] : [p]; };
  // Looked at after start-up (finding bubblewrap starts a process): nothing waits for it.
  setTimeout(() => {
    if (!markingOn() || !ptraceOpen()) return;
    void chooseBackend(rt.policy.data.sandbox.backend).then((c) => {
      if (c.backend === 'none') o.log.warn('ptrace is not restricted on this machine (kernel.yama.ptrace_scope is 0 or absent): without bubblewrap a command can take over this server or any process of yours, approvals included. Use bubblewrap, or set kernel.yama.ptrace_scope=1.');
    }, () => {});
  }, 1000).unref();
  const refused = (where: string) => (what: string, message: string) => o.log.warn({ where, what }, `an answer was refused: ${message}`);

  let con: ConsoleServer | null = null;
  if (o.console !== 'off') {
    try {
      const { startConsole } = await import('../console/server.js');
      con = await startConsole({
        inbox, grants, calls, roots: () => [...roots], auditFiles: () => rt.auditFiles(),
        onCallEvent: (fn) => rt.onCall(() => fn()),
        judgePeer: async (sock) => {
          const v = await judgePeer('tcp', sock, { own });
          if (!v.ok) refused('console')('answer', v.message);
          return v;
        },
      }, o.console);
      // The secret goes to the person only: stderr, never a log line or a tool result.
      process.stderr.write(`toolgate console: ${con.loginUrl()}\n`);
    } catch (e) {
      o.log.warn({ err: (e as Error).message }, 'the console could not start; approvals still work with `toolgate approvals`');
    }
  }
  const notify = notifier(env);
  const announce = (req: RequestView) => {
    if (!notify) return;
    const where = con ? `Open ${con.loginUrl(`/r/${req.id}`)}` : 'Run `toolgate approvals` to answer.';
    notify(`toolgate: approve ${req.tool}? (request ${req.id})`, `${req.summary}\n${where}`);
  };

  let socket: string | null = socketPath(process.pid, env);
  let registryFile: string | null = null;
  try {
    await listenSocket(socket, {
      inbox, consoleLogin: () => (con ? con.loginUrl() : null),
      judgePeer: (conn) => judgePeer('unix', conn, { own }), refused: refused('cli'),
    });
    registryFile = register({
      pid: process.pid, socket, roots: [...roots], state_dir: o.stateDir,
      console: con ? con.url() : null, started_at: new Date().toISOString(),
    }, env);
  } catch (e) {
    o.log.warn({ err: (e as Error).message }, '`toolgate approvals` cannot reach this server (no socket); use the console');
    socket = null;
  }

  rt.opts.approvals = {
    grants, inbox,
    consoleUrl: con ? (id) => con!.url(id ? `/r/${id}` : '/') : undefined,
    announce,
    warn: (m) => o.log.warn(m),
  };
  return {
    console: con,
    socket,
    close() {
      if (registryFile) rmSync(registryFile, { force: true });
      if (socket) rmSync(socket, { force: true });
      void con?.close();
    },
  };
}
