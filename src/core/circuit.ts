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
 * A per-tool circuit breaker, shared by every session of one runtime. `threshold` consecutive
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

  /** Records how a call that passed check() ended: an error code, or null for success. */
  record(tool: string, code: ErrorCode | null): void {
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

  isOpen(tool: string): boolean {
    const s = this.state.get(tool);
    return !!s && s.openUntil > this.opts.now();
  }
}

const byRuntime = new WeakMap<object, CircuitBreaker>();

/** The breaker of one runtime (all its sessions share it); created on first use. */
export function circuitFor(rt: object): CircuitBreaker {
  let c = byRuntime.get(rt);
  if (!c) {
    c = new CircuitBreaker();
    byRuntime.set(rt, c);
  }
  return c;
}
