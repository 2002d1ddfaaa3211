import type { Runtime } from '../core/runtime.js';

/** Streamable HTTP + legacy SSE transport (issue: "Reach every client"). Not built yet: refuse clearly. */
export async function serveHttp(_rt: Runtime, _ceiling: string[] | null, _opts: { host: string; port: number }): Promise<void> {
  throw new Error('--transport http is not available in this build yet; use stdio');
}
