import { createHash, randomBytes } from 'node:crypto';

export const DECISIONS = ['allow_once', 'allow_session', 'allow_always', 'deny'] as const;
export type ApprovalDecision = (typeof DECISIONS)[number];
/** Where an answer came from (audited). */
export type AnswerSource = 'elicitation' | 'console' | 'cli';

export function isDecision(v: unknown): v is ApprovalDecision {
  return typeof v === 'string' && (DECISIONS as readonly string[]).includes(v);
}

export interface Answer {
  id: string;
  decision: ApprovalDecision;
  source: AnswerSource;
}

/** What a person sees of a pending request (the shape of `toolgate approvals list --json`). */
export interface RequestView {
  id: string;
  server_pid: number;
  session_id: string;
  tool: string;
  risk: string;
  args: unknown;
  rule: string;
  /** What allow_session / allow_always would grant, for a human. */
  grant: string[];
  /** The same as a policy rule (YAML). */
  grant_rule: string;
  /** The unified diff the call would make, null when it changes no file. */
  diff: string | null;
  summary: string;
  created_at: string;
  /** True while the call waits; false once it gave up (an answer then applies to a retry). */
  waiting: boolean;
}

export type NewRequest = Omit<RequestView, 'id' | 'server_pid' | 'created_at' | 'waiting'>;

interface Entry {
  view: RequestView;
  key: string;
  state: 'waiting' | 'expired' | 'answered-late';
  /** Until when an expired request can be answered, or a late answer used. */
  until: number;
  answer?: Answer;
  resolve?: (a: Answer) => void;
}

/** At most this many requests are kept (waiting or answerable for a retry): a model flooding asks cannot fill memory. */
export const MAX_ENTRIES = 100;

export type AnswerResult = { ok: true; applied: 'now' | 'retry' } | { ok: false; reason: 'unknown' | 'answered' | 'invalid'; message: string };

/**
 * Same tool, same arguments (keys in any order), and — when given — the same session (another
 * session has other roots: the same relative path is another file): what a retry must match.
 */
export function requestKey(tool: string, args: unknown, session = ''): string {
  const stable = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(stable);
    if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, stable((v as Record<string, unknown>)[k])]));
    return v;
  };
  return createHash('sha256').update(session).update('\0').update(tool).update('\0').update(JSON.stringify(stable(args))).digest('hex');
}

/**
 * The pending approvals of this server process, from every session and transport. An answer is
 * taken once, only for a request of this process that still waits or whose wait ended less than
 * retry_window_ms ago (then it applies, once, to a retry of the same call).
 */
export class Inbox {
  private readonly entries = new Map<string, Entry>();
  private readonly listeners = new Set<() => void>();
  /** Requests already answered or withdrawn (so a second answer is told so). */
  private readonly done = new Map<string, number>();

  constructor(private readonly retryWindowMs: number, private readonly now: () => number = Date.now) {}

  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private changed(): void {
    for (const fn of this.listeners) {
      try { fn(); } catch { /* a listener's failure is its own */ }
    }
  }

  private sweep(): void {
    const t = this.now();
    for (const [id, e] of this.entries) if (e.state !== 'waiting' && e.until < t) this.entries.delete(id);
    for (const [id, until] of this.done) if (until < t) this.done.delete(id);
  }

  private finish(id: string): void {
    this.entries.delete(id);
    this.done.set(id, this.now() + this.retryWindowMs);
  }

  private newId(): string {
    for (;;) {
      const id = randomBytes(3).toString('hex');
      if (!this.entries.has(id) && !this.done.has(id)) return id;
    }
  }

  /**
   * Adds a request; `waiting: false` (ci mode) makes it answerable for a later retry only.
   * When MAX_ENTRIES are kept, the oldest one that no longer waits makes room; when every one
   * still waits, returns undefined (the call is refused, not queued).
   */
  open(req: NewRequest, tool: string, args: unknown, waiting = true): { id: string; answered: Promise<Answer> } | undefined {
    this.sweep();
    for (const [old, e] of this.entries) {
      if (this.entries.size < MAX_ENTRIES) break;
      if (e.state !== 'waiting') this.finish(old);
    }
    if (this.entries.size >= MAX_ENTRIES) return undefined;
    const id = this.newId();
    const view: RequestView = { ...req, id, server_pid: process.pid, created_at: new Date(this.now()).toISOString(), waiting };
    let resolve!: (a: Answer) => void;
    const answered = new Promise<Answer>((r) => { resolve = r; });
    this.entries.set(id, { view, key: requestKey(tool, args, req.session_id), state: waiting ? 'waiting' : 'expired', until: this.now() + this.retryWindowMs, resolve: waiting ? resolve : undefined });
    this.changed();
    return { id, answered };
  }

  /** The wait ended without an answer: the request stays answerable for a retry. */
  expire(id: string): void {
    const e = this.entries.get(id);
    if (!e || e.state !== 'waiting') return;
    e.state = 'expired';
    e.view = { ...e.view, waiting: false };
    e.resolve = undefined;
    e.until = this.now() + this.retryWindowMs;
    this.changed();
  }

  /** The request is over (answered through the form, or the call was cancelled): remove it. */
  close(id: string): void {
    if (!this.entries.has(id)) return;
    this.finish(id);
    this.changed();
  }

  answer(id: string, decision: unknown, source: AnswerSource): AnswerResult {
    this.sweep();
    if (!isDecision(decision)) return { ok: false, reason: 'invalid', message: `decision must be one of ${DECISIONS.join(', ')}` };
    const e = typeof id === 'string' ? this.entries.get(id) : undefined;
    if (!e && this.done.has(id)) return { ok: false, reason: 'answered', message: `request ${id} was already answered (or its call was cancelled)` };
    if (!e) return { ok: false, reason: 'unknown', message: `no pending request ${JSON.stringify(id)} in this server (already answered, withdrawn, or too old)` };
    if (e.state === 'answered-late') return { ok: false, reason: 'answered', message: `request ${id} was already answered` };
    const a: Answer = { id, decision, source };
    if (e.state === 'waiting') {
      this.finish(id);
      e.resolve?.(a);
      this.changed();
      return { ok: true, applied: 'now' };
    }
    e.state = 'answered-late';
    e.answer = a;
    e.until = this.now() + this.retryWindowMs;
    this.changed();
    return { ok: true, applied: 'retry' };
  }

  /** A late answer for exactly this call of this session, used once. */
  takeLate(tool: string, args: unknown, session = ''): Answer | undefined {
    this.sweep();
    const key = requestKey(tool, args, session);
    for (const [id, e] of this.entries) {
      if (e.state === 'answered-late' && e.key === key && e.answer) {
        this.finish(id);
        this.changed();
        return e.answer;
      }
    }
    return undefined;
  }

  /** Requests a person can still answer: waiting ones, and those whose wait ended within the window. */
  pending(): RequestView[] {
    this.sweep();
    return [...this.entries.values()].filter((e) => e.state !== 'answered-late').map((e) => e.view);
  }

  get(id: string): RequestView | undefined {
    const e = this.entries.get(id);
    return e && e.state !== 'answered-late' ? e.view : undefined;
  }
}
