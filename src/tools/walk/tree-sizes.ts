/**
 * How big the folders glob and grep started from were, per workspace (absolute path → entries
 * the built-in walk visited, or "more than N" when it gave up at a budget of N). glob and grep
 * search a small folder themselves (starting `rg` costs more than walking a few hundred entries)
 * and hand a big one to ripgrep. A hint only picks the engine: both give the same answer, and a
 * folder that grew is caught by the walk's budget. Bounded (least recently used dropped).
 */
const MAX_ENTRIES = 1024;

export class TreeSizes {
  /** Entries (≥ 0), or -N: more than N. */
  private readonly sizes = new Map<string, number>();

  /** The folder is known to hold more than `max` entries. */
  over(abs: string, max: number): boolean {
    const v = this.sizes.get(abs);
    return v !== undefined && (v < 0 ? -v >= max : v > max);
  }

  /** The folder is known to hold at most `max` entries. */
  within(abs: string, max: number): boolean {
    const v = this.sizes.get(abs);
    return v !== undefined && v >= 0 && v <= max;
  }

  set(abs: string, entries: number): void {
    this.put(abs, Math.max(0, entries));
  }

  /** A walk gave up after `n` entries (n ≥ 1). */
  setMoreThan(abs: string, n: number): void {
    this.put(abs, -Math.max(1, n));
  }

  private put(abs: string, v: number): void {
    this.sizes.delete(abs);
    this.sizes.set(abs, v);
    if (this.sizes.size > MAX_ENTRIES) this.sizes.delete(this.sizes.keys().next().value!);
  }
}
