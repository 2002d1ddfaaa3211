import { readdirSync, readFileSync } from 'node:fs';

const HAS_PROC = process.platform === 'linux';
/** How often a running rg is looked at (ms). */
export const FIFO_CHECK_MS = 200;
/** Where a Linux thread sleeps while it opens a FIFO that has no other end yet (fs/pipe.c). */
const FIFO_WAIT = 'wait_for_partner';

/** The reason given when rg was stopped for waiting on a FIFO (the caller falls back to the built-in engine). */
export const FIFO_REASON = 'ripgrep stopped at a named pipe (FIFO) in the tree: it opens files named like ignore files (.gitignore, .ignore, .rgignore) whatever their type, and waits on a FIFO forever';

/** True when a thread of process `pid` is waiting to open a FIFO (Linux: /proc/PID/task/TID/wchan). */
export function blockedOnFifo(pid: number): boolean {
  let tasks: string[];
  try { tasks = readdirSync(`/proc/${pid}/task`); } catch { return false; }
  for (const t of tasks) {
    try { if (readFileSync(`/proc/${pid}/task/${t}/wchan`, 'utf8').trim() === FIFO_WAIT) return true; } catch { /* gone */ }
  }
  return false;
}

/** A watch on one rg: `blocked` once it was found waiting on a FIFO (and `onBlocked` was called). */
export interface FifoWatch {
  readonly blocked: boolean;
  stop(): void;
}

/**
 * Looks at a running rg every FIFO_CHECK_MS and calls `onBlocked` (the caller's kill) once if it
 * waits to open a FIFO. rg never searches a FIFO it finds in a walk, but it opens every file named
 * like an ignore file, and a FIFO there (`mkfifo .gitignore`, one command) would hold a search
 * until its time cap. Linux only (elsewhere the time cap still ends it).
 */
export function watchFifoOpens(pid: number | undefined | (() => number | undefined), onBlocked: () => void): FifoWatch {
  const w = { blocked: false, stop: () => {} };
  // A function: the pid is known later (rg started through the helper, rg-spawn.ts).
  const pidNow = typeof pid === 'function' ? pid : () => pid;
  if (!HAS_PROC || (typeof pid !== 'function' && !pid)) return w;
  const timer = setInterval(() => {
    const p = pidNow();
    if (!p || !blockedOnFifo(p)) return;
    clearInterval(timer);
    w.blocked = true;
    onBlocked();
  }, FIFO_CHECK_MS);
  timer.unref();
  w.stop = () => clearInterval(timer);
  return w;
}
