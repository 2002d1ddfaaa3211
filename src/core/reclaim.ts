import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Files at least this big leave garbage worth collecting at once (their bytes, text and copies). */
export const RECLAIM_AFTER_BYTES = 4 * 1024 * 1024;

type Gc = (o?: { type?: 'major' | 'minor'; execution?: 'sync' | 'async' }) => unknown;

/**
 * Asks V8 for a major collection, in the background, after a call handled a file of several MB.
 * A 5 MB edit leaves ~25 MB of garbage (the bytes read, the old and new text, the bytes
 * written), most of it large objects that only a major collection frees; V8 otherwise lets the
 * heap grow for many such calls first (ten 5 MB edits: 70 -> 199 MB resident). The collection is
 * asked for at most once per event-loop turn, and never in a process that already exposes gc.
 * The garbage collector is process-wide by nature: this holds the one handle to it.
 */
export function reclaimAfterLargeFile(bytes: number): void {
  if (bytes < RECLAIM_AFTER_BYTES || state.pending) return;
  const gc = state.gc === undefined ? (state.gc = exposeGc()) : state.gc;
  if (!gc) return;
  state.pending = true;
  setImmediate(() => {
    state.pending = false;
    try { gc({ type: 'major', execution: 'async' }); } catch { /* an old V8 without options: leave it to V8 */ }
  });
}

const state: { gc?: Gc | null; pending: boolean } = { pending: false };

function exposeGc(): Gc | null {
  try {
    const existing = (globalThis as { gc?: Gc }).gc;
    if (typeof existing === 'function') return existing;
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as Gc;
    // Keep the flag's effect out of later contexts' globals (it only exposes the function).
    setFlagsFromString('--no-expose-gc');
    return typeof gc === 'function' ? gc : null;
  } catch {
    return null;
  }
}
