import { realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import { AuditWriter } from '../audit/writer.js';
import { deniedOutright } from '../policy/evaluate.js';
import type { CompiledPolicy } from '../policy/types.js';
import type { AuditRecord } from '../audit/record.js';
import type { ApprovalServices } from '../approvals/services.js';
import type { AnyTool } from './define-tool.js';
import type { ToolError } from './errors.js';
import { newId } from './ids.js';

export interface RuntimeOptions {
  tools: AnyTool[];
  policy: CompiledPolicy;
  log: Logger;
  /** --state-dir; default: <first root>/.toolgate */
  stateDir?: string;
  /** How to run one call of this server from a shell, for replay lines: the command, and the flags that select the same workspace and policy. */
  replay: { command: string[]; flags: string[] };
  /** Inbox, stored grants, console (serve); stored grants only (call); none (tests). */
  approvals?: ApprovalServices;
}

/** One finished call, as audited (the console's live table listens to these). */
export type CallListener = (rec: Omit<AuditRecord, 'prev_hash'>) => void;

/** Long-lived, shared by every session of one server process. */
export class Runtime {
  readonly runId = newId('r');
  private readonly writers = new Map<string, AuditWriter>();
  private readonly builtIn: ReadonlyMap<string, AnyTool>;
  /** Tools that come and go (an upstream's, once it is connected), by source. */
  private readonly dynamic = new Map<string, AnyTool[]>();
  private current: ReadonlyMap<string, AnyTool>;
  private readonly toolListeners = new Set<() => void>();
  private readonly closers: Array<() => unknown> = [];
  private readonly callListeners = new Set<CallListener>();

  /**
   * Where the process started: relative state and audit paths are read against it, never against
   * the working directory of the moment (list_dir steps into folders, and its step back can fail
   * to "/": workspace/dir-stat.ts).
   */
  private readonly startDir = process.cwd();

  constructor(readonly opts: RuntimeOptions) {
    const m = new Map<string, AnyTool>();
    for (const t of opts.tools) {
      if (m.has(t.name)) throw new Error(`duplicate tool name ${t.name}`);
      m.set(t.name, t);
    }
    this.builtIn = m;
    this.current = m;
  }

  get policy(): CompiledPolicy { return this.opts.policy; }
  get log(): Logger { return this.opts.log; }
  get tools(): ReadonlyMap<string, AnyTool> { return this.current; }
  get approvals(): ApprovalServices | undefined { return this.opts.approvals; }

  onCall(fn: CallListener): () => void {
    this.callListeners.add(fn);
    return () => this.callListeners.delete(fn);
  }

  /** Called by the pipeline after a call's audit record is written. */
  emitCall(rec: Omit<AuditRecord, 'prev_hash'>): void {
    for (const fn of this.callListeners) {
      try { fn(rec); } catch { /* a listener's failure never fails a call */ }
    }
  }

  private listedCache?: AnyTool[];

  /**
   * Tools that are listed: those the policy does not deny outright and that do not refuse
   * every call (an upstream tool pending trust). Computed once per change of the tool set.
   */
  listed(): AnyTool[] {
    this.listedCache ??= [...this.tools.values()].filter((t) => !deniedOutright(t, this.policy) && !t.refusal?.());
    return this.listedCache;
  }

  /**
   * Replaces the tools of one source (an upstream). A name already taken by a built-in or
   * another source is dropped (logged), never overwrites. Sessions hear of it (tools/list_changed).
   */
  setTools(source: string, tools: AnyTool[]): void {
    this.dynamic.set(source, tools);
    const m = new Map(this.builtIn);
    for (const [src, list] of this.dynamic) {
      for (const t of list) {
        if (m.has(t.name)) { this.log.error({ tool: t.name, source: src }, 'tool name already taken: not mounted'); continue; }
        m.set(t.name, t);
      }
    }
    this.current = m;
    this.listedCache = undefined;
    for (const cb of this.toolListeners) {
      try { cb(); } catch (e) { this.log.warn({ err: e }, 'tools changed listener failed'); }
    }
  }

  /** Called whenever the set of tools (or what is listed) changes; returns the unsubscribe. */
  onToolsChanged(cb: () => void): () => void {
    this.toolListeners.add(cb);
    return () => this.toolListeners.delete(cb);
  }

  /** Explains a tool name nobody has (yet): an upstream that is not connected names its own tools. */
  private readonly missingExplainers: Array<(name: string) => ToolError | undefined> = [];

  onMissingTool(fn: (name: string) => ToolError | undefined): void {
    this.missingExplainers.push(fn);
  }

  missingTool(name: string): ToolError | undefined {
    for (const fn of this.missingExplainers) {
      const e = fn(name);
      if (e) return e;
    }
    return undefined;
  }

  /** Something to stop when the runtime closes (upstream connections). */
  onClose(fn: () => unknown): void {
    this.closers.push(fn);
  }

  stateDir(primaryRoot: string | undefined): string {
    if (this.opts.stateDir) return path.resolve(this.startDir, this.opts.stateDir);
    if (primaryRoot) return path.join(primaryRoot, '.toolgate');
    // A relative XDG_STATE_HOME is ignored (XDG spec; user-state.ts does the same): never a folder read against the working directory.
    const xdg = process.env.XDG_STATE_HOME;
    const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), '.local', 'state');
    return path.join(base, 'toolgate');
  }

  private readonly realStateDirs = new Map<string, string>();

  /**
   * The real path of a state dir, looked up once it exists (every call's spill guard needs it;
   * a realpath per call walked every component). Not remembered while the folder is missing.
   */
  realStateDir(dir: string): string {
    const known = this.realStateDirs.get(dir);
    if (known !== undefined) return known;
    try {
      const real = realpathSync(dir);
      this.realStateDirs.set(dir, real);
      return real;
    } catch {
      return dir;
    }
  }

  auditFile(primaryRoot: string | undefined): string {
    const p = this.policy.data.audit.path;
    if (p) return path.isAbsolute(p) || !primaryRoot ? path.resolve(this.startDir, p) : path.join(primaryRoot, p);
    return path.join(this.stateDir(primaryRoot), 'audit.jsonl');
  }

  audit(primaryRoot: string | undefined): AuditWriter {
    const file = this.auditFile(primaryRoot);
    let w = this.writers.get(file);
    if (!w) {
      w = new AuditWriter(file, this.policy.data.audit.fsync);
      this.writers.set(file, w);
    }
    return w;
  }

  /** The audit files this process has written to. */
  auditFiles(): string[] {
    return [...this.writers.keys()];
  }

  close(): void {
    for (const fn of this.closers.splice(0)) {
      try { void Promise.resolve(fn()).catch(() => {}); } catch { /* closing anyway */ }
    }
    for (const w of this.writers.values()) w.close();
    this.writers.clear();
  }
}
