/**
 * How big the folders glob started from were, per workspace (absolute path → entries the
 * built-in walker visited, or BIG when it gave up at its probe budget). glob walks a small
 * folder itself (starting `rg` and `find` costs more than walking a thousand entries) and hands
 * a big one to ripgrep. A hint only picks the engine: both give the same answer, and a folder
 * that grew is caught by the walker's budget. Bounded (least recently used dropped).
 */
export const BIG = -1;
const MAX_ENTRIES = 1024;

export class TreeSizes {
  private readonly sizes = new Map<string, number>();

  get(abs: string): number | undefined {
    return this.sizes.get(abs);
  }

  set(abs: string, entries: number): void {
    this.sizes.delete(abs);
    this.sizes.set(abs, entries);
    if (this.sizes.size > MAX_ENTRIES) this.sizes.delete(this.sizes.keys().next().value!);
  }
}
