import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { ToolError } from '../../core/errors.js';
import type { JsPattern } from './regex.js';
import type { TextHits } from './search-text.js';
import { linearInJs } from './small.js';
import type { OutputMode } from './types.js';

/** The file the worker runs: beside cli.js in dist/, or beside this module in src/ (tests, run through tsx). */
const FROM_SOURCE = import.meta.url.endsWith('.ts');
const WORKER_URL = new URL(FROM_SOURCE ? './regex-worker.ts' : './regex-worker.js', import.meta.url);

/** Characters of text posted to the worker in one message at most (more waits for the next). */
const BATCH_CHARS = 1 << 20;

/**
 * Workers running at once, all calls and sessions together; a search past it waits for one to
 * end (its time cap and cancel still apply). Each is a thread with its own heap (up to 256 MB)
 * and a core while a match runs away: 60 concurrent runaway searches took +844 MB and every core.
 */
export const MAX_WORKERS = Math.max(4, availableParallelism());
let running = 0;
const waiting: Array<() => void> = [];

/** Workers running now (tests). */
export function runningWorkers(): number {
  return running;
}

function releaseSlot(): void {
  const next = waiting.shift();
  if (next) next(); // the slot passes on
  else running--;
}

/** What a search returned once its time cap ended the worker: treat as the walk's own time cap. */
export const EXPIRED = Symbol('expired');
export type Found = TextHits | null | typeof EXPIRED;

/**
 * Whether a pattern needs the worker: a regex that JavaScript may backtrack on (linearInJs),
 * judged on the JavaScript source that runs, not on the rg pattern it was translated from.
 */
export function needsWorker(pat: JsPattern): boolean {
  return !linearInJs(pat.re.source, true);
}

/**
 * Runs a pattern over file texts in a worker thread of its own, so that a backtracking pattern
 * (`(a+)+b`, `.*.*x` over a long line: seconds to hours in JavaScript's engine) never holds the
 * server's thread: other calls and sessions go on, and the call's cancel, time limit or the
 * search's time cap end the worker, and with it the runaway match. Texts are handled in order;
 * the worker starts on the first text (~30 ms) and ends with close().
 */
export class RegexMatcher {
  private worker: Worker | null = null;
  /** Its share of MAX_WORKERS: none yet, waited for (the texts queue meanwhile), held until end(). */
  private slot: 'none' | 'waiting' | 'held' = 'none';
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (f: Found) => void; reject: (e: unknown) => void }>();
  private ended: { error: unknown } | { expired: true } | null = null;
  private readonly timer: NodeJS.Timeout;
  private readonly onAbort: () => void;

  constructor(
    private readonly pat: JsPattern,
    /** limit: content records kept a file (searchText). */
    private readonly q: { multiline: boolean; mode: OutputMode; context: number; limit?: number },
    private readonly signal: AbortSignal,
    deadline: number,
  ) {
    this.onAbort = () => this.end({ error: new ToolError('Cancelled', 'The search was cancelled.') });
    signal.addEventListener('abort', this.onAbort, { once: true });
    this.timer = setTimeout(() => this.end({ expired: true }), Math.max(0, deadline - Date.now()));
    this.timer.unref();
    // Made after the call was cancelled (the built-in walk starts one at its first long text): ended at once.
    if (signal.aborted) this.onAbort();
  }

  /** Texts waiting to be posted: one message a batch (a message each cost ~50 µs a file). */
  private queue: Array<{ id: number; text: string }> = [];
  private queuedChars = 0;

  search(text: string): Promise<Found> {
    if (this.ended) return 'expired' in this.ended ? Promise.resolve(EXPIRED) : Promise.reject(this.ended.error);
    const id = this.nextId++;
    return new Promise<Found>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (this.queue.length === 0) queueMicrotask(this.post);
      this.queue.push({ id, text });
      this.queuedChars += text.length;
      if (this.queuedChars >= BATCH_CHARS) this.post();
    });
  }

  private readonly post = () => {
    if (this.queue.length === 0 || this.ended) return;
    if (this.slot === 'waiting') return;
    if (this.slot === 'none') {
      if (running >= MAX_WORKERS) {
        this.slot = 'waiting';
        waiting.push(this.granted);
        return;
      }
      running++;
      this.slot = 'held';
    }
    let w: Worker;
    try {
      w = this.worker ??= this.start();
    } catch (e) {
      // Here from a microtask too, where a throw would end the process.
      this.end({ error: new ToolError('Internal', `the built-in regex engine did not start: ${(e as Error).message}`) });
      return;
    }
    w.postMessage(this.queue);
    this.queue = [];
    this.queuedChars = 0;
  };

  private readonly granted = () => {
    this.slot = 'held';
    this.post();
  };

  private start(): Worker {
    const options = {
      workerData: { source: this.pat.re.source, flags: this.pat.re.flags, literal: this.pat.literal, ...this.q },
      // A runaway match must not take the server's memory with it.
      resourceLimits: { maxOldGenerationSizeMb: 256 },
      stdout: true, stderr: true,
    };
    // From source (tests): the worker registers tsx's hooks itself (Node 20 does not carry them into a worker).
    const w = FROM_SOURCE
      ? new Worker(`import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((t) => { t.register(); return import(${JSON.stringify(WORKER_URL.href)}); })`, { ...options, eval: true })
      : new Worker(WORKER_URL, options);
    w.unref();
    w.on('message', (m: { id: number; found: TextHits | null }) => {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      p?.resolve(m.found);
    });
    w.on('error', (e) => this.end({ error: new ToolError('Internal', `the built-in regex engine stopped: ${e.message}`) }));
    w.on('exit', () => { if (!this.ended) this.end({ error: new ToolError('Internal', 'the built-in regex engine stopped unexpectedly') }); });
    return w;
  }

  /** Ends the worker (a runaway match with it) and settles every text still waiting. */
  private end(how: { error: unknown } | { expired: true }): void {
    if (this.ended) return;
    this.ended = how;
    clearTimeout(this.timer);
    this.signal.removeEventListener('abort', this.onAbort);
    const w = this.worker;
    this.worker = null;
    // A held slot passes on once the worker's thread has ended, not when it is told to: a
    // runaway match takes a moment to stop, and MAX_WORKERS bounds the threads that exist.
    if (this.slot === 'held') { if (w) w.terminate().then(releaseSlot, releaseSlot); else releaseSlot(); }
    else if (this.slot === 'waiting') waiting.splice(waiting.indexOf(this.granted), 1);
    this.slot = 'none';
    for (const p of this.pending.values()) {
      if ('expired' in how) p.resolve(EXPIRED);
      else p.reject(how.error);
    }
    this.pending.clear();
    this.queue = [];
  }

  close(): void {
    this.end({ expired: true });
  }
}
