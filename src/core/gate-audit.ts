import { realpathSync } from 'node:fs';
import path from 'node:path';
import type { Verdict } from '../policy/types.js';
import type { SpillGuard } from '../workspace/path-gate.js';
import type { ToolError } from './errors.js';
import type { Session } from './session.js';
import type { Plan, PlanTarget, ToolResult } from './types.js';

/**
 * Errors a plan throws that are policy refusals, judged on the path as given (the same whatever
 * exists there) — not state. Anything else (NotFound, a FIFO, a link leading out, ReadRequired…)
 * tells something about the file system and is held until an asked path is approved.
 */
export function isPolicyRefusal(e: ToolError): boolean {
  if (e.code === 'ToolNotAllowed' || e.code === 'NetworkDenied') return true;
  const list = (e.details as { list?: unknown } | undefined)?.list;
  return e.code === 'PathDenied' && (list === 'deny' || list === 'protect' || list === 'spills');
}

/** The decision and rule an audit record names for a call refused before (or without) the policy verdict. */
export function decisionOfError(e: ToolError | undefined, stage: 'lookup' | 'validate' | 'workspace' | 'plan' | 'run'): { decision: 'allow' | 'deny'; rule: string } {
  const code = e?.code;
  const d = (e?.details ?? {}) as { rule?: unknown; list?: unknown };
  if (code === 'ToolNotFound') return { decision: 'deny', rule: 'unknown tool' };
  if (code === 'VersionMismatch') return { decision: 'deny', rule: 'version' };
  if (code === 'CircuitOpen') return { decision: 'deny', rule: 'circuit' };
  if (stage === 'validate' || (stage === 'lookup' && code === 'InvalidArguments')) return { decision: 'deny', rule: 'invalid arguments' };
  if (stage === 'workspace') return { decision: 'deny', rule: 'no workspace' };
  if (code === 'ToolNotAllowed' && typeof d.rule === 'string') return { decision: 'deny', rule: d.rule };
  if (code === 'PathDenied') return { decision: 'deny', rule: d.list === 'protect' ? 'paths.protect' : d.list === 'spills' ? 'spills' : d.list === 'deny' ? 'paths.deny' : 'no workspace' };
  if (code === 'PathTraversalBlocked') return { decision: 'deny', rule: 'workspace' };
  if (code === 'NetworkDenied') return { decision: 'deny', rule: 'network' };
  if (stage === 'plan' && code === 'InvalidArguments') return { decision: 'deny', rule: 'invalid arguments' };
  return { decision: 'allow', rule: `no rule refused it; it failed before the gate (${code ?? 'error'})` };
}

/** The spill files under `<stateDir>/runs` that this session was given; any other file there is refused. */
export function spillGuard(stateDir: string, session: Session, realStateDir?: string): SpillGuard {
  let real = realStateDir ?? stateDir;
  if (realStateDir === undefined) {
    try { real = realpathSync(stateDir); } catch { /* not created yet */ }
  }
  const runs = [path.join(stateDir, 'runs'), path.join(real, 'runs')];
  return {
    dirs: [...new Set(runs)],
    needle: 'runs',
    blocks(abs: string): boolean {
      // Both tests below need "runs" in the path: most paths are answered by this one scan.
      if (!abs.includes('runs')) return false;
      const inRuns = runs.some((r) => abs === r || abs.startsWith(`${r}/`)) || /(^|\/)\.toolgate\/runs(\/|$)/.test(abs);
      return inRuns && !session.spills.has(abs);
    },
  };
}

/** Records every storage_ref a call returned (in the envelope or its data) as this session's to read. */
export function rememberSpills(session: Session, root: string | undefined, refs: Array<unknown>): void {
  for (const ref of refs) {
    if (typeof ref !== 'string' || ref === '') continue;
    const abs = path.isAbsolute(ref) ? ref : root ? path.join(root, ref) : null;
    if (!abs) continue;
    session.spills.add(abs);
    try { session.spills.add(realpathSync(abs)); } catch { /* gone */ }
  }
}

/** storage_refs a result or an error's data carry. */
export function spillRefsOf(result: ToolResult<unknown> | undefined, error: ToolError | undefined): unknown[] {
  const data = (result?.data ?? error?.data) as { storage_ref?: unknown } | null | undefined;
  return [result?.storage_ref, data && typeof data === 'object' ? data.storage_ref : undefined];
}

/** A refusal's parts, naming paths as the caller gave them (never a resolved name inside a denied area). */
export function partsAsGiven(verdict: Verdict, targets: PlanTarget[]): Verdict['parts'] {
  return verdict.parts.map((p, i) => {
    const t = targets[i];
    return t?.kind === 'path' ? { ...p, target: `${t.access} ${t.path.input}` } : p;
  });
}

/** What the audit keeps of a command call: exit, signal, output hash and ref, the process id. */
export function commandFacts(result: ToolResult<unknown> | undefined, error: ToolError | undefined): Record<string, unknown> | null {
  const data = (result?.data ?? error?.data) as Record<string, unknown> | null | undefined;
  if (!data || typeof data !== 'object' || !('exit_code' in data)) return null;
  const out: Record<string, unknown> = {
    exit_code: data.exit_code ?? null, signal: data.signal ?? null,
    output_sha256: data.sha256 ?? null, storage_ref: data.storage_ref ?? null,
  };
  if (typeof data.id === 'string') out.process_id = data.id;
  if (result?.audit?.pid !== undefined) out.pid = result.audit.pid;
  return out;
}

export type { Plan };
