import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { Helper, type RgChild, type RgSpawnOptions } from './rg-starter.js';

export { RG_STARTER_TITLE, HELPER_ANSWER_MS, type RgChild, type RgSpawnOptions } from './rg-starter.js';

/**
 * Starting ripgrep without forking the server. On Linux, libuv starts a child with fork(), and a
 * fork copies the parent's page tables: measured here, 0.9 ms from a 46 MB Node process and
 * 3 ms from a 209 MB one, all of it on the server's only JavaScript thread. A server under load
 * holds 150–180 MB, and every grep and every glob of a large folder starts one rg. So rg is
 * started by a small helper process (plain Node, no toolgate code; 42 MB resident, ~7 MB of it its own), which hands the read
 * end of rg's stdout back over its IPC channel (SCM_RIGHTS): the server then reads rg's output
 * exactly as from a child of its own, and rg's start no longer blocks the server's thread.
 *
 * The helper is started once the server's resident set is at least HELPER_MIN_RSS and it starts
 * rg at least HELPER_MIN_RATE times a second (that start itself runs directly: no wait for the
 * helper); later ones go through it once it said it is ready. If it dies or is wedged, a new one is started (runs it had in flight end
 * with an error, and their callers fall back as for any rg failure); after MAX_HELPER_FAILURES rg
 * is started directly. TOOLGATE_RG_HELPER=off turns it off. Only on Linux.
 */

let helper: Helper | null = null;
let helperFailures = 0;
/** After this many helpers died, rg is started directly for the rest of the process's life. */
const MAX_HELPER_FAILURES = 3;

function useHelper(): boolean {
  if (process.platform !== 'linux') return false;
  const s = process.env.TOOLGATE_RG_HELPER?.trim();
  return !(s && /^(off|0|false|no|none)$/i.test(s));
}

/**
 * Below this resident set the server starts rg itself: a fork from it costs about what the round
 * trip through the starter does (measured: grep on a 10-file folder 5.3 ms direct, 5.6 through the
 * starter at 77 MB; at 180 MB the starter saves 1.3–1.9 ms and all of the fork's 1.3 ms of the
 * server's CPU). A server that never grows this large never starts the starter.
 * TOOLGATE_RG_HELPER=always uses it at any size (tests).
 */
export const HELPER_MIN_RSS = 96 * 1024 * 1024;

/**
 * rg starts per second from which the starter is worth launching. Launching it costs a Node
 * start-up (~50 ms of CPU) while the server works: on 2 cores a glob of drivers/ in the Linux tree
 * (~65 ms, 15 a second back to back) took 111 instead of 68 ms on the two calls that overlapped
 * it, and a start every 65 ms saves ~2 ms each. Under load (the HTTP row: ~190 rg starts a
 * second) the fork's ~2 ms per start is a third of the server's thread, and the launch pays back
 * in a fraction of a second.
 */
export const HELPER_MIN_RATE = 20;

/** rg starts in the current one-second window (counted only while the server is big enough). */
let windowStart = 0;
let windowStarts = 0;

/** Whether this rg start should go through the starter: a big server starting rg often (or TOOLGATE_RG_HELPER=always). */
function worthTheStarter(): boolean {
  if (/^always$/i.test(process.env.TOOLGATE_RG_HELPER?.trim() ?? '')) return true;
  if (process.memoryUsage.rss() < HELPER_MIN_RSS) return false;
  // Once launched (or launching), the starter is used whatever the rate.
  if (helper && !helper.dead) return true;
  const now = Date.now();
  if (now - windowStart >= 1000) { windowStart = now; windowStarts = 0; }
  return ++windowStarts >= HELPER_MIN_RATE;
}

/** The running, ready helper; starts one when there is none (and answers null until it is ready). */
function readyHelper(): Helper | null {
  if (!useHelper() || helperFailures >= MAX_HELPER_FAILURES) return null;
  if (helper && !helper.dead) return helper.ready ? helper : null;
  try {
    const h: Helper = new Helper((unexpected) => {
      if (unexpected) helperFailures++;
      if (helper === h) helper = null;
    });
    helper = h;
  } catch {
    helperFailures++;
  }
  return null;
}

/** Starts rg (through the helper when it is ready, else directly) with stdout a pipe to this process. */
export function spawnRg(bin: string, args: string[], o: RgSpawnOptions): RgChild {
  if (o.cwd.startsWith('/proc/self/') || o.cwd.startsWith('/proc/thread-self/')) throw new Error(`rg's cwd must not be a /proc/self path: ${o.cwd}`);
  const h = worthTheStarter() ? readyHelper() : null;
  if (h) return h.start(bin, args, o);
  return direct(bin, args, o);
}

function direct(bin: string, args: string[], o: RgSpawnOptions): RgChild {
  let child: ChildProcess;
  try {
    child = spawn(bin, args, { cwd: o.cwd, stdio: ['ignore', 'pipe', o.stderr ? 'pipe' : 'ignore'] });
  } catch (e) {
    // Arguments spawn refuses (a NUL byte in a pattern or glob): an error event, as from the
    // helper, so the caller falls back instead of failing the call.
    return refused(e as NodeJS.ErrnoException);
  }
  const wrapped = Object.assign(new EventEmitter(), {
    get pid() { return child.pid; },
    stdout: child.stdout!,
    stderr: child.stderr,
    kill: () => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); },
  });
  child.on('spawn', () => wrapped.emit('spawn', child.pid));
  child.on('error', (e) => wrapped.emit('error', e));
  child.on('close', (code, signal) => wrapped.emit('close', code, signal));
  return wrapped as unknown as RgChild;
}

/** A start spawn refused at once: no process, an 'error' event on the next turn. */
function refused(e: NodeJS.ErrnoException): RgChild {
  const err = Object.assign(new Error(e.message), { code: e.code ?? 'EINVAL' });
  const r = Object.assign(new EventEmitter(), { pid: undefined, stdout: new EventEmitter(), stderr: null, kill: () => {} });
  process.nextTick(() => r.emit('error', err));
  return r as unknown as RgChild;
}

/** For tests: the helper's pid once it is ready (starting it if needed), or null when it is not used. */
export async function helperPidForTests(timeoutMs = 10_000): Promise<number | null> {
  if (!useHelper()) return null;
  const until = Date.now() + timeoutMs;
  for (;;) {
    const h = readyHelper();
    if (h) return h.proc.pid ?? null;
    if (Date.now() > until || helperFailures >= MAX_HELPER_FAILURES) return null;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Stops the helper (tests; a server's exit ends it by closing the channel). */
export function stopRgHelper(): void {
  helper?.stop();
  helper = null;
}

/** Tests: stops the helper and forgets how many died, as in a fresh process. */
export function resetRgHelperForTests(): void {
  stopRgHelper();
  helperFailures = 0;
}

/** The fallback reason for an rg that did not start or whose starter went away (EHELPER: its own words). */
export function startFailure(what: string, e: NodeJS.ErrnoException): string {
  return e.code === 'EHELPER' ? e.message : `${what} could not be started: ${e.code ?? e.message}`;
}
