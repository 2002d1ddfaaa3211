import { spawn } from 'node:child_process';
import type { OutputCapture } from './capture.js';
import { killGroup, killTree } from './kill.js';
import { readyHelper, starterSetting } from './starter-use.js';
import type { Helper } from './starter.js';
import { childStdio } from './inherited-fds.js';

/** A command's stdin: text (in an object: no text reads as the marker), written then closed; or 'keep': left open for write(). */
export type StdinSpec = { text: string } | 'keep';

export interface RunSpec {
  /** What to spawn: bash, bwrap wrapping bash, or a program exec'd directly (direct.ts). */
  file: string;
  args: string[];
  /** argv[0] when it is not `file` (a program run directly gets the name it was called by, as from bash). */
  argv0?: string;
  cwd: string;
  env: Record<string, string>;
  /** Text for stdin, then closed; 'keep' leaves stdin open for process_write; undefined closes it at once. */
  stdin?: StdinSpec;
  capture: OutputCapture;
  /** Called after every chunk (progress, waiters). */
  onOutput?: () => void;
  /**
   * The starter to start it through (viaStarter(), asked by the caller: a start through the starter
   * is marked by it, a direct one must be marked by its argv, mark.ts); null: started directly.
   */
  via: Helper | null;
}

export interface Exit {
  exit_code: number | null;
  signal: string | null;
  duration_ms: number;
}

/** What Running uses of its child: a ChildProcess of this server's, or one the starter process started (starter.ts). */
interface ChildLike {
  readonly pid?: number | undefined;
  readonly stdout: { on(ev: 'data', cb: (chunk: Buffer) => void): unknown } | null;
  readonly stderr: { on(ev: 'data', cb: (chunk: Buffer) => void): unknown } | null;
  on(ev: 'close', cb: (code: number | null, signal: NodeJS.Signals | null) => void): unknown;
  on(ev: 'error', cb: (e: Error) => void): unknown;
  on(ev: 'spawn', cb: () => void): unknown;
}

/**
 * Whether a command starts through the starter: at any size of this server (starter-use.ts; rg
 * uses it once it runs, or launches it at HELPER_MIN_RSS and a rate). A fork of the server copies
 * its page tables, ~75 MB right after start: measured on 2 cores, `echo hi` over stdio took 2.8 ms
 * through the starter and 3.4 ms forked from the server (p50 of 1,200, 75–107 MB). The first
 * command launches it and runs directly; a server that runs no command never starts it.
 */
export function viaStarter(): Helper | null {
  if (starterSetting() === 'off') return null;
  return readyHelper();
}

/**
 * One child process in its own process group (and session), output merged and streamed into
 * a bounded capture. kill() takes the whole group and its descendants down.
 *
 * The child is started by the starter process (viaStarter: its fork copies the page tables of
 * ~40 MB, not of the server's 75+), which hands both output pipes back: output is read here as
 * from a child of this server. Its pid is then known one message later (`spawned`); the first
 * command of a server starts the starter and runs directly.
 */
export class Running {
  /** The child's pid; -1 until the starter reported it, and for a spawn that failed. */
  pid = -1;
  readonly started = Date.now();
  readonly done: Promise<Exit>;
  /** Settles once the pid is known or the start failed. */
  readonly spawned: Promise<void>;
  exited: Exit | null = null;
  /** Why the start failed (spawn's or the starter's words), when it did. */
  startError: string | null = null;
  private readonly child: ChildLike;
  private readonly write_: (input: string) => Promise<void>;
  private killWanted = false;
  private onKill: () => void = () => {};
  /** Whether the leader has exited and was reaped (its pid may belong to another process by now). */
  private leaderGone: () => boolean;

  constructor(spec: RunSpec) {
    const h = spec.via;
    if (h) {
      const c = h.startCommand(spec.file, spec.args, { cwd: spec.cwd, env: spec.env, stdin: spec.stdin ?? null, ...(spec.argv0 !== undefined ? { argv0: spec.argv0 } : {}) });
      this.child = c;
      this.write_ = (input) => c.write(input);
      this.onKill = () => c.killedByServer();
      this.leaderGone = () => c.exitKnown;
    } else {
      // node:child_process directly (execa cost ~1–2 ms per spawn in its option and stream handling).
      // The whole environment is given (nothing inherited); the child leads its own session.
      const c = spawn(spec.file, spec.args, {
        cwd: spec.cwd, env: spec.env, detached: true, windowsHide: true, ...(spec.argv0 !== undefined ? { argv0: spec.argv0 } : {}),
        stdio: childStdio([spec.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe']),
      });
      this.child = c;
      this.pid = c.pid ?? -1; // undefined: the spawn failed (ENOENT…), reported by 'error'
      this.leaderGone = () => c.exitCode !== null || c.signalCode !== null;
      if (spec.stdin !== undefined) c.stdin?.on('error', () => {});
      if (spec.stdin !== undefined && spec.stdin !== 'keep') c.stdin?.end(spec.stdin.text);
      this.write_ = (input) => {
        const s = c.stdin;
        if (!s || s.destroyed || s.writableEnded) return Promise.reject(new Error('stdin is closed'));
        return new Promise((resolve, reject) => s.write(input, (e) => (e ? reject(e) : resolve())));
      };
    }
    // stdout and stderr merged in arrival order.
    const onData = (chunk: Buffer) => { spec.capture.push(chunk); spec.onOutput?.(); };
    this.child.stdout?.on('data', onData);
    this.child.stderr?.on('data', onData);
    let spawnedNow: () => void = () => {};
    this.spawned = this.pid > 0 || !h ? Promise.resolve() : new Promise((r) => { spawnedNow = r; });
    this.child.on('spawn', () => {
      if (h) this.pid = this.child.pid ?? -1;
      spawnedNow();
      // A kill asked for before the pid was known (through the starter): done now.
      if (this.killWanted && this.pid > 0) killTree(this.pid);
    });
    this.done = new Promise<Exit>((resolve) => {
      const settle = (exit_code: number | null, signal: string | null) => {
        spawnedNow();
        if (this.exited) return;
        this.exited = { exit_code, signal, duration_ms: Date.now() - this.started };
        resolve(this.exited);
      };
      // 'close' comes after the exit and the end of both pipes (a `cmd &` child holding them open is waited for).
      this.child.on('close', (code, signal) => settle(signal ? null : code, signal));
      // A spawn that failed (no such program, cwd gone): exit 127 like a shell. After a start, an
      // error means the starter went away: it killed what it started, and the run ended killed.
      this.child.on('error', (e) => {
        if (this.exited) return;
        if (this.pid < 0) this.startError = e.message;
        spec.capture.push(Buffer.from(`toolgate: ${this.pid < 0 ? 'the command could not be started' : 'the command was ended'}: ${e.message}\n`));
        settle(this.pid < 0 ? 127 : null, this.pid < 0 ? null : 'SIGKILL');
      });
    });
  }

  /** Bytes given to write() that the child's stdin pipe has not taken yet (it reads slower, or not at all). */
  queuedBytes = 0;

  /** The same, for every process of this server (process_write caps both). */
  static queuedAll = 0;

  /** Writes to stdin (only when it was kept open); settles once the pipe took all of it. */
  write(input: string): Promise<void> {
    const n = Buffer.byteLength(input);
    this.queuedBytes += n;
    Running.queuedAll += n;
    const done = () => { this.queuedBytes -= n; Running.queuedAll -= n; };
    const w = this.write_(input);
    w.then(done, done);
    return w;
  }

  /**
   * Kills the tree from this server, also for a child of the starter: the descendants are found
   * by parentage before the group dies (a kill sent to the starter as well would race that walk,
   * and a setsid child orphaned by it would be missed).
   */
  kill(): void {
    if (this.exited) return;
    this.killWanted = true;
    // The leader exited (its children, e.g. a setsid one, hold the pipes open): its pid is free and
    // may be another process's now, and what it left is no longer found from it by parentage. Only
    // its group is killed, while it still has members.
    if (this.pid > 0) { if (this.leaderGone()) killGroup(this.pid); else killTree(this.pid); }
    // Through the starter: its report of the exit is now owed (a stopped starter is killed after HELPER_ANSWER_MS).
    this.onKill();
  }
}
