import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { killTree, procStartTime } from './kill.js';
import { HELPER_NODE_ARGS, HELPER_SOURCE, STARTER_TITLE, type HelperMsg } from './starter-program.js';
import { childStdio, leakyChannelFd, withoutChannel } from './inherited-fds.js';
import type { CommandSpawnOptions, RgChild, RgSpawnOptions } from './starter-types.js';

export { STARTER_TITLE };
export type { CommandSpawnOptions, RgChild, RgSpawnOptions };

/**
 * The server's side of the starter process's channel (its program: starter-program.ts):
 * one HelperChild per rg or command it started. When and whether it is used:
 * starter-use.ts (lifecycle, commands) and src/tools/grep/rg-spawn.ts (rg).
 */

/**
 * How long the helper may owe an answer (a start, or an exit after a kill) while nothing at all
 * comes from it, before it is taken for wedged (stopped, starved) and killed: its runs end with
 * EHELPER and callers fall back. Else a stopped helper held every search past its time cap.
 * Heard from, it may owe one for HELPER_ANSWER_LOOKS such waits (a starter stopped and let go in
 * turns by a command says a little every few seconds: it must not hold a run for ever).
 */
export const HELPER_ANSWER_MS = 3000;
export const HELPER_ANSWER_LOOKS = 3;

/** Bytes of stdin per 'write' message (sent base64); one in flight per command. */
const STDIN_CHUNK = 48 * 1024;

export class HelperChild extends EventEmitter implements RgChild {
  pid: number | undefined;
  readonly stdout = new EventEmitter();
  readonly stderr: EventEmitter | null;
  private exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private outDone = false;
  /** A command's stderr is a pipe of its own (handed over after stdout); rg's arrives as text with the exit. */
  private errDone: boolean;
  private ended = false;
  /** stdin not yet written, in order: chunks of writes, and its end. */
  private stdinEnded = false;
  private stdinQueue: ({ buf: Buffer; off: number; done: (error: string | null) => void } | { end: true })[] = [];
  /** The chunk the helper is writing: its number and what its answer settles. */
  private inFlight: { n: number; last: boolean; done: (error: string | null) => void } | null = null;
  private nextWrite = 1;
  /** stdout (and a command's stderr), once they arrived. */
  socket: Socket | null = null;
  errSocket: Socket | null = null;
  killed = false;
  /** The command's start time in /proc/PID/stat, as the helper read it right after starting it. */
  private startTime: string | null = null;
  /** Runs out when the helper owes an answer for too long (HELPER_ANSWER_MS). */
  private owed: NodeJS.Timeout | null = null;

  constructor(readonly id: number, private readonly h: Helper, wantStderr: boolean, readonly command = false) {
    super();
    this.stderr = wantStderr || command ? new EventEmitter() : null;
    this.errDone = !command;
    this.expectAnswer();
  }

  /** Writes to a command's stdin (started with stdin 'keep'), through the helper. */
  write(data: string): Promise<void> {
    // Once its end is queued (stdin text still being written), nothing may follow: it would be dropped unseen.
    if (this.ended || this.exit || this.stdinEnded) return Promise.reject(new Error('stdin is closed'));
    return new Promise((resolve, reject) => {
      this.stdinQueue.push({ buf: Buffer.from(data, 'utf8'), off: 0, done: (error) => (error ? reject(new Error(error)) : resolve()) });
      this.pumpStdin();
    });
  }

  /** Closes a command's stdin once everything queued before is written. */
  endStdin(): void {
    this.stdinEnded = true;
    this.stdinQueue.push({ end: true });
    this.pumpStdin();
  }

  /** Sends the next stdin chunk once the helper wrote the last one (its heap is 24 MB: a 10 MB stdin at once killed it). */
  private pumpStdin(): void {
    while (!this.inFlight && !this.ended && this.stdinQueue.length) {
      const head = this.stdinQueue[0]!;
      if ('end' in head) {
        this.stdinQueue.shift();
        this.h.send({ t: 'end', id: this.id });
        continue;
      }
      const chunk = head.buf.subarray(head.off, head.off + STDIN_CHUNK);
      head.off += chunk.length;
      const last = head.off >= head.buf.length;
      if (last) this.stdinQueue.shift();
      const n = this.nextWrite++;
      this.inFlight = { n, last, done: head.done };
      this.h.send({ t: 'write', id: this.id, n, data: chunk.toString('base64') });
    }
  }

  onWrote(n: number, error: string | null): void {
    const w = this.inFlight;
    if (!w || w.n !== n) return;
    this.inFlight = null;
    if (error) {
      // The rest of that write is dropped; what was queued after it still goes (as a stream would).
      const head = this.stdinQueue[0];
      if (!w.last && head && 'buf' in head && head.done === w.done) this.stdinQueue.shift();
      w.done(error);
    } else if (w.last) w.done(null);
    this.pumpStdin();
  }

  /** Settles every write not yet done with `error`. */
  private dropWrites(error: string): void {
    const w = this.inFlight;
    this.inFlight = null;
    if (w) w.done(error);
    for (const q of this.stdinQueue) if ('buf' in q && q.done !== w?.done) q.done(error);
    this.stdinQueue = [];
  }

  /** A command's stderr pipe. */
  onStderr(socket: Socket | undefined): void {
    if (!socket) { this.errDone = true; this.settle(); return; }
    this.errSocket = socket;
    socket.on('data', (c: Buffer) => this.stderr?.emit('data', c));
    socket.on('error', () => { /* ends in close */ });
    socket.on('close', () => { this.errDone = true; this.settle(); });
  }

  kill(): void {
    if (this.killed || this.ended) return;
    this.killed = true;
    // Messages arrive in order: a kill sent before the helper's answer still finds the child.
    this.h.send({ t: 'kill', id: this.id });
    this.expectAnswer();
  }

  /** A command killed by the server itself (run.ts, killTree): the helper now owes its exit (else a stopped helper held the run, its timeout and the session's close). */
  killedByServer(): void {
    if (this.killed || this.ended || this.exit) return;
    this.killed = true;
    this.expectAnswer();
  }

  /** Whether what the helper started has exited and was reaped (its pid may be another's): reported, or /proc/PID is another process or none. */
  get exitKnown(): boolean {
    if (this.exit !== null) return true;
    if (!this.pid || this.startTime === null) return false;
    return procStartTime(this.pid) !== this.startTime;
  }

  /** The helper owes an answer: rg's start (no pid yet) or, once killed, its exit. */
  private owes(): boolean {
    return !this.ended && (this.pid === undefined || (this.killed && !this.exit));
  }

  private expectAnswer(look = 1): void {
    if (this.owed) clearTimeout(this.owed);
    // After this process's poll phase: answers waiting in the channel are read first. Heard from
    // meanwhile, it is behind (after a stall here, pipes come one round trip each), not wedged.
    // Looks are counted, not time: a stall of this thread is not the helper's.
    this.owed = setTimeout(() => setImmediate(() => {
      if (!this.owes()) return;
      if (look < HELPER_ANSWER_LOOKS && this.h.heardWithin(HELPER_ANSWER_MS)) this.expectAnswer(look + 1);
      else this.h.unresponsive();
    }), HELPER_ANSWER_MS);
    this.owed.unref();
  }

  private stopWaiting(): void {
    if (this.owed) clearTimeout(this.owed);
    this.owed = null;
  }

  onSpawned(pid: number, socket: Socket | undefined, start: string | null = null): void {
    this.pid = pid;
    this.startTime = start;
    if (!this.killed) this.stopWaiting();
    this.emit('spawn', pid);
    if (!socket) { this.outDone = true; return; }
    this.socket = socket;
    socket.on('data', (c: Buffer) => this.stdout.emit('data', c));
    socket.on('error', () => { /* ends in close */ });
    socket.on('close', () => { this.outDone = true; this.settle(); });
  }

  onExit(code: number | null, signal: NodeJS.Signals | null, stderr: string): void {
    this.exit = { code, signal };
    if (stderr && this.stderr) this.stderr.emit('data', Buffer.from(stderr, 'utf8'));
    this.settle();
  }

  /** The helper could not start rg, or the helper itself went away. */
  fail(code: string, message: string): void {
    if (this.ended) return;
    this.ended = true;
    this.stopWaiting();
    this.h.forget(this.id);
    // rg may still run (its helper died): its open stdout proves it has not exited, so its pid is still
    // its own. Not for a command whose exit was reported (a child of it may hold stdout): run.ts kills its group.
    if (this.socket && !this.outDone && this.pid && !this.exit) {
      if (this.command) killTree(this.pid);
      else try { process.kill(this.pid, 'SIGKILL'); } catch { /* gone */ }
    }
    this.socket?.destroy();
    this.errSocket?.destroy();
    this.dropWrites(message);
    this.emit('error', Object.assign(new Error(message), { code }));
  }

  private settle(): void {
    if (this.ended || !this.exit || !this.outDone || !this.errDone) return;
    this.dropWrites('stdin is closed');
    this.ended = true;
    this.stopWaiting();
    this.h.forget(this.id);
    this.emit('close', this.exit.code, this.exit.signal);
  }
}

export class Helper {
  readonly proc: ChildProcess;
  ready = false;
  dead = false;
  private readonly runs = new Map<number, HelperChild>();
  private nextId = 1;
  /** Ended by stop() (not a failure); found wedged (unresponsive), not merely gone. */
  private stopping = false;
  private silent = false;
  private why = `the starter process (${STARTER_TITLE}) exited`; // set by die(), for a run handed to it after

  /** `onDie(unexpected)`: called once when it dies; unexpected unless stop() ended it. */
  constructor(private readonly onDie: (unexpected: boolean) => void) {
    // The server's IPC channel, when inherited, comes covered by /dev/null and is closed first thing (its argument).
    const covered = leakyChannelFd();
    // Marked (mark.ts): everything it starts carries the mark of an agent's command.
    const { command, args, env } = withoutChannel(process.execPath, [...HELPER_NODE_ARGS, '-e', HELPER_SOURCE, ...(covered === null ? [] : [String(covered)])],
      { ...(process.env as Record<string, string>), NODE_OPTIONS: '' }, { mark: true, closeFd: null });
    this.proc = spawn(command, args, {
      // Nothing of the helper may reach stdout, the protocol channel in stdio mode.
      stdio: childStdio(['ignore', 'ignore', 'inherit', 'ipc']),
      env,
      serialization: 'json',
    });
    this.proc.unref();
    this.proc.channel?.unref();
    this.proc.on('message', (m: HelperMsg, handle: unknown) => this.onMessage(m, handle as Socket | undefined));
    this.proc.on('error', () => this.die());
    this.proc.on('exit', () => this.die());
    this.proc.on('disconnect', () => this.die());
  }

  private heardAt = 0; // when a message from the helper last arrived (performance.now())
  heardWithin = (ms: number) => performance.now() - this.heardAt < ms;

  private onMessage(m: HelperMsg, handle: Socket | undefined): void {
    this.heardAt = performance.now();
    if (m.t === 'ready') { this.ready = true; return; }
    const run = this.runs.get(m.id);
    if (!run) { (handle as Socket | undefined)?.destroy(); return; }
    if (m.t === 'spawned') run.onSpawned(m.pid, handle, m.start ?? null);
    else if (m.t === 'exit') run.onExit(m.code, m.signal, m.stderr);
    else if (m.t === 'error') run.fail(m.code, m.message);
    else if (m.t === 'stderr') run.onStderr(handle);
    else if (m.t === 'wrote') run.onWrote(m.n, m.error);
  }

  /** A new run, tracked until it ends; while one is in flight the channel keeps the event loop alive (its answer must arrive). */
  private track(wantStderr: boolean, command: boolean): HelperChild {
    const run = new HelperChild(this.nextId++, this, wantStderr, command);
    // Died since the caller chose it (launch() awaits the sandbox's masks in between): die() failed
    // the runs it knew and send() drops this one's message, so no answer would ever come.
    if (this.dead) { queueMicrotask(() => run.fail('EHELPER', `${this.why} before the start`)); return run; }
    this.runs.set(run.id, run);
    if (this.runs.size === 1) this.proc.channel?.ref();
    return run;
  }

  start(bin: string, args: string[], o: RgSpawnOptions): HelperChild {
    const run = this.track(o.stderr, false);
    this.send({ t: 'spawn', id: run.id, bin, args, cwd: o.cwd, stderr: o.stderr });
    return run;
  }

  /** Starts a command in its own session; both output pipes come back (run.ts reads them as from its own child). */
  startCommand(bin: string, args: string[], o: CommandSpawnOptions): HelperChild {
    const run = this.track(true, true);
    this.send({ t: 'cmd', id: run.id, bin, args, cwd: o.cwd, env: o.env, stdin: o.stdin === null ? null : 'pipe', ...(o.argv0 !== undefined ? { argv0: o.argv0 } : {}) });
    // stdin text goes in chunks as process_write's, then stdin is closed (a failed write: closed or ended).
    if (o.stdin !== null && o.stdin !== 'keep') { run.write(o.stdin.text).catch(() => {}); run.endStdin(); }
    return run;
  }

  send(m: object): void {
    if (this.dead) return;
    try { this.proc.send(m); } catch { this.die(); }
  }

  forget(id: number): void {
    this.runs.delete(id);
    if (this.runs.size === 0) this.proc.channel?.unref();
  }

  private die(): void {
    if (this.dead) return;
    this.dead = true;
    this.ready = false;
    this.onDie(!this.stopping);
    this.why = this.silent ? `the starter process (${STARTER_TITLE}) did not answer for ${HELPER_ANSWER_MS / 1000} s, or ${HELPER_ANSWER_LOOKS * HELPER_ANSWER_MS / 1000} s while it said other things (stopped?), and was killed` : `the starter process (${STARTER_TITLE}) exited`;
    const why = this.silent ? this.why : `${this.why} while what it started ran`;
    for (const run of [...this.runs.values()]) queueMicrotask(() => run.fail('EHELPER', why));
    try { this.proc.kill('SIGKILL'); } catch { /* gone */ }
  }

  stop(): void {
    this.stopping = true;
    this.die();
  }

  /** A run waited too long for an answer: the helper is wedged; it is killed and counts as died. */
  unresponsive(): void {
    if (this.dead) return;
    this.silent = true;
    // Still this server's unreaped child (stopped, starved): what it started is found by parentage
    // now, before it dies and they are orphaned — also a command it forked but never reported
    // (its pid unknown here; a command under sandbox none can stop its starter that early).
    if (this.proc.pid) killTree(this.proc.pid);
    this.die();
  }
}
