import { accessSync, constants, readFileSync } from 'node:fs';

/**
 * The mark every process toolgate starts for a command, a custom tool or an upstream server
 * carries: a hard limit on file locks (RLIMIT_LOCKS) of at most MARK. Linux has not enforced that
 * limit since 2.4.25, so it changes nothing a program does; it is inherited by every descendant
 * (through setsid, a double fork, a daemon's re-parenting), and an unprivileged process can lower a
 * hard limit but never raise it again. So the approval inbox and the console can tell a person's
 * process (no mark: the limit is normally unlimited) from one an agent's command started, without
 * a sandbox (src/approvals/peer.ts). A process running as root can raise it (CAP_SYS_RESOURCE).
 */
export const MARK = 999_999;

const BASH = '/bin/bash';

/** Whether marking works here: Linux (the mark is read from /proc) with /bin/bash (its `ulimit -x` sets it). */
export function markingOn(): boolean {
  if (cached === undefined) {
    cached = false;
    if (process.platform === 'linux') {
      try {
        accessSync(BASH, constants.X_OK);
        cached = hardLocks(readFileSync('/proc/self/limits', 'utf8')) !== null;
      } catch { /* no bash or no /proc: nothing is marked */ }
    }
  }
  return cached;
}
let cached: boolean | undefined;

/**
 * Bash text that marks the shell it runs in before anything else (a limit already at or below the
 * mark stays). A shell that cannot be marked exits 126 with a message: nothing runs unmarked.
 */
export const MARK_BASH = `ulimit -x ${MARK} 2>/dev/null || [ "$(ulimit -H -x)" -le ${MARK} ] 2>/dev/null || { echo "toolgate: this command could not be marked (ulimit -x)" >&2; exit 126; }; `;

/** A bash command line that runs MARK_BASH first; unchanged where marking does not work. */
export function markScript(script: string): string {
  return markingOn() ? MARK_BASH + script : script;
}

/** The hard RLIMIT_LOCKS of a /proc/PID/limits text: a number, Infinity for unlimited, null when absent. */
export function hardLocks(limits: string): number | null {
  const m = /^Max file locks\s+\S+\s+(\S+)/m.exec(limits);
  if (!m) return null;
  if (m[1] === 'unlimited') return Infinity;
  const n = Number(m[1]);
  return Number.isFinite(n) ? n : null;
}

/** Whether process `pid` carries the mark; null when its limits cannot be read (gone, or not readable). */
export function isMarked(pid: number): boolean | null {
  try {
    const h = hardLocks(readFileSync(`/proc/${pid}/limits`, 'utf8'));
    return h === null ? null : h <= MARK;
  } catch {
    return null;
  }
}

/**
 * Whether a process of the user may ptrace any other of the user's (no Yama, or ptrace_scope 0):
 * then an unsandboxed command can take over the server or your shell, and the mark stops nothing.
 */
export function ptraceOpen(): boolean {
  if (process.platform !== 'linux') return false;
  try { return readFileSync('/proc/sys/kernel/yama/ptrace_scope', 'utf8').trim() === '0'; } catch { return true; }
}
