import type { StdinSpec } from './run.js';

// The types of what the starter starts (starter.ts), for its callers: rg-spawn.ts and run.ts.

/** What callers use of a started rg: the subset of ChildProcess they need. */
export interface RgChild {
  /** rg's process id, once known (through the helper, one message later than the start). */
  readonly pid: number | undefined;
  readonly stdout: { on(ev: 'data', cb: (chunk: Buffer) => void): unknown };
  readonly stderr: { on(ev: 'data', cb: (chunk: Buffer) => void): unknown } | null;
  /** SIGKILL, also when called before the pid is known. */
  kill(): void;
  on(ev: 'error', cb: (e: NodeJS.ErrnoException) => void): this;
  on(ev: 'close', cb: (code: number | null, signal: NodeJS.Signals | null) => void): this;
  on(ev: 'spawn', cb: (pid: number) => void): this;
}

/** A command started through the helper (run.ts): its own session, this environment, these stdin bytes. */
export interface CommandSpawnOptions {
  cwd: string;
  env: Record<string, string>;
  stdin: StdinSpec | null; // null: no stdin
  argv0?: string; // when it is not `bin` (a program exec'd as bash would: by the name it was called)
}

export interface RgSpawnOptions {
  cwd: string; // rg's working directory; never a /proc/self path (the helper would read its own)
  stderr: boolean; // collect stderr (else it is discarded)
}
