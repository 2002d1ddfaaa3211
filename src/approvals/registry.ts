import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { runtimeDir } from '../user-state.js';
import { ensurePrivateDir, writePrivateFile } from './private-fs.js';

/** What a running server publishes about itself, for `toolgate approvals|console` (no secret in it). */
export interface ServerEntry {
  pid: number;
  socket: string;
  roots: string[];
  state_dir: string;
  /** The console's address without its secret, null when the console is off. */
  console: string | null;
  started_at: string;
}

export function serversDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(runtimeDir(env), 'servers');
}

export function socketPath(pid: number, env: NodeJS.ProcessEnv = process.env): string {
  return path.join(runtimeDir(env), 'sock', `${pid}.sock`);
}

export function register(entry: ServerEntry, env: NodeJS.ProcessEnv = process.env): string {
  ensurePrivateDir(runtimeDir(env));
  const file = path.join(ensurePrivateDir(serversDir(env)), `${entry.pid}.json`);
  // A running server's entry: still atomic (readers never see half of it), no fsync (start-up path).
  writePrivateFile(file, JSON.stringify(entry) + '\n', { durable: false });
  return file;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The running servers of this user; entries of dead processes are removed on the way. */
export function runningServers(env: NodeJS.ProcessEnv = process.env): ServerEntry[] {
  const dir = serversDir(env);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: ServerEntry[] = [];
  for (const n of names) {
    if (!/^\d+\.json$/.test(n)) continue;
    const file = path.join(dir, n);
    let e: ServerEntry;
    try {
      e = JSON.parse(readFileSync(file, 'utf8')) as ServerEntry;
    } catch {
      continue;
    }
    if (typeof e.pid !== 'number' || typeof e.socket !== 'string') continue;
    if (!alive(e.pid)) {
      rmSync(file, { force: true });
      rmSync(e.socket, { force: true });
      continue;
    }
    out.push(e);
  }
  return out.sort((a, b) => a.pid - b.pid);
}

/** The servers of a workspace: those whose roots include DIR, or whose state dir is DIR. */
export function serversFor(filter: { roots?: string[]; stateDir?: string }, env: NodeJS.ProcessEnv = process.env): ServerEntry[] {
  return runningServers(env).filter((s) => {
    if (filter.stateDir && path.resolve(s.state_dir) !== path.resolve(filter.stateDir)) return false;
    if (filter.roots?.length && !filter.roots.some((r) => s.roots.includes(r))) return false;
    return true;
  });
}
