import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import type { RgChild, RgSpawnOptions } from '../../exec/starter.js';
import { bigEnoughForStarter, readyHelper, starterLaunched, starterSetting } from '../../exec/starter-use.js';
import { childStdio } from '../../exec/inherited-fds.js';

export { STARTER_TITLE, HELPER_ANSWER_MS, type RgChild, type RgSpawnOptions } from '../../exec/starter.js';
export { HELPER_MIN_RSS, helperPidForTests, stopStarter, resetStarterForTests } from '../../exec/starter-use.js';

/**
 * Starting ripgrep without forking the server: through the starter process (src/exec/starter-use.ts),
 * which hands the read end of rg's stdout back over its IPC channel (SCM_RIGHTS), so the server
 * reads rg's output exactly as from a child of its own. rg goes through it once the server's
 * resident set is at least HELPER_MIN_RSS and it starts rg at least HELPER_MIN_RATE times a
 * second (that start itself runs directly: no wait for the helper); later ones go through it
 * once it said it is ready. A run whose starter died or was wedged ends with an error, and its
 * caller falls back as for any rg failure.
 */

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

/** Whether this rg start should go through the starter: a big server starting rg often (or TOOLGATE_STARTER=always). */
function worthTheStarter(): boolean {
  const setting = starterSetting();
  if (setting !== 'auto') return setting === 'always';
  // Once launched (or launching, by rg or a command), the starter is used whatever the rate and size.
  if (starterLaunched()) return true;
  if (!bigEnoughForStarter()) return false;
  const now = Date.now();
  if (now - windowStart >= 1000) { windowStart = now; windowStarts = 0; }
  return ++windowStarts >= HELPER_MIN_RATE;
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
    child = spawn(bin, args, { cwd: o.cwd, stdio: childStdio(['ignore', 'pipe', o.stderr ? 'pipe' : 'ignore']) });
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

/** The fallback reason for an rg that did not start or whose starter went away (EHELPER: its own words). */
export function startFailure(what: string, e: NodeJS.ErrnoException): string {
  return e.code === 'EHELPER' ? e.message : `${what} could not be started: ${e.code ?? e.message}`;
}
