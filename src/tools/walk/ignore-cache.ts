import ignore, { type Ignore } from 'ignore';
import { CASE_INSENSITIVE_FS } from '../../workspace/path-rules.js';

/** What `testIgnore` answers: one of three shared objects, so the memo holds no object per path. */
export type IgnoreVerdict = Readonly<{ ignored: boolean; unignored: boolean }>;
const IGNORED: IgnoreVerdict = Object.freeze({ ignored: true, unignored: false });
const UNIGNORED: IgnoreVerdict = Object.freeze({ ignored: false, unignored: true });
const NEITHER: IgnoreVerdict = Object.freeze({ ignored: false, unignored: false });

/** One compiled ignore file set, shared by every stack built from the same text. */
export interface CompiledIgnore {
  readonly ig: Ignore;
  /** Answers by path (a pure memo: the rules of one compiled set never change). Bounded by MEMO_MAX_PATHS. */
  readonly memo: Map<string, IgnoreVerdict>;
}

/**
 * Distinct paths one compiled set remembers before its memo (and the package's own, which also
 * holds every parent folder) is emptied: ~12 MB at most, the Linux kernel's whole tree twice
 * over. Counting distinct paths, not tests: a glob that tests the same 10,000 paths on every
 * call keeps them all, where counting tests emptied the memo every fifth call and that call
 * paid the whole rule scan again (45–78 ms on the kernel's 158-line .gitignore).
 */
export const MEMO_MAX_PATHS = 200_000;
/**
 * Distinct ignore texts kept compiled. A walk reads them in the same order every call, so an LRU
 * smaller than a tree's set evicts every one before its next use: the kernel holds 282, and at
 * 256 each glob of its root recompiled them all and lost their memos (glob's ripgrep engine
 * judges every listed file by them: "**\/*.*" 850 ms a call, 300 with them kept).
 */
export const MAX_ENTRIES = 1024;
const MAX_TEXT_CHARS = 4 * 1024 * 1024;

export function compileIgnore(rules: string): CompiledIgnore {
  return { ig: ignore({ ignorecase: CASE_INSENSITIVE_FS }).add(rules), memo: new Map() };
}

/** Tests one path against a compiled set through its memo. */
export function testIgnore(c: CompiledIgnore, rel: string): IgnoreVerdict {
  const hit = c.memo.get(rel);
  if (hit !== undefined) return hit;
  const r = c.ig.test(rel);
  const v = r.ignored ? IGNORED : r.unignored ? UNIGNORED : NEITHER;
  if (c.memo.size >= MEMO_MAX_PATHS) {
    c.memo.clear();
    (c.ig as unknown as { _initCache?: () => void })._initCache?.();
  }
  c.memo.set(rel, v);
  return v;
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
