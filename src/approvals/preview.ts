import type { Logger } from 'pino';
import type { AnyTool } from '../core/define-tool.js';
import type { Session } from '../core/session.js';
import type { Plan, ToolContext } from '../core/types.js';
import type { CompiledPolicy } from '../policy/types.js';
import type { Workspace } from '../workspace/workspace.js';

export interface PreviewInput {
  tool: AnyTool;
  args: Record<string, unknown>;
  plan: Plan;
  workspace: Workspace;
  policy: CompiledPolicy;
  session: Session;
  signal: AbortSignal;
  log: Logger;
}

const PREVIEW_MS = 5_000;
const MAX_DIFF = 256 * 1024;

/**
 * The diff a change would make, for the person who approves it: the tool's own dry-run path
 * (write_file, edit_file, multi_edit, apply_patch), run with the same args and dry_run: true.
 * Null for a tool without dry_run; a one-line note when the preview itself fails (stale read…).
 */
export async function previewDiff(p: PreviewInput): Promise<string | null> {
  if (!('dry_run' in p.args)) return null;
  const ctrl = new AbortController();
  const stop = () => ctrl.abort(p.signal.reason);
  p.signal.addEventListener('abort', stop, { once: true });
  const timer = setTimeout(() => ctrl.abort(new Error('preview took too long')), PREVIEW_MS);
  try {
    const ctx: ToolContext = {
      workspace: p.workspace, policy: p.policy, session: p.session, signal: ctrl.signal,
      callId: 'preview', traceId: 'preview', limits: p.policy.data.limits, log: p.log,
      progress: () => {}, notify: async () => {},
      spill: async () => { throw new Error('a preview writes nothing'); },
    };
    const args = { ...p.args, dry_run: true };
    const run = async () => {
      // The state checks a tool makes after the gate (inspect), then its own dry run.
      if (p.tool.inspect) await p.tool.inspect(args, p.plan, ctx);
      return p.tool.execute(args, p.plan, ctx);
    };
    const res = await Promise.race([
      run(),
      new Promise<never>((_, reject) => ctrl.signal.addEventListener('abort', () => reject(new Error('preview took too long')), { once: true })),
    ]);
    const diff = (res.data as { diff?: unknown } | null)?.diff;
    if (typeof diff !== 'string') return null;
    return diff.length > MAX_DIFF ? `${diff.slice(0, MAX_DIFF)}\n… (diff cut at ${MAX_DIFF} bytes)` : diff;
  } catch (e) {
    return `(no preview: ${(e as Error).message})`;
  } finally {
    clearTimeout(timer);
    p.signal.removeEventListener('abort', stop);
  }
}
