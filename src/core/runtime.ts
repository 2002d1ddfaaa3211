import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import { AuditWriter } from '../audit/writer.js';
import { deniedOutright } from '../policy/evaluate.js';
import type { CompiledPolicy } from '../policy/types.js';
import type { AnyTool } from './define-tool.js';
import { newId } from './ids.js';

export interface RuntimeOptions {
  tools: AnyTool[];
  policy: CompiledPolicy;
  log: Logger;
  /** --state-dir; default: <first root>/.toolgate */
  stateDir?: string;
  /** How to run one call of this server from a shell, for replay lines: the command, and the flags that select the same workspace and policy. */
  replay: { command: string[]; flags: string[] };
}

/** Long-lived, shared by every session of one server process. */
export class Runtime {
  readonly tools: ReadonlyMap<string, AnyTool>;
  readonly runId = newId('r');
  private readonly writers = new Map<string, AuditWriter>();

  constructor(readonly opts: RuntimeOptions) {
    const m = new Map<string, AnyTool>();
    for (const t of opts.tools) {
      if (m.has(t.name)) throw new Error(`duplicate tool name ${t.name}`);
      m.set(t.name, t);
    }
    this.tools = m;
  }

  get policy(): CompiledPolicy { return this.opts.policy; }
  get log(): Logger { return this.opts.log; }

  private listedCache?: AnyTool[];

  /** Tools that are listed: those the policy does not deny outright (the policy never changes, so once). */
  listed(): AnyTool[] {
    this.listedCache ??= [...this.tools.values()].filter((t) => !deniedOutright(t, this.policy));
    return this.listedCache;
  }

  stateDir(primaryRoot: string | undefined): string {
    if (this.opts.stateDir) return path.resolve(this.opts.stateDir);
    if (primaryRoot) return path.join(primaryRoot, '.toolgate');
    const base = process.env.XDG_STATE_HOME || path.join(os.homedir(), '.local', 'state');
    return path.join(base, 'toolgate');
  }

  auditFile(primaryRoot: string | undefined): string {
    const p = this.policy.data.audit.path;
    if (p) return path.isAbsolute(p) || !primaryRoot ? path.resolve(p) : path.join(primaryRoot, p);
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

  close(): void {
    for (const w of this.writers.values()) w.close();
    this.writers.clear();
  }
}
