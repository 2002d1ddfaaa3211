/**
 * The built-in grep engine's regex runner, in a worker thread (see regex-matcher.ts): a pattern
 * JavaScript's backtracking engine may take exponential time on runs here, so that the server's
 * thread stays free and the search can be stopped by ending this thread. One worker per search;
 * the pattern comes once in workerData, files' texts in batches.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { searchText } from './search-text.js';
import type { OutputMode } from './types.js';

interface Setup { source: string; flags: string; literal: string | null; multiline: boolean; mode: OutputMode; context: number; limit?: number }

const s = workerData as Setup;
const pat = { re: new RegExp(s.source, s.flags), literal: s.literal };
// Each answer leaves as soon as it is found: held together, a batch's answers would all be lost
// with a runaway match among them.
parentPort!.on('message', (batch: Array<{ id: number; text: string }>) => {
  for (const m of batch) parentPort!.postMessage({ id: m.id, found: searchText(m.text, pat, s.multiline, s.mode, s.context, s.limit) });
});
