import { z } from 'zod';
import { limitText } from '../core/output.js';
import type { ToolContext } from '../core/types.js';

/** The fields every change returns in data (SPEC §2: changes → diff, files_changed). */
export const changeFields = {
  diff: z.string().describe('Unified diff of the change (cut to the output limits; the whole diff is in artifacts.storage_ref when diff_truncated).'),
  diff_truncated: z.boolean(),
  files_changed: z.array(z.string()).describe('Workspace-relative paths changed (or that would change, on dry_run).'),
  dry_run: z.boolean().describe('True when nothing was written: the diff is a preview.'),
  added_lines: z.number().int(),
  removed_lines: z.number().int(),
};

export interface BoundedDiff {
  diff: string;
  diff_truncated: boolean;
  storage_ref?: string;
  sha256?: string;
}

/** Cuts a diff to the output limits; the whole diff is spilled to the state dir when cut. */
export async function boundedDiff(diff: string, ctx: Pick<ToolContext, 'limits' | 'spill'>): Promise<BoundedDiff> {
  const lim = limitText(diff, ctx.limits, 'head');
  if (!lim.truncated) return { diff, diff_truncated: false };
  const ref = await ctx.spill(diff, 'diff');
  return {
    diff: `${lim.text}\n… [diff cut: ${lim.total_lines} lines, ${lim.total_bytes} bytes in all; the whole diff is in storage_ref]\n`,
    diff_truncated: true, storage_ref: ref.storage_ref, sha256: ref.sha256,
  };
}
