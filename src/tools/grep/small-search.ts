import type { FileHandle } from 'node:fs/promises';
import type { Workspace } from '../../workspace/workspace.js';
import { builtinSearchDir, type BuiltinOptions, type DirRoot } from './fallback.js';
import { builtinSearchFile } from './search-file.js';
import { SMALL_GREP_BYTES, UseRipgrep, type SmallSearch } from './small.js';
import { COLLECT_CAP, type EngineResult } from './types.js';

/** What grep's run() returns when the search here answered: the result and why the built-in engine ran. */
export interface SmallAnswer {
  result: EngineResult;
  fallbackReason: string;
}

/**
 * One small file (≤ SMALL_GREP_BYTES), searched here; null when ripgrep must answer (text where
 * the engines could differ, or as many lines as the collection cap: rg's answer then says "at least").
 */
export async function searchSmallFile(fh: FileHandle, size: number, small: SmallSearch, o: Pick<BuiltinOptions, 'q' | 'collectCap' | 'signal' | 'deadline'>): Promise<SmallAnswer | null> {
  if (size > SMALL_GREP_BYTES) return null;
  try {
    const result = await builtinSearchFile(fh, { q: o.q, pat: small.pat, signal: o.signal, deadline: o.deadline, strict: small });
    if ((result.hits[0]?.records.length ?? 0) >= (o.collectCap ?? COLLECT_CAP[o.q.mode])) return null;
    return { result, fallbackReason: `the file is small (${size} bytes): searching it here is faster than starting ripgrep` };
  } catch (e) {
    if (!(e instanceof UseRipgrep)) throw e;
    return null;
  }
}

/**
 * A folder searched here within the budget (walkMax entries, SMALL_GREP_BYTES read); null when
 * ripgrep must answer. The folder's size is remembered (ws.treeSizes): one over the entry budget
 * goes straight to ripgrep next time.
 */
export async function searchSmallDir(root: DirRoot, small: SmallSearch, walkMax: number, ws: Workspace, o: Omit<BuiltinOptions, 'pat' | 'budget'>): Promise<SmallAnswer | null> {
  if (ws.treeSizes.over(root.abs, walkMax)) return null;
  try {
    const result = await builtinSearchDir(root, { ...o, pat: small.pat, budget: { visits: walkMax, bytes: SMALL_GREP_BYTES, literal: small.literal } });
    // Stopped at the collection cap: what the totals and notes say past it is the engine's own; rg answers.
    if (!result.complete && !result.capped) throw new UseRipgrep('text', 'more hits than the collection cap');
    if (result.complete && !result.capped && result.visited !== undefined) ws.treeSizes.set(root.abs, result.visited);
    const entries = result.visited === undefined ? '' : `${result.visited} entries, `;
    return { result, fallbackReason: `the folder is small (${entries}at most ${walkMax}): searching it here is faster than starting ripgrep` };
  } catch (e) {
    if (!(e instanceof UseRipgrep)) throw e;
    if (e.why === 'size') ws.treeSizes.setMoreThan(root.abs, walkMax);
    o.deny.askSkipped = 0;
    return null;
  }
}
