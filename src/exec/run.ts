import { execa, type ResultPromise } from 'execa';
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
  private readonly child: ResultPromise;

  constructor(spec: RunSpec) {
    this.child = execa(spec.file, spec.args, {
      cwd: spec.cwd, env: spec.env, extendEnv: false,
      stdin: spec.stdin === undefined ? 'ignore' : 'pipe',
      stdout: 'pipe', stderr: 'pipe', all: true, buffer: false,
      detached: true, cleanup: false, reject: false, windowsHide: true,
      stripFinalNewline: false,
    });
    if (this.child.pid === undefined) {
      // Spawn failed (ENOENT…): execa reports it through the promise.
      this.pid = -1;
    } else {
      this.pid = this.child.pid;
    }
    this.child.all?.on('data', (chunk: Buffer) => { spec.capture.push(chunk); spec.onOutput?.(); });
    if (typeof spec.stdin === 'string' && spec.stdin !== 'keep') {
      this.child.stdin?.on('error', () => {});
      this.child.stdin?.end(spec.stdin);
    } else if (spec.stdin === 'keep') {
      this.child.stdin?.on('error', () => {});
    }
    this.done = this.child.then((r) => {
      const exit: Exit = { exit_code: r.exitCode ?? null, signal: r.signal ?? null, duration_ms: Date.now() - this.started };
      if (r.failed && r.exitCode === undefined && !r.signal) exit.exit_code = 127;
      this.exited = exit;
      return exit;
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
