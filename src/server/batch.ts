import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

type Id = string | number;
const key = (id: Id) => JSON.stringify(id);

export function errorReply(code: number, message: string, id: Id | null = null): JSONRPCMessage {
  return { jsonrpc: '2.0', id, error: { code, message } } as unknown as JSONRPCMessage;
}

export function idOf(v: unknown): Id | null {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return null;
  const id = (v as { id?: unknown }).id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

export const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A progress token the SDK's schema takes: a string or a safe integer (or none). */
export const isProgressToken = (t: unknown): boolean => t === undefined || typeof t === 'string' || Number.isSafeInteger(t);
const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);

/**
 * True for a plain request or notification that the SDK's JSONRPCMessageSchema certainly
 * accepts as it is (a subset of it, checked without a zod pass): the common case of every
 * call. Anything else — responses, odd ids, task metadata — takes the schema.
 */
export function isPlainRequest(v: unknown): v is JSONRPCMessage {
  if (!isPlainObject(v) || v.jsonrpc !== '2.0' || typeof v.method !== 'string') return false;
  for (const k in v) if (!REQUEST_KEYS.has(k)) return false;
  if ('id' in v && typeof v.id !== 'string' && !Number.isSafeInteger(v.id)) return false;
  if (v.params === undefined) return true;
  if (!isPlainObject(v.params)) return false;
  const meta = v.params._meta;
  if (meta === undefined) return true;
  if (!isPlainObject(meta) || 'io.modelcontextprotocol/related-task' in meta) return false;
  return isProgressToken(meta.progressToken);
}

/** A parsed JSON value as a JSON-RPC message, or the -32600 reply it earns (with its id when it had a usable one). */
export function checkMessage(value: unknown): { ok: JSONRPCMessage } | { error: JSONRPCMessage } {
  if (isPlainRequest(value)) return { ok: value };
  const parsed = JSONRPCMessageSchema.safeParse(value);
  if (parsed.success) return { ok: parsed.data };
  return { error: errorReply(-32600, 'Invalid Request: not a JSON-RPC 2.0 request, notification or response', idOf(value)) };
}

interface Batch {
  waiting: Set<string>;
  replies: JSONRPCMessage[];
}

/**
 * JSON-RPC batches for a transport whose server answers one message at a time: the members
 * are delivered one by one, the answers to the batch's requests are held and handed to
 * `flush` as ONE array when the last arrives (invalid members' errors included); a batch of
 * only notifications and responses gets no reply. Used by stdio and legacy SSE (the
 * Streamable HTTP transport of the SDK does this itself).
 */
export class BatchReplies {
  private readonly open = new Map<string, Batch>();

  constructor(private readonly flush: (replies: JSONRPCMessage[]) => void | Promise<void>) {}

  /** Splits a non-empty batch: returns the messages to deliver, then `settle()` once they were delivered. */
  split(items: unknown[]): { deliver: JSONRPCMessage[]; settle: () => void } {
    const batch: Batch = { waiting: new Set(), replies: [] };
    const deliver: JSONRPCMessage[] = [];
    for (const item of items) {
      const msg = checkMessage(item);
      if ('error' in msg) { batch.replies.push(msg.error); continue; }
      deliver.push(msg.ok);
      const id = 'method' in msg.ok ? idOf(msg.ok) : null;
      if (id !== null) {
        batch.waiting.add(key(id));
        this.open.set(key(id), batch);
      }
    }
    return { deliver, settle: () => this.flushIfDone(batch) };
  }

  /** True when `message` answers a request of an open batch: it is held and sent with the batch. */
  hold(message: JSONRPCMessage): boolean {
    const isResponse = !('method' in message) && ('result' in message || 'error' in message);
    const id = isResponse ? idOf(message) : null;
    const batch = id !== null ? this.open.get(key(id)) : undefined;
    if (!batch || id === null) return false;
    this.open.delete(key(id));
    batch.waiting.delete(key(id));
    batch.replies.push(message);
    this.flushIfDone(batch);
    return true;
  }

  /**
   * A `notifications/cancelled` from the client: the request it names gets no answer (MCP), so
   * its batch stops waiting for it and goes out with the answers it has (none: no reply).
   */
  cancelled(message: JSONRPCMessage): void {
    if (!('method' in message) || message.method !== 'notifications/cancelled' || 'id' in message) return;
    const id = (message.params as { requestId?: unknown } | undefined)?.requestId;
    const batch = typeof id === 'string' || typeof id === 'number' ? this.open.get(key(id)) : undefined;
    if (!batch) return;
    this.open.delete(key(id as Id));
    batch.waiting.delete(key(id as Id));
    this.flushIfDone(batch);
  }

  clear(): void {
    this.open.clear();
  }

  private flushIfDone(batch: Batch) {
    if (batch.waiting.size > 0 || batch.replies.length === 0) return;
    const replies = batch.replies;
    batch.replies = [];
    void this.flush(replies);
  }
}
