import { evaluate } from '../policy/evaluate.js';
import type { CompiledPolicy, CompiledRule, ToolFacts, Verdict } from '../policy/types.js';
import type { ApprovalServices } from '../approvals/services.js';
import { isDecision, MAX_ENTRIES, type AnswerSource, type ApprovalDecision } from '../approvals/inbox.js';
import { waitForAnswer } from '../approvals/wait.js';
import { ToolError } from './errors.js';
import { describeGrant, grantsAsYaml, grantToRule, proposeGrants } from './grants.js';
import type { Grant, Session } from './session.js';
import type { Plan } from './types.js';

export interface Approval {
  granted: boolean;
  scope: 'once' | 'session' | 'always' | 'grant' | 'cli';
  grant?: Grant[];
  /** Who answered: the client's form, the console, `toolgate approvals` (or a standing grant / --approve). */
  source?: AnswerSource | 'grant';
  /** The inbox request that was answered. */
  id?: string;
}

export interface ApprovalInput {
  tool: ToolFacts & { title: string };
  args: unknown;
  plan: Plan;
  verdict: Verdict;
  session: Session;
  policy: CompiledPolicy;
  signal: AbortSignal;
  timeoutMs: number;
  /** How to run this call again from a shell with --approve. */
  replayCommand: string;
  progress(message: string): void;
  /** The tools/call request this approval belongs to (routes the question on HTTP). */
  requestId?: string | number;
  /** How often to tell the client we are still waiting (progress notifications). */
  tickMs?: number;
  /** The inbox, stored grants and console of this process (absent: the client's form only). */
  services?: ApprovalServices;
  /** The session's first root: stored grants are kept per workspace root. */
  root?: string;
  /** The diff the call would make (its dry run), for the inbox. */
  preview?: () => Promise<string | null>;
}

export const DECISION_SCHEMA = {
  type: 'object',
  properties: {
    decision: {
      type: 'string',
      title: 'Decision',
      description: 'allow_once: run this call only; allow_session: also allow what the grant shown covers until the session ends; allow_always: keep that grant for this workspace (toolgate grants revoke undoes it); deny: refuse.',
      enum: ['allow_once', 'allow_session', 'allow_always', 'deny'],
      enumNames: ['Allow once', 'Allow for this session', 'Always allow', 'Deny'],
    },
  },
  required: ['decision'],
} as const;

/** The stored allow_always grants of the session's root, as rules. */
function storedRules(input: Pick<ApprovalInput, 'services' | 'root'>): CompiledRule[] {
  const store = input.services?.grants;
  if (!store || !input.root) return [];
  return store.load(input.root).grants.map(grantToRule);
}

/** True when every part the policy would ask about is covered by a grant (this session's, or stored). */
export function coveredByGrants(input: Pick<ApprovalInput, 'tool' | 'plan' | 'policy' | 'session' | 'services' | 'root'>): boolean {
  const rules = [...input.session.grants.map(grantToRule), ...storedRules(input)];
  if (rules.length === 0) return false;
  const withGrants = evaluate(input.tool, input.plan.targets, { ...input.policy, rules }, []);
  const base = evaluate(input.tool, input.plan.targets, input.policy);
  // Only the parts that were "ask" may be lifted, and only to what a grant allows.
  return base.parts.every((p, i) => p.decision === 'allow' || (p.decision === 'ask' && withGrants.parts[i]!.source === 'grant'));
}

function replayDetails(input: ApprovalInput, grants: Grant[], why: string, extra: Record<string, unknown> = {}) {
  return {
    tool: input.tool.name,
    risk: input.tool.risk,
    decision: input.verdict.decision,
    rule: input.verdict.rule,
    why,
    ...extra,
    replay: {
      rule: grantsAsYaml(grants),
      command: input.replayCommand,
    },
  };
}

/** The question as the user sees it: what, why, the exact arguments, and what a session grant covers. */
export function approvalMessage(input: Pick<ApprovalInput, 'tool' | 'args' | 'plan' | 'verdict'>, grants: Grant[]): string {
  // The arguments come first and every line that shows model-chosen text is escaped, so a
  // file name with newlines or bidi controls cannot draw fake lines into the form.
  return [
    `toolgate: allow ${input.tool.title} (${input.tool.name}, ${input.tool.risk} risk)?`,
    `Arguments (exactly what will run): ${JSON.stringify(input.args)}`,
    `What it does: ${oneLine(input.plan.summary)}`,
    `Why asked: ${oneLine(input.verdict.rule)}`,
    `"Allow for this session" grants: ${oneLine(grants.map(describeGrant).join('; '))}`,
  ].join('\n');
}

/** Control, line-separator and bidi characters shown as escapes. */
export function oneLine(s: string): string {
  return s.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Where the model should send the person: the console (no secret in it) or the CLI. */
function whereToAnswer(input: ApprovalInput, id: string): string {
  const url = input.services?.consoleUrl?.();
  return `ask the user to approve request ${id} in the toolgate console${url ? ` (${url})` : ''} or with \`toolgate approvals\`, then call again with the same arguments (an answer applies once, to a retry within ${Math.round(input.policy.data.approvals.retry_window_ms / 60_000)} min)`;
}

/**
 * Turns an `ask` into a person's answer: the client's form (elicitation) and, in a server
 * process, the approval inbox (console, `toolgate approvals`) — the first answer wins.
 * Anything short of an explicit allow — ci mode, decline, cancel, timeout, an accept without a
 * decision — is a refusal; nothing falls back to allow.
 */
export async function seekApproval(input: ApprovalInput): Promise<Approval> {
  if (coveredByGrants(input)) return { granted: true, scope: 'grant', source: 'grant' };
  if (input.session.preApproved) return { granted: true, scope: 'cli', source: 'cli' };
  const grants = proposeGrants(input.tool.name, input.plan.targets);
  const inbox = input.services?.inbox;
  const required = (why: string, id?: string) => new ToolError('ApprovalRequired',
    `${input.tool.name} needs approval (${input.verdict.rule}) and ${why}. ${id ? `To go on, ${whereToAnswer(input, id)}.` : 'Ask the user to run the replay command, or to add the replay rule to the policy.'}`,
    { details: replayDetails(input, grants, why, id ? { approval_id: id } : {}) });

  // An answer given after an earlier identical call stopped waiting: used once, here.
  const late = inbox?.takeLate(input.tool.name, input.args, input.session.id);
  if (late) return settle(input, grants, late.decision, late.source, late.id);

  const open = async (waiting: boolean) => inbox?.open({
    session_id: input.session.id, tool: input.tool.name, risk: input.tool.risk, args: input.args,
    rule: input.verdict.rule, grant: grants.map(describeGrant), grant_rule: grantsAsYaml(grants),
    diff: input.preview ? await input.preview().catch(() => null) : null, summary: input.plan.summary,
  }, input.tool.name, input.args, waiting);

  if (input.policy.mode === 'ci') {
    const entry = await open(false);
    throw required('the server runs in ci mode, where nobody can be asked', entry?.id);
  }
  if (!inbox && !input.session.elicit) throw required('this client cannot show approval requests (no elicitation support)');

  const entry = await open(true);
  if (inbox && !entry && !input.session.elicit) throw required(`the approval inbox is full (${MAX_ENTRIES} requests wait); answer or let them expire first`);
  if (entry && !input.session.elicit) {
    const view = inbox!.get(entry.id);
    if (view) input.services?.announce?.(view);
  }
  const result = await waitForAnswer(input, entry, approvalMessage(input, grants));
  if (result.kind === 'cancelled') {
    // The client gave up (its own timeout, or the user stopped it): a person may still answer, for a retry.
    if (entry) inbox!.expire(entry.id);
    throw new ToolError('Cancelled', `The call was cancelled while waiting for approval.${entry ? ` An answer to request ${entry.id} still applies once to a retry of the same call.` : ''}`,
      { details: entry ? { approval_id: entry.id } : undefined });
  }
  if (result.kind === 'none') {
    if (entry) inbox!.expire(entry.id);
    throw required(result.why, entry?.id);
  }
  if (entry) inbox!.close(entry.id);
  return settle(input, grants, result.decision, result.source, entry?.id);
}

/** Applies an answer: deny refuses; session and always grants are kept (not from a dry-run preview). */
function settle(input: ApprovalInput, grants: Grant[], decision: ApprovalDecision, source: AnswerSource, id?: string): Approval {
  if (!isDecision(decision) || decision === 'deny') {
    throw new ToolError('ApprovalDenied', `The user denied ${input.tool.name}. Do not retry the same call; ask the user what to do instead.`,
      { details: replayDetails(input, grants, 'the user said no', { ...(id ? { approval_id: id } : {}), answered_by: source }) });
  }
  // A preview (dry_run) was approved, not the change itself: no standing grant from it.
  const preview = (input.args as { dry_run?: unknown } | null)?.dry_run === true;
  if (decision === 'allow_once' || preview) return { granted: true, scope: 'once', source, id };
  input.session.grants.push(...grants);
  if (decision === 'allow_always') {
    const store = input.services?.grants;
    if (store && input.root) {
      try {
        store.add(input.root, grants);
        return { granted: true, scope: 'always', grant: grants, source, id };
      } catch (e) {
        input.services?.warn?.(`allow_always could not be stored (${(e as Error).message}); kept for this session only`);
      }
    }
  }
  return { granted: true, scope: 'session', grant: grants, source, id };
}
