import { ToolError, type ErrorCode } from './errors.js';

/** Failures of the machine, not of the call: only these count towards opening the circuit. */
const INFRASTRUCTURE: ReadonlySet<ErrorCode> = new Set(['IOError', 'Timeout', 'Internal']);

export interface CircuitOptions {
  /** Consecutive infrastructure failures that open the circuit. */
  threshold: number;
  /** How long it stays open. */
  openMs: number;
  now: () => number;
}

interface ToolState {
  failures: number;
  openUntil: number;
}

/**
 * A per-tool circuit breaker of one session (see circuitFor). `threshold` consecutive
 * infrastructure failures open it for `openMs`; calls meanwhile fail fast with CircuitOpen.
 * After that one trial call runs (half-open): a failure re-opens it at once, a success closes it.
 */
export class CircuitBreaker {
  private readonly opts: CircuitOptions;
  private readonly state = new Map<string, ToolState>();

  constructor(opts: Partial<CircuitOptions> = {}) {
    this.opts = { threshold: 3, openMs: 300_000, now: Date.now, ...opts };
  }

  /** Throws CircuitOpen while the tool's circuit is open. */
  check(tool: string): void {
    const s = this.state.get(tool);
    if (!s || s.openUntil === 0) return;
    const now = this.opts.now();
    if (now < s.openUntil) {
      const retryAt = new Date(s.openUntil).toISOString();
      throw new ToolError('CircuitOpen',
        `${tool} failed ${this.opts.threshold} times in a row (I/O errors or time-outs) and is paused until ${retryAt}; use another tool or try again then.`,
        { details: { tool, retry_at: retryAt, retry_in_ms: s.openUntil - now, failures: s.failures } });
    }
    // Half-open: let this call through; one more failure re-opens.
    s.openUntil = 0;
    s.failures = this.opts.threshold - 1;
  }

  /**
   * Records how a call that passed check() ended: an error (or its code), or null for success.
   * An error marked as the command's own failure (commandFailure) neither counts nor resets.
   */
  record(tool: string, outcome: ErrorCode | ToolError | null): void {
    if (outcome instanceof ToolError && isCommandFailure(outcome)) return;
    const code = outcome instanceof ToolError ? outcome.code : outcome;
    if (code === null) {
      this.state.delete(tool);
      return;
    }
    if (!INFRASTRUCTURE.has(code)) return; // user errors (NoMatch, ExitNonZero, …) neither count nor reset
    const s = this.state.get(tool) ?? { failures: 0, openUntil: 0 };
    s.failures++;
    if (s.failures >= this.opts.threshold) s.openUntil = this.opts.now() + this.opts.openMs;
    this.state.set(tool, s);
  }

  /** No tool has a failure on record. */
  idle(): boolean {
    return this.state.size === 0;
  }

  isOpen(tool: string): boolean {
    const s = this.state.get(tool);
    return !!s && s.openUntil > this.opts.now();
  }
}

const COMMAND_FAILURE = Symbol('toolgate.commandFailure');

/**
 * Marks an error as the failure of what the tool ran (a command that timed out or exited
 * non-zero, an upstream server still restarting), not of the tool itself: the breaker ignores it.
 */
export function commandFailure<E extends ToolError>(e: E): E {
  Object.defineProperty(e, COMMAND_FAILURE, { value: true });
  return e;
}

export function isCommandFailure(e: ToolError): boolean {
  return (e as unknown as Record<symbol, unknown>)[COMMAND_FAILURE] === true;
}

/** Sessions whose breaker is kept per runtime; the oldest idle ones are forgotten past this. */
const MAX_SESSIONS = 1000;
const byRuntime = new WeakMap<object, Map<string, CircuitBreaker>>();

/**
 * The breaker of one session of a runtime: one session's failures never pause a tool for
 * another session. Created on first use.
 */
export function circuitFor(rt: object, sessionId = ''): CircuitBreaker {
  let m = byRuntime.get(rt);
  if (!m) {
    m = new Map();
    byRuntime.set(rt, m);
  }
  let c = m.get(sessionId);
  if (!c) {
    if (m.size >= MAX_SESSIONS) {
      // Forget the oldest breaker that holds no failures (Map keeps insertion order).
      for (const [k, b] of m) if (b.idle()) { m.delete(k); break; }
    }
    c = new CircuitBreaker();
    m.set(sessionId, c);
  }
  return c;
}
