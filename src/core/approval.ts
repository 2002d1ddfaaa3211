import { evaluate } from '../policy/evaluate.js';
import type { CompiledPolicy, ToolFacts, Verdict } from '../policy/types.js';
import { ToolError } from './errors.js';
import { describeGrant, grantsAsYaml, grantToRule, proposeGrants } from './grants.js';
import type { ElicitResponse, Grant, Session } from './session.js';
import type { Plan } from './types.js';

export interface Approval {
  granted: boolean;
  scope: 'once' | 'session' | 'grant' | 'cli';
  grant?: Grant[];
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
}

export const DECISION_SCHEMA = {
  type: 'object',
  properties: {
    decision: {
      type: 'string',
      title: 'Decision',
      description: 'allow_once: run this call only; allow_session: also allow what the grant shown covers until the session ends; deny: refuse.',
      enum: ['allow_once', 'allow_session', 'deny'],
      enumNames: ['Allow once', 'Allow for this session', 'Deny'],
    },
  },
  required: ['decision'],
} as const;

const TICK_MS = 5_000;

/** True when every part the policy would ask about is covered by a grant of this session. */
export function coveredByGrants(input: Pick<ApprovalInput, 'tool' | 'plan' | 'policy' | 'session'>): boolean {
  if (input.session.grants.length === 0) return false;
  const rules = input.session.grants.map(grantToRule);
  const withGrants = evaluate(input.tool, input.plan.targets, { ...input.policy, rules }, []);
  const base = evaluate(input.tool, input.plan.targets, input.policy);
  // Only the parts that were "ask" may be lifted, and only to what a grant allows.
  return base.parts.every((p, i) => p.decision === 'allow' || (p.decision === 'ask' && withGrants.parts[i]!.source === 'grant'));
}

function replayDetails(input: ApprovalInput, grants: Grant[], why: string) {
  return {
    tool: input.tool.name,
    risk: input.tool.risk,
    decision: input.verdict.decision,
    rule: input.verdict.rule,
    why,
    replay: {
      rule: grantsAsYaml(grants),
      command: input.replayCommand,
    },
  };
}

/** The question as the user sees it: what, why, the exact arguments, and what a session grant covers. */
export function approvalMessage(input: ApprovalInput, grants: Grant[]): string {
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

/**
 * Asks through the session's elicit, with its own deadline (approvals.timeout_ms) and a progress
 * notification at once and then every few seconds, so a client that resets its request timeout
 * on progress keeps the tools/call alive while the user thinks.
 */
async function ask(input: ApprovalInput, message: string): Promise<ElicitResponse> {
  const ctrl = new AbortController();
  const onAbort = () => ctrl.abort(input.signal.reason);
  input.signal.addEventListener('abort', onAbort, { once: true });
  let waited = 0;
  const tickMs = input.tickMs ?? TICK_MS;
  input.progress('waiting for the user to approve');
  const tick = setInterval(() => {
    waited += tickMs;
    input.progress(`waiting for the user to approve (${Math.round(waited / 1000)} s)`);
  }, tickMs);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      ctrl.abort(new Error('approval timed out'));
      reject(new Error(`no answer within ${Math.round(input.timeoutMs / 1000)} s`));
    }, input.timeoutMs);
  });
  try {
    return await Promise.race([
      input.session.elicit!(
        { message, requestedSchema: DECISION_SCHEMA as unknown as Record<string, unknown> },
        { signal: ctrl.signal, timeoutMs: input.timeoutMs, relatedRequestId: input.requestId },
      ),
      deadline,
    ]);
  } finally {
    clearInterval(tick);
    clearTimeout(timer);
    input.signal.removeEventListener('abort', onAbort);
  }
}

/**
 * Turns an `ask` into a real question (MCP elicitation). Anything short of an explicit
 * allow — no elicitation, ci mode, decline, cancel, timeout, an accept without a
 * decision — is a refusal; nothing falls back to allow.
 */
export async function seekApproval(input: ApprovalInput): Promise<Approval> {
  if (coveredByGrants(input)) return { granted: true, scope: 'grant' };
  if (input.session.preApproved) return { granted: true, scope: 'cli' };
  const grants = proposeGrants(input.tool.name, input.plan.targets);
  const required = (why: string) => new ToolError('ApprovalRequired',
    `${input.tool.name} needs approval (${input.verdict.rule}) and ${why}. Ask the user to run the replay command, or to add the replay rule to the policy.`,
    { details: replayDetails(input, grants, why) });

  if (input.policy.mode === 'ci') throw required('the server runs in ci mode, where nobody can be asked');
  if (!input.session.elicit) throw required('this client cannot show approval requests (no elicitation support)');

  let answer: ElicitResponse;
  try {
    answer = await ask(input, approvalMessage(input, grants));
  } catch (e) {
    if (input.signal.aborted) throw new ToolError('Cancelled', 'The call was cancelled while waiting for approval.');
    throw required(`the approval request failed or timed out (${(e as Error).message})`);
  }
  const choice = answer.content?.decision;
  if (answer.action === 'decline' || (answer.action === 'accept' && choice === 'deny')) {
    throw new ToolError('ApprovalDenied', `The user denied ${input.tool.name}. Do not retry the same call; ask the user what to do instead.`,
      { details: replayDetails(input, grants, 'the user said no') });
  }
  if (answer.action !== 'accept' || (choice !== 'allow_once' && choice !== 'allow_session')) {
    throw required(answer.action === 'accept' ? 'the answer carried no decision' : 'the user closed the request without answering');
  }
  // A preview (dry_run) was approved, not the change itself: no standing grant from it.
  const preview = (input.args as { dry_run?: unknown } | null)?.dry_run === true;
  if (choice === 'allow_session' && !preview) {
    input.session.grants.push(...grants);
    return { granted: true, scope: 'session', grant: grants };
  }
  return { granted: true, scope: 'once' };
}
