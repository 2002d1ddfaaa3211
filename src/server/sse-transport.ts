import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import { BatchReplies, errorReply } from './batch.js';

/**
 * The legacy HTTP+SSE transport (protocol 2024-11-05) with JSON-RPC batches: the SDK's
 * transport refuses a POSTed array with 400. Here each member is delivered and the answers to
 * the batch's requests go out as ONE `message` event holding an array — as over stdio and
 * Streamable HTTP.
 */
export class BatchingSseTransport extends SSEServerTransport {
  private readonly batches = new BatchReplies((replies) => super.send(replies as unknown as JSONRPCMessage));

  override async handleMessage(message: unknown, extra?: MessageExtraInfo): Promise<void> {
    if (!Array.isArray(message)) {
      if (message && typeof message === 'object') this.batches.cancelled(message as JSONRPCMessage);
      return super.handleMessage(message, extra);
    }
    if (message.length === 0) {
      await super.send(errorReply(-32600, 'Invalid Request: an empty batch'));
      return;
    }
    const { deliver, settle } = this.batches.split(message);
    for (const m of deliver) {
      this.batches.cancelled(m);
      this.onmessage?.(m, extra);
    }
    settle();
  }

  override async send(message: JSONRPCMessage): Promise<void> {
    if (!this.batches.hold(message)) await super.send(message);
  }
}
