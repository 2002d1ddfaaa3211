/**
 * The HTTP side of the upstream message cap. The SDK reads a JSON response whole
 * (`response.json()`) and an SSE stream line by line with no bound on a line, so an HTTP
 * upstream that answers with an endless body or an endless `data:` line would eat toolgate's
 * memory. This fetch hands the SDK a body that errors once
 * - an SSE stream (`text/event-stream`) holds a line longer than `max` bytes, or
 * - any other body passes `max` bytes in total;
 * the request in flight fails with a message that says why, and nothing else changes. On an SSE
 * answer to a POST the SDK would only log a broken stream and leave the call waiting for its
 * timeout, so the line is ended there and a JSON-RPC error is sent for each request of that POST.
 */
export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

export function cappedFetch(max: number, what: string, base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const res = await base(url, init);
    if (!res.body || [101, 204, 205, 304].includes(res.status)) return res;
    const perLine = (res.headers.get('content-type') ?? '').toLowerCase().includes('text/event-stream');
    const ids = perLine ? requestIds(init?.body) : [];
    let count = 0;
    const limit = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        if (perLine) {
          const nl = Math.max(chunk.lastIndexOf(10), chunk.lastIndexOf(13));
          count = nl >= 0 ? chunk.length - nl - 1 : count + chunk.length;
        } else {
          count += chunk.length;
        }
        if (count > max) {
          const message = `${what} sent ${perLine ? 'an event line' : 'a response'} longer than ${max} bytes; the request was dropped (toolgate caps upstream messages)`;
          if (ids.length === 0) { controller.error(new Error(message)); return; }
          const events = ids.map((id) => `data: ${JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32603, message } })}\n\n`).join('');
          controller.enqueue(new TextEncoder().encode(`\n\n${events}`));
          controller.terminate();
          return;
        }
        controller.enqueue(chunk);
      },
    });
    const out = new Response(res.body.pipeThrough(limit), { status: res.status, statusText: res.statusText, headers: res.headers });
    // The SDK names a redirect's origin from response.url: keep it.
    Object.defineProperty(out, 'url', { value: res.url });
    return out;
  };
}

/** The ids of the JSON-RPC requests a POST carries (one message or a batch). */
function requestIds(body: unknown): Array<string | number> {
  if (typeof body !== 'string') return [];
  try {
    const msgs: unknown[] = [JSON.parse(body)].flat();
    return msgs.flatMap((m) => {
      const r = m as { id?: unknown; method?: unknown };
      return typeof r?.method === 'string' && (typeof r.id === 'string' || typeof r.id === 'number') ? [r.id] : [];
    });
  } catch {
    return [];
  }
}
