import { newId } from './ids.js';

/** What was known of a file when this session last read (or wrote) it. */
export interface ReadRecord {
  size: number;
  mtime_ms: number;
  sha256: string;
}

/** A standing "allow for this session" granted by the user. */
export interface Grant {
  tool: string;
  /** Path glob (relative to a root) the grant covers, when it is about paths. */
  path?: string;
  /** The real absolute path granted: a grant is matched on it (and its root), never by glob. */
  abs?: string;
  /** With abs: its contents too (a recursive delete). */
  recursive?: boolean;
  /** With abs: the kind of access granted (write, delete, …); a grant to change a file does not cover deleting it. */
  access?: string;
  /** Command prefix tokens, when it is about a command. */
  command?: string[];
  domain?: string;
  granted_at: string;
}

export interface ElicitRequest {
  message: string;
  requestedSchema: Record<string, unknown>;
}
export interface ElicitResponse {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, unknown>;
}

/** Things a session owns that have to be torn down with it (background processes, …). */
export interface Disposable {
  dispose(): Promise<void> | void;
}

/**
 * Per-client-session state: read tracking, grants, and the way to ask the user.
 * Created by the transport; never module-level.
 */
export class Session {
  readonly id: string;
  readonly reads = new Map<string, ReadRecord>();
  readonly grants: Grant[] = [];
  readonly resources = new Map<string, Disposable>();
  /** Real paths of the spill files (storage_ref) this session was given: the only ones it may read. */
  readonly spills = new Set<string>();
  /** Set by the transport when the client can answer elicitation/create. */
  elicit?: (req: ElicitRequest, opts: { signal: AbortSignal; timeoutMs: number; onTick?: () => void; relatedRequestId?: string | number }) => Promise<ElicitResponse>;
  /** Set by the transport when the client declared sampling: forwards sampling/createMessage (an upstream's, when the policy allows it). */
  sample?: (params: Record<string, unknown>, opts: { signal: AbortSignal; relatedRequestId?: string | number }) => Promise<unknown>;
  /**
   * Set by the transport when the client has URL-mode elicitation but not the form: asks the
   * client to open a URL (the console page of one request, never carrying a secret).
   */
  elicitUrl?: (req: { message: string; url: string; elicitationId: string }, opts: { signal: AbortSignal; timeoutMs: number; relatedRequestId?: string | number }) => Promise<ElicitResponse>;
  /** True when a human approved this call out of band (toolgate call --approve). */
  preApproved = false;

  constructor(id?: string) {
    this.id = id ?? newId('ses');
  }

  recordRead(abs: string, rec: ReadRecord): void {
    this.reads.set(abs, rec);
  }

  async dispose(): Promise<void> {
    const all = [...this.resources.values()];
    this.resources.clear();
    await Promise.allSettled(all.map((r) => r.dispose()));
  }
}
