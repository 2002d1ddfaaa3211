import { ToolError } from './errors.js';

/**
 * Runs work with its own AbortSignal that fires on the caller's cancel or on the time
 * limit. The result is settled as soon as either fires, even if the work ignores the signal.
 */
export async function withDeadline<T>(outer: AbortSignal, timeoutMs: number, work: (signal: AbortSignal) => Promise<T>, own?: AbortController): Promise<T> {
  // `own`: the controller behind `outer`, which only this call uses: the time limit aborts it
  // directly instead of a second controller linked to it (an AbortController is not cheap).
  const ctrl = own && own.signal === outer ? own : new AbortController();
  let timedOut = false;
  const onAbort = () => ctrl.abort(outer.reason);
  if (outer.aborted) throw new ToolError('Cancelled', 'The call was cancelled before it started.');
  if (ctrl !== own) outer.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => { timedOut = true; ctrl.abort(new Error('timeout')); }, timeoutMs);
  let rejectOnAbort: (e: unknown) => void = () => {};
  const aborted = new Promise<never>((_, reject) => { rejectOnAbort = reject; });
  const onInner = () => rejectOnAbort(timedOut
    ? new ToolError('Timeout', `The call took longer than ${timeoutMs} ms and was stopped; narrow it or raise limits.timeout_ms.`)
    : new ToolError('Cancelled', 'The call was cancelled by the client.'));
  ctrl.signal.addEventListener('abort', onInner, { once: true });
  try {
    return await Promise.race([work(ctrl.signal), aborted]);
  } catch (e) {
    // A tool that noticed the abort itself may throw its own error; name it by what happened.
    if (ctrl.signal.aborted && !(e instanceof ToolError && (e.code === 'Timeout' || e.code === 'Cancelled' || e.code === 'ExitNonZero'))) {
      throw new ToolError(timedOut ? 'Timeout' : 'Cancelled', timedOut ? `The call took longer than ${timeoutMs} ms and was stopped.` : 'The call was cancelled by the client.', { cause: e });
    }
    throw e;
  } finally {
    clearTimeout(timer);
    if (ctrl !== own) outer.removeEventListener('abort', onAbort);
    ctrl.signal.removeEventListener('abort', onInner);
  }
}
