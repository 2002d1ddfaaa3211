import type { ApprovalInput } from '../core/approval.js';
import { DECISION_SCHEMA } from '../core/approval.js';
import type { Answer, AnswerSource, ApprovalDecision } from './inbox.js';
import { isDecision } from './inbox.js';

export type WaitResult =
  | { kind: 'answer'; decision: ApprovalDecision; source: AnswerSource }
  | { kind: 'none'; why: string }
  | { kind: 'cancelled' };

const TICK_MS = 5_000;

/**
 * Waits for the first answer: the client's form (when it has one) or the inbox (console,
 * `toolgate approvals`), with the approvals deadline and a progress notification at once and
 * then every few seconds, so a client that resets its timeout on progress keeps the call alive.
 */
export async function waitForAnswer(input: ApprovalInput, entry: { id: string; answered: Promise<Answer> } | undefined, message: string): Promise<WaitResult> {
  const ctrl = new AbortController();
  const onAbort = () => ctrl.abort(input.signal.reason);
  if (input.signal.aborted) return { kind: 'cancelled' };
  input.signal.addEventListener('abort', onAbort, { once: true });
  let waited = 0;
  const tickMs = input.tickMs ?? TICK_MS;
  const label = entry ? `waiting for the user to approve (request ${entry.id})` : 'waiting for the user to approve';
  input.progress(label);
  const tick = setInterval(() => {
    waited += tickMs;
    input.progress(`${label} (${Math.round(waited / 1000)} s)`);
  }, tickMs);
  let timer: NodeJS.Timeout | undefined;
  const racers: Promise<WaitResult>[] = [
    new Promise((resolve) => {
      timer = setTimeout(() => resolve({ kind: 'none', why: `nobody answered within ${Math.round(input.timeoutMs / 1000)} s` }), input.timeoutMs);
    }),
    new Promise((resolve) => ctrl.signal.addEventListener('abort', () => resolve({ kind: 'cancelled' }), { once: true })),
  ];
  if (entry) racers.push(entry.answered.then((a) => ({ kind: 'answer', decision: a.decision, source: a.source })));
  const elicit = input.session.elicit;
  if (elicit) {
    racers.push(elicit(
      { message, requestedSchema: DECISION_SCHEMA as unknown as Record<string, unknown> },
      { signal: ctrl.signal, timeoutMs: input.timeoutMs, relatedRequestId: input.requestId },
    ).then((answer): WaitResult => {
      const choice = answer.content?.decision;
      if (answer.action === 'decline') return { kind: 'answer', decision: 'deny', source: 'elicitation' };
      if (answer.action === 'accept' && isDecision(choice)) return { kind: 'answer', decision: choice, source: 'elicitation' };
      return { kind: 'none', why: answer.action === 'accept' ? 'the answer carried no decision' : 'the user closed the request without answering' };
    }, (e: unknown): WaitResult => (ctrl.signal.aborted ? { kind: 'cancelled' } : { kind: 'none', why: `the approval request failed or timed out (${(e as Error)?.message ?? e})` })));
  } else if (entry && input.session.elicitUrl) {
    // URL mode: the client shows the console's page for this request; the answer comes through the inbox.
    const url = input.services?.consoleUrl?.(entry.id);
    if (url) {
      input.session.elicitUrl(
        { message: `${message}\nOpen the toolgate console to answer (request ${entry.id}).`, url, elicitationId: entry.id },
        { signal: ctrl.signal, timeoutMs: input.timeoutMs, relatedRequestId: input.requestId },
      ).catch(() => {});
    }
  }
  try {
    const r = await Promise.race(racers);
    // The signal beats a simultaneous answer: a cancelled call never runs.
    return input.signal.aborted ? { kind: 'cancelled' } : r;
  } finally {
    clearInterval(tick);
    clearTimeout(timer);
    ctrl.abort(new Error('approval settled'));
    input.signal.removeEventListener('abort', onAbort);
  }
}
