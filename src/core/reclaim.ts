import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Files at least this big leave garbage worth collecting at once (their bytes, text and copies). */
export const RECLAIM_AFTER_BYTES = 4 * 1024 * 1024;

/** V8's gc(): with no argument, a full (major) collection, synchronous. */
type Gc = () => unknown;

/**
 * The garbage a call is taken to leave per byte of a big file it handled: a low estimate on
 * purpose (a 5 MB edit leaves ~25 MB: the bytes read, the text, its copies, the bytes written).
 * Measured with ~115 MB of live heap, 4 MiB reads then cost 1.5x reads one byte smaller (at 4
 * per byte: 2.3x, with every collection forced: 6x); ten 5 MB edits grow the peak by ~55 MB.
 */
export const GARBAGE_PER_BYTE = 2;

/**
 * Asks V8 for a full collection after calls handled files of several MB, once the garbage they
 * are estimated to have left (GARBAGE_PER_BYTE x their bytes) reaches the live heap the last
 * collection kept. V8 otherwise lets the heap grow for many such calls first (ten 5 MB edits:
 * 70 -> 199 MB resident). A collection marks the whole live heap, so its cost grows with that
 * heap: waiting for garbage in proportion keeps its share of the work bounded, and a model
 * cannot make every big read pay a full collection of a big heap. One at a time, run once the
 * current turn of the event loop is done. Never in a process that already exposes gc. The
 * garbage collector is process-wide by nature: this holds the one handle to it.
 */
export function reclaimAfterLargeFile(bytes: number): void {
  if (bytes < RECLAIM_AFTER_BYTES) return;
  state.owed += bytes;
  if (state.scheduled || state.owed * GARBAGE_PER_BYTE < state.live) return;
  const gc = state.gc === undefined ? (state.gc = exposeGc()) : state.gc;
  if (!gc) return;
  state.scheduled = true;
  setImmediate(() => {
    state.scheduled = false;
    state.owed = 0;
    try { gc(); } catch { /* leave it to V8 */ }
    state.live = getHeapStatistics().used_heap_size;
  });
}

const state: { gc?: Gc | null; scheduled: boolean; owed: number; live: number } = { scheduled: false, owed: 0, live: 0 };

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
