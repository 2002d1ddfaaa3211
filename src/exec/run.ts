import { spawn, type ChildProcess } from 'node:child_process';
import type { OutputCapture } from './capture.js';
import { killTree } from './kill.js';

export interface RunSpec {
  /** What to spawn: bash, or bwrap wrapping bash. */
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** Text for stdin, then closed; 'keep' leaves stdin open for process_write; undefined closes it at once. */
  stdin?: string | 'keep';
  capture: OutputCapture;
  /** Called after every chunk (progress, waiters). */
  onOutput?: () => void;
}

export interface Exit {
  exit_code: number | null;
  signal: string | null;
  duration_ms: number;
}

/**
 * One child process in its own process group (and session), output merged and streamed into
 * a bounded capture. kill() takes the whole group and its descendants down.
 */
export class Running {
  readonly pid: number;
  readonly started = Date.now();
  readonly done: Promise<Exit>;
  exited: Exit | null = null;
  private readonly child: ChildProcess;

  constructor(spec: RunSpec) {
    // node:child_process directly (execa cost ~1–2 ms per spawn in its option and stream handling).
    // The whole environment is given (nothing inherited); the child leads its own session.
    this.child = spawn(spec.file, spec.args, {
      cwd: spec.cwd, env: spec.env, detached: true, windowsHide: true,
      stdio: [spec.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    this.pid = this.child.pid ?? -1; // undefined: the spawn failed (ENOENT…), reported by 'error'
    // stdout and stderr merged in arrival order.
    const onData = (chunk: Buffer) => { spec.capture.push(chunk); spec.onOutput?.(); };
    this.child.stdout?.on('data', onData);
    this.child.stderr?.on('data', onData);
    if (typeof spec.stdin === 'string' && spec.stdin !== 'keep') {
      this.child.stdin?.on('error', () => {});
      this.child.stdin?.end(spec.stdin);
    } else if (spec.stdin === 'keep') {
      this.child.stdin?.on('error', () => {});
    }
    this.done = new Promise<Exit>((resolve) => {
      const settle = (exit_code: number | null, signal: string | null) => {
        if (this.exited) return;
        this.exited = { exit_code, signal, duration_ms: Date.now() - this.started };
        resolve(this.exited);
      };
      // 'close' comes after the exit and the end of both pipes (a `cmd &` child holding them open is waited for).
      this.child.on('close', (code, signal) => settle(signal ? null : code, signal));
      // A spawn that failed (no such program, cwd gone): exit 127 like a shell.
      this.child.on('error', () => { if (this.pid < 0) settle(127, null); });
    });
  }

  /** Writes to stdin (only when it was kept open). */
  write(input: string): Promise<void> {
    const s = this.child.stdin;
    if (!s || s.destroyed || s.writableEnded) return Promise.reject(new Error('stdin is closed'));
    return new Promise((resolve, reject) => s.write(input, (e) => (e ? reject(e) : resolve())));
  }

  kill(): void {
    if (this.pid > 0 && !this.exited) killTree(this.pid);
  }
}
