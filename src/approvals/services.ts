import type { GrantStore } from './grant-store.js';
import type { Inbox, RequestView } from './inbox.js';

/**
 * What a server process offers the approval step beyond the client: the inbox (answered from the
 * console or `toolgate approvals`), the stored allow_always grants, the console's address.
 * `toolgate call` and in-process harnesses have only the grant store, or nothing.
 */
export interface ApprovalServices {
  grants?: GrantStore;
  inbox?: Inbox;
  /** The console's address for one request, never carrying the secret; undefined when the console is off. */
  consoleUrl?(requestId?: string): string | undefined;
  /** Tell the person a request waits (desktop notification where available). */
  announce?(req: RequestView): void;
  warn?(msg: string): void;
}
