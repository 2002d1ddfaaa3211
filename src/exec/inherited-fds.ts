import { closeSync, openSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { MARK_BASH, markingOn } from './mark.js';

/** O_CLOEXEC in /proc/PID/fdinfo's octal `flags` (Linux, every architecture Node runs on). */
const O_CLOEXEC = 0o2000000;

/** Whether this process holds `fd` without close-on-exec (its children inherit it); null when /proc cannot tell (gone). */
function inheritable(fd: number | string): boolean | null {
  try {
    const m = /^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'));
    return m ? !(parseInt(m[1]!, 8) & O_CLOEXEC) : null;
  } catch { return null; }
}

/**
 * V8's own logs: opened before any script runs, without close-on-exec, and written to for the life
 * of the process — --perf-basic-prof's /tmp/perf-PID.map, --perf-prof's jit-PID.dump, the log of
 * --prof and --log-* (isolate-0x…-PID-v8.log, or --logfile's name with --no-logfile-per-isolate).
 * Closed, their number would go to the next file the server opens (the audit log) and V8's lines
 * into it. Kept, a command inherits them, as it did before any descriptor was closed.
 */
function isV8Log(fd: number): boolean {
  let target: string;
  try { target = readlinkSync(`/proc/self/fd/${fd}`); } catch { return false; }
  const pid = process.pid;
  const base = path.basename(target);
  if (base === `perf-${pid}.map` || base === `jit-${pid}.dump` || new RegExp(`^isolate-0x[0-9a-f]+-${pid}-`).test(base)) return true;
  const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  const i = flags.findIndex((a) => a === '--logfile' || a.startsWith('--logfile='));
  const logfile = i < 0 ? 'v8.log' : flags[i]!.startsWith('--logfile=') ? flags[i]!.slice(10) : flags[i + 1];
  return !!logfile && flags.includes('--no-logfile-per-isolate') && target === path.resolve(logfile);
}

/**
 * Closes the descriptors above stderr that this process holds without close-on-exec: ones its
 * parent left open for it (a client's, a shell's). Every child would inherit them — each command,
 * the starter, bubblewrap — and a command could read or write what they lead to. Node and libuv
 * open theirs with close-on-exec, V8 its logs without (kept: isV8Log); a Node parent's IPC channel
 * (process.channel) is kept. Linux only (/proc/self/fdinfo); returns the numbers closed. Call
 * before anything is spawned.
 */
export function closeInheritedFds(): number[] {
  if (process.platform !== 'linux') return [];
  const keep = new Set([0, 1, 2]);
  const channel = (process.channel as { fd?: unknown } | undefined)?.fd;
  if (typeof channel === 'number') keep.add(channel);
  let names: string[];
  try { names = readdirSync('/proc/self/fdinfo'); } catch { return []; }
  const closed: number[] = [];
  for (const n of names) {
    const fd = Number(n);
    if (!Number.isInteger(fd) || keep.has(fd)) continue;
    // null: gone (the listing's own descriptor).
    if (inheritable(n) !== true || isV8Log(fd)) continue;
    try { closeSync(fd); closed.push(fd); } catch { /* already closed */ }
  }
  return closed;
}

/**
 * The server's own IPC channel when a child would inherit it: a Node parent put it above fd 16,
 * where Node leaves it without close-on-exec (it marks 3–16 only), and the server keeps it (closing
 * it ends the parent's IPC). Its number, or null (no channel, or one marked close-on-exec).
 */
let leaky: number | null | undefined;
export function leakyChannelFd(): number | null {
  if (leaky !== undefined) return leaky;
  leaky = null;
  const fd = (process.channel as { fd?: unknown } | undefined)?.fd;
  if (process.platform !== 'linux' || typeof fd !== 'number' || fd <= 2) return leaky;
  if (inheritable(fd) === true) leaky = fd;
  return leaky;
}

let devNull = -1;
/**
 * A child's stdio: `base`, and when the child would inherit the server's IPC channel
 * (leakyChannelFd), /dev/null over that descriptor, so the child holds nothing of the channel (a
 * command could otherwise send the parent messages in the server's name). Node has no fcntl: the
 * server cannot mark the channel close-on-exec itself. The entries in between are left as they
 * are ('ignore' above stderr): the server's other descriptors are close-on-exec or closed at start.
 */
export function childStdio<T>(base: readonly T[]): Array<T | 'ignore' | number> {
  const ch = leakyChannelFd();
  if (ch === null) return [...base];
  if (devNull < 0) devNull = openSync('/dev/null', 'r+');
  const out: Array<T | 'ignore' | number> = [...base];
  while (out.length < ch) out.push('ignore');
  out[ch] = devNull;
  return out;
}

/**
 * For a child started by code whose stdio toolgate does not set (the MCP SDK's stdio transport, for
 * upstream servers), when it would inherit the server's IPC channel (leakyChannelFd): the same
 * program (`program`, a path: the caller found it in PATH, so bash's own search, whose default PATH
 * ends in ".", is not used) started through bash (the shell commands run in; POSIX sh need not take
 * a descriptor above 9), which closes the channel and execs it. With `mark` (an upstream server,
 * the starter, a custom tool started directly) bash also sets the mark of an agent's process first
 * (mark.ts). Else as given. What bash would change is put back: BASH_ENV (which bash would source)
 * is handed over under another name and restored; PWD and OLDPWD are restored or unset, and SHLVL
 * is left as it was (bash's exec would set it to 0 when there was none).
 */
export function withoutChannel(program: string, args: readonly string[], env: Record<string, string>, o: { mark?: boolean; closeFd?: number | null } = {}): { command: string; args: string[]; env: Record<string, string> } {
  const ch = o.closeFd !== undefined ? o.closeFd : leakyChannelFd();
  const mark = !!o.mark && markingOn();
  if (ch === null && !mark) return { command: program, args: [...args], env };
  const quote = (v: string) => `'${v.replace(/'/g, `'\\''`)}'`;
  const restore = ['PWD', 'OLDPWD'].map((v) => (env[v] === undefined ? `unset ${v}` : `export ${v}=${quote(env[v]!)}`));
  const out: Record<string, string> = { ...env };
  if (env.BASH_ENV !== undefined) {
    delete out.BASH_ENV;
    out[BASH_ENV_CARRIER] = env.BASH_ENV;
    restore.push(`export BASH_ENV="$${BASH_ENV_CARRIER}"`, `unset ${BASH_ENV_CARRIER}`);
  }
  // bash's exec sets SHLVL to 0 when there was none: env drops it again (unless the program's path
  // holds "=", which env would take for a variable).
  const dropShlvl = env.SHLVL === undefined && !program.includes('=');
  const script = `${mark ? MARK_BASH : ''}${ch === null ? '' : `exec ${ch}>&- && `}${restore.join(' && ')} && exec -- ${dropShlvl ? '/usr/bin/env -u SHLVL -- ' : ''}"$0" "$@"`;
  return { command: '/bin/bash', args: ['--norc', '--noprofile', '-c', script, program, ...args], env: out };
}

const BASH_ENV_CARRIER = 'TOOLGATE_UPSTREAM_BASH_ENV';
