import ignore, { type Ignore } from 'ignore';
import { CASE_INSENSITIVE_FS } from '../../workspace/path-rules.js';

/** One compiled ignore file set, shared by every stack built from the same text. */
export interface CompiledIgnore {
  readonly ig: Ignore;
  /** Paths tested since the `ignore` package's own memo was last emptied (it grows with every new path). */
  tests: number;
}

/** After this many tests an instance's memo of answers is dropped, so a long session does not keep one string per path it ever saw. */
const MEMO_RESET_AFTER = 50_000;
const MAX_ENTRIES = 256;
const MAX_TEXT_CHARS = 4 * 1024 * 1024;

export function compileIgnore(rules: string): CompiledIgnore {
  return { ig: ignore({ ignorecase: CASE_INSENSITIVE_FS }).add(rules), tests: 0 };
}

/** Tests one path against a compiled set, emptying the package's memo now and then (it stays a pure memo: answers do not change). */
export function testIgnore(c: CompiledIgnore, rel: string): { ignored: boolean; unignored: boolean } {
  if (++c.tests > MEMO_RESET_AFTER) {
    c.tests = 0;
    (c.ig as unknown as { _initCache?: () => void })._initCache?.();
  }
  return c.ig.test(rel);
}

/**
 * Compiled ignore rules keyed by their TEXT (not by the file's path): the files are still read
 * on every call (a few hundred bytes, one open), so a changed, replaced, linked or deleted
 * ignore file is seen at once, and only the compile (rules → regular expressions, a quarter of
 * a list_dir call) is skipped when the text is one seen before. Same text, same rules: the
 * answer cannot differ from a fresh compile. Bounded (LRU) by entries and by characters.
 * One per workspace (held across calls), never module-level.
 */
export class IgnoreCompileCache {
  private readonly byText = new Map<string, CompiledIgnore>();
  private chars = 0;

  get size(): number {
    return this.byText.size;
  }

  get(rules: string): CompiledIgnore {
    const hit = this.byText.get(rules);
    if (hit) {
      this.byText.delete(rules);
      this.byText.set(rules, hit);
      return hit;
    }
    const c = compileIgnore(rules);
    if (rules.length > MAX_TEXT_CHARS / 4) return c;
    this.byText.set(rules, c);
    this.chars += rules.length;
    for (const [k] of this.byText) {
      if (this.byText.size <= MAX_ENTRIES && this.chars <= MAX_TEXT_CHARS) break;
      this.byText.delete(k);
      this.chars -= k.length;
    }
    return c;
  }
}
