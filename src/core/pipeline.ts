import { z } from 'zod';
import { redact } from '../audit/redact.js';
import { evaluate } from '../policy/evaluate.js';
import type { Verdict } from '../policy/types.js';
import { Workspace, NO_WORKSPACE_MESSAGE } from '../workspace/workspace.js';
import { seekApproval, type Approval } from './approval.js';
import type { AnyTool } from './define-tool.js';
import type { Envelope } from './envelope.js';
import { ToolError, isToolError } from './errors.js';
import { newId } from './ids.js';
import { spillTo } from './output.js';
import type { Runtime } from './runtime.js';
import type { Session } from './session.js';
import { lookupTool } from './tool-lookup.js';
import type { ExtraContent, ToolContext, ToolResult } from './types.js';
import { formatZodError, shortArgs, shellQuote } from './format.js';
import { withDeadline } from './deadline.js';
import { circuitFor } from './circuit.js';
import { PolicyPathGate } from '../policy/gate.js';
import type { AskedPath } from '../workspace/path-gate.js';
import { commandFacts, decisionOfError, isPolicyRefusal, partsAsGiven, rememberSpills, spillGuard, spillRefsOf } from './gate-audit.js';
import type { Plan, PlanTarget } from './types.js';
import { previewDiff } from '../approvals/preview.js';

export interface CallMeta {
  signal: AbortSignal;
  /** The controller behind `signal` when only this call uses it (the time limit may abort it). */
  ctrl?: AbortController;
  progress?: (message: string, progress?: number, total?: number) => void;
  notify?: (level: 'info' | 'notice' | 'warning' | 'error', data: unknown) => Promise<void>;
  /** The request's _meta (may carry "toolgate/version"). */
  meta?: Record<string, unknown>;
  requestId?: string | number;
}

export interface CallOutcome {
  envelope: Envelope;
  content: ExtraContent[];
}

/** A session's view of the workspace: ceiling ∩ client roots, with the state dir protected. */
export interface SessionWorkspace {
  session: Session;
  workspace(): Promise<Workspace>;
}

function major(v: string): string {
  return v.split('.')[0] ?? v;
}

/**
 * Every tools/call passes through here, from every transport and from `toolgate call`:
 * lookup → validation → plan → policy gate → approval → executor → envelope → audit.
 */
export async function runCall(rt: Runtime, sw: SessionWorkspace, name: string, rawArgs: unknown, meta: CallMeta): Promise<CallOutcome> {
  const started = Date.now();
  const ts_start = new Date(started).toISOString();
  const callId = newId('tc');
  const traceId = typeof meta.meta?.['toolgate/trace_id'] === 'string' ? (meta.meta['toolgate/trace_id'] as string) : newId('tr');
  const warnings: string[] = [];
  const session = sw.session;
  let tool: AnyTool | undefined;
  let verdict: Verdict | undefined;
  let approval: Approval | null = null;
  let result: ToolResult<unknown> | undefined;
  let error: ToolError | undefined;
  let ws: Workspace | undefined;
  let args: unknown = rawArgs ?? {};
  let stage: 'lookup' | 'validate' | 'workspace' | 'plan' | 'run' = 'lookup';

  try {
    const found = lookupTool(rt.tools, name);
    if (!found.tool) {
      const why = rt.missingTool(name);
      if (why) throw why;
      throw new ToolError('ToolNotFound', `There is no tool "${name}".${found.suggestions.length ? ` Did you mean ${found.suggestions.join(', ')}?` : ''} Call tools/list to see the tools.`,
        { details: { suggestions: found.suggestions } });
    }
    tool = found.tool;
    if (found.note) warnings.push(found.note);
    // A tool may refuse every call before the gate (an upstream tool changed since it was pinned).
    const refused = tool.refusal?.();
    if (refused) throw refused;
    const wanted = meta.meta?.['toolgate/version'];
    if (typeof wanted === 'string' && major(wanted) !== major(tool.version)) {
      throw new ToolError('VersionMismatch', `${tool.name} is version ${tool.version}; the call asked for ${wanted}. Read the tool's schema again from tools/list.`,
        { details: { requested: wanted, available: tool.version } });
    }
    if (!rt.listed().includes(tool)) {
      const v = evaluate(tool, [], rt.policy);
      verdict = v;
      throw new ToolError('ToolNotAllowed', `${tool.name} is not allowed by the policy (${v.rule}).`, { details: { rule: v.rule } });
    }
    circuitFor(rt, session.id).check(tool.name);
    stage = 'validate';
    const parsed = validateArgs(tool, args, warnings);
    args = parsed;
    stage = 'workspace';
    const base = await sw.workspace();
    stage = 'plan';
    // The call's view of the workspace: the tool's deny/ask path rules and the session's spills
    // are judged inside resolve() and every walk, before anything looks at a path's state.
    const gate = PolicyPathGate.for(tool.name, rt.policy, base.rules.bases);
    const stateDir = rt.stateDir(base.roots[0]);
    ws = base.forCall(gate, spillGuard(stateDir, session, rt.realStateDir(stateDir)));
    const signal = meta.signal;
    const planCtx = { workspace: ws, policy: rt.policy, session, signal, limits: rt.policy.data.limits };
    const progress = (message: string, p?: number, total?: number) => meta.progress?.(message, p, total);
    const approve = (plan: Plan, v: Verdict, preview = true) => seekApproval({
      tool: tool!, args: parsed, plan, verdict: v, session, policy: rt.policy, signal,
      timeoutMs: rt.policy.data.approvals.timeout_ms,
      replayCommand: [...rt.opts.replay.command, 'call', tool!.name, '--args', shellQuote(JSON.stringify(plan.replay_args ?? parsed)), '--approve', ...replayFlags(rt.opts.replay.flags, ws!.roots).map(shellQuote)].join(' '),
      progress, requestId: meta.requestId,
      // The inbox shows the change a write would make (its dry run) and keeps allow_always grants.
      services: rt.approvals, root: ws!.roots[0],
      preview: preview ? () => previewDiff({ tool: tool!, args: parsed, plan, workspace: ws!, policy: rt.policy, session, signal, log: rt.log }) : undefined,
    });
    let plan: Plan;
    try {
      plan = await tool.plan(parsed, planCtx);
    } catch (e) {
      // A path an `ask` rule covers shows its state (missing, a folder, not read yet…) only to an
      // approved call: otherwise ci mode or a refusal would tell a present file from an absent one.
      if (gate?.asked.length && isToolError(e) && !isPolicyRefusal(e)) {
        const targets = askedTargets(gate.asked, ws);
        const held: Plan = { targets, summary: `${tool.name} ${gate.asked.map((a) => a.input).join(', ')}` };
        verdict = evaluate(tool, targets, rt.policy);
        if (verdict.decision === 'ask') approval = await approve(held, verdict, false);
      }
      throw e;
    }
    // Every path resolve() admitted under an ask rule is judged, whether or not the tool made it a
    // target (a command's cwd, the files its readers name): an ask rule holds for them too.
    const extra = gate?.asked.length ? askedTargets(gate.asked.filter((a) => !plan.targets.some((t) => t.kind === 'path' && (t.path.abs === a.abs || t.path.lexical?.abs === a.abs))), ws) : [];
    const judgedPlan: Plan = extra.length ? { ...plan, targets: [...plan.targets, ...extra] } : plan;
    verdict = evaluate(tool, judgedPlan.targets, rt.policy);
    if (verdict.decision === 'deny') {
      const parts = partsAsGiven(verdict, judgedPlan.targets);
      const denied = parts.filter((p) => p.decision === 'deny');
      const net = denied.every((p) => p.kind === 'domain');
      throw new ToolError(net ? 'NetworkDenied' : 'ToolNotAllowed', `The policy denies this ${tool.name} call: ${denied.map((p) => `${p.target} (${p.rule})`).join('; ')}.${net ? ` A policy rule {tool: ${tool.name}, domain: HOST, decision: allow} would allow it.` : ''}`,
        { details: { parts } });
    }
    if (verdict.decision === 'ask') approval = await approve(judgedPlan, verdict);
    stage = 'run';
    if (tool.inspect) await tool.inspect(parsed, plan, planCtx);
    const timeout = tool.timeout_ms ?? rt.policy.data.limits.timeout_ms;
    const toolForCtx = tool;
    let childLog: ToolContext['log'] | undefined;
    result = await withDeadline(signal, timeout, (sig) => {
      const ctx: ToolContext = {
        workspace: ws!, policy: rt.policy, session, signal: sig, callId, traceId, requestId: meta.requestId,
        limits: rt.policy.data.limits,
        // Made when a tool logs (few do): a pino child per call is not free.
        get log() { return (childLog ??= rt.log.child({ tool: toolForCtx.name, callId })); },
        progress,
        notify: meta.notify ?? (async () => {}),
        spill: async (content, ext = 'txt') => {
          const ref = await spillTo(stateDir, rt.runId, callId, content, ext, ws!.roots[0]);
          rememberSpills(session, ws!.roots[0], [ref.storage_ref]);
          return ref;
        },
      };
      return toolForCtx.execute(parsed, plan, ctx);
    }, meta.ctrl);
  } catch (e) {
    error = isToolError(e) ? e : new ToolError('Internal', `toolgate failed inside ${tool?.name ?? name}: ${(e as Error)?.message ?? String(e)}. This is a bug; the call did not complete.`, { cause: e });
    if (!isToolError(e)) rt.log.error({ err: e, tool: name }, 'internal error');
  }
  if (tool) circuitFor(rt, session.id).record(tool.name, error ?? null);
  rememberSpills(session, ws?.roots[0], spillRefsOf(result, error));

  // Redacted once: the envelope's context and the audit record show the same arguments.
  const redactedArgs = redact(args);
  const envelope = buildEnvelope({ tool, name, callId, traceId, args: redactedArgs, result, error, started, warnings });
  // Schema validation of our own output costs a full zod pass per call: tests and debugging only.
  if (tool && process.env.TOOLGATE_CHECK_ENVELOPE === '1') checkEnvelope(rt, tool, envelope);

  const ended = Date.now();
  const auditRoot = ws?.roots[0] ?? (await sw.workspace().then((w) => w.roots[0]).catch(() => undefined));
  // Every record names a decision and the rule (or reason) behind it, refusals before the gate included.
  const judged = verdict ?? decisionOfError(error, stage);
  const command = commandFacts(result, error);
  const ran = command && tool?.name === 'run_command' && typeof (args as { command?: unknown }).command === 'string' ? [(args as { command: string }).command] : [];
  const record = {
    ts_start, ts_end: new Date(ended).toISOString(), trace_id: traceId, tool_call_id: callId, session_id: session.id,
    tool: tool?.name ?? name, version: tool?.version ?? null, risk: tool?.risk ?? null,
    args: redactedArgs, decision: judged.decision, rule: redact(judged.rule) as string,
    approval: approval ? { granted: approval.granted, scope: approval.scope, grant: redact(approval.grant), source: approval.source, id: approval.id } :
      error && (error.code === 'ApprovalDenied' || error.code === 'ApprovalRequired') ? { granted: false, scope: error.code, ...approvalRefusal(error) } : null,
    ok: envelope.ok, status: envelope.status, error_code: envelope.error?.code ?? null, duration_ms: ended - started,
    files_changed: envelope.artifacts.files_changed,
    commands_run: redact(envelope.artifacts.commands_run.length ? envelope.artifacts.commands_run : ran) as string[],
    hashes: result?.hashes ?? {},
    ...(command ? { command: redact(command) as Record<string, unknown> } : {}),
    ...(error ? { error_message: redact(error.message.length > 1000 ? `${error.message.slice(0, 1000)}…` : error.message) as string } : {}),
  };
  rt.audit(auditRoot).append(record);
  rt.emitCall(record);
  return { envelope, content: envelope.ok ? (result?.content ?? []) : [] };
}

/** Which inbox request a refusal was about and who answered it (audited). */
function approvalRefusal(e: ToolError): { source?: string; id?: string } {
  const d = e.details as { approval_id?: unknown; answered_by?: unknown } | undefined;
  return {
    ...(typeof d?.answered_by === 'string' ? { source: d.answered_by } : {}),
    ...(typeof d?.approval_id === 'string' ? { id: d.approval_id } : {}),
  };
}

/** Paths resolve() admitted under an ask rule, as targets the gate judges (their state is not shown). */
function askedTargets(asked: AskedPath[], ws: Workspace): PlanTarget[] {
  return asked.map((a) => ({
    kind: 'path', access: a.access,
    path: { input: a.input, abs: a.abs, display: a.input, rootIndex: ws.locate(a.abs)?.rootIndex ?? 0, relToRoot: a.relToRoot ?? '', exists: false, kind: 'missing', bases: ws.rules.bases },
  }));
}

/**
 * The replay runs against this session's roots (narrowed by the client), not the server's
 * ceiling: relative paths in the args mean the same files in the shell as in the form.
 */
function replayFlags(flags: string[], roots: string[]): string[] {
  const out: string[] = roots.flatMap((r) => ['--workspace', r]);
  for (let i = 0; i < flags.length; i++) {
    if (flags[i] === '--workspace') { i++; continue; }
    out.push(flags[i]!);
  }
  return out;
}

/** Renames old argument names (with a warning) and validates strictly; unknown keys are errors. */
export function validateArgs(tool: AnyTool, raw: unknown, warnings: string[] = []): Record<string, unknown> {
  let args = raw ?? {};
  if (args && typeof args === 'object' && !Array.isArray(args) && tool.aliases) {
    const a = { ...(args as Record<string, unknown>) };
    for (const [oldName, newName] of Object.entries(tool.aliases)) {
      if (oldName in a && !(newName in a)) {
        a[newName] = a[oldName];
        delete a[oldName];
        warnings.push(`argument "${oldName}" is now "${newName}"`);
      }
    }
    args = a;
  }
  if (args && typeof args === 'object' && !Array.isArray(args) && tool.adaptArgs) args = tool.adaptArgs({ ...(args as Record<string, unknown>) }, warnings);
  const parsed = tool.input.safeParse(args);
  if (!parsed.success) {
    throw new ToolError('InvalidArguments', `${tool.name}: ${formatZodError(parsed.error)}. See the tool's input schema.`,
      { details: { issues: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })) } });
  }
  return parsed.data as Record<string, unknown>;
}

interface BuildInput {
  tool?: AnyTool;
  name: string;
  callId: string;
  traceId: string;
  /** Already redacted. */
  args: unknown;
  result?: ToolResult<unknown>;
  error?: ToolError;
  started: number;
  warnings: string[];
}

function buildEnvelope(b: BuildInput): Envelope {
  const duration_ms = Date.now() - b.started;
  const base = {
    tool_call_id: b.callId, trace_id: b.traceId, tool: b.tool?.name ?? b.name, version: b.tool?.version ?? '0.0.0',
    context: { cwd: '.', args: shortArgs(b.args) },
    ...(b.warnings.length ? { warnings: b.warnings } : {}),
  };
  if (b.error || !b.result) {
    const err = b.error ?? new ToolError('Internal', 'no result');
    let data: unknown = null;
    if (err.data !== undefined && b.tool && b.tool.output.safeParse(err.data).success) data = err.data;
    return {
      ...base, ok: false, status: 'error', data, error: err.toInfo(), text: err.message,
      stats: { duration_ms }, artifacts: { files_changed: [], commands_run: [] },
    };
  }
  const r = b.result;
  return {
    ...base, ok: true, status: r.status ?? 'ok', data: r.data, error: null, text: r.text,
    stats: { duration_ms, ...(r.stats ?? {}) },
    artifacts: {
      files_changed: r.files_changed ?? [], commands_run: r.commands_run ?? [],
      ...(r.storage_ref ? { storage_ref: r.storage_ref, sha256: r.sha256 } : {}),
    },
  };
}

/**
 * structuredContent must match outputSchema; if a tool breaks that, the model gets an Internal
 * error, not bad data. Run when TOOLGATE_CHECK_ENVELOPE=1 (the test runner sets it): the tools'
 * outputs are covered by the tests, and a zod pass over every result is not free.
 */
function checkEnvelope(rt: Runtime, tool: AnyTool, env: Envelope): void {
  const res = tool.envelope.safeParse(env);
  if (res.success) return;
  rt.log.error({ tool: tool.name, issues: res.error.issues.slice(0, 5) }, 'envelope does not match outputSchema');
  Object.assign(env, {
    ok: false, status: 'error', data: null,
    error: { code: 'Internal', message: `${tool.name} produced a result that does not match its schema (${z.prettifyError(res.error).split('\n')[0]}). This is a bug.` },
    text: `${tool.name} failed: internal error.`,
  });
}

export { NO_WORKSPACE_MESSAGE };
