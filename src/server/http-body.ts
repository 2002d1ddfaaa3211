import type { IncomingMessage } from 'node:http';

export class BodyError extends Error {
  constructor(readonly status: 400 | 408 | 413 | 415, message: string) {
    super(message);
  }
}

/**
 * Reads a JSON request body up to `maxBytes` (413 beyond, checked on Content-Length and while
 * streaming). Our own reader, because the SDK's express helper caps bodies at 100 KB.
 */
const BODY_DEADLINE_MS = Number(process.env.TOOLGATE_HTTP_BODY_TIMEOUT_MS ?? 30_000);

export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  const ct = String(req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (ct !== 'application/json') throw new BodyError(415, `Content-Type must be application/json, not "${ct}"`);
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) throw new BodyError(413, `request body of ${declared} bytes exceeds the limit of ${maxBytes}`);
  const chunks: Buffer[] = [];
  let size = 0;
  // A body that never finishes must not hold the request forever (requestTimeout is off for SSE).
  const timer = setTimeout(() => req.destroy(new BodyError(408, `request body not received within ${BODY_DEADLINE_MS} ms`)), BODY_DEADLINE_MS);
  try {
    for await (const c of req as AsyncIterable<Buffer>) {
      size += c.length;
      if (size > maxBytes) throw new BodyError(413, `request body exceeds the limit of ${maxBytes} bytes`);
      chunks.push(c);
    }
  } catch (e) {
    if (e instanceof BodyError) throw e;
    throw new BodyError(408, `request body not received within ${BODY_DEADLINE_MS} ms`);
  } finally {
    clearTimeout(timer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new BodyError(400, 'request body is not valid JSON');
  }
}
