import type { Session } from '../core/session.js';
import type { OutputCapture } from './capture.js';
import { killGroup } from './kill.js';
import type { Exit, Running } from './run.js';

export interface ProcRecord {
  id: string;
  command: string;
  cwd: string;
  sandbox: 'bwrap' | 'none';
  background: boolean;
  running: Running;
  capture: OutputCapture;
  /** Absolute file holding the whole output (background runs). */
  file?: string;
  storage_ref?: string;
  started_at: string;
  killed: boolean;
  timed_out: boolean;
  /** A background shell: the folders its input so far may have left it in (process_write; null = unknown). */
  shellDirs?: (string | null)[];
  /** Programs in the command (for process_write: is stdin code?). */
  programs: string[];
  exit?: Exit;
  waiters: Set<() => void>;
  /** PATH before and after the PATH check (env.ts safePath), for the hint on a command not found. */
  path?: { given: string; kept: string };
}

const KEY = 'toolgate/processes';

/**
 * The processes one session started. Only these can be listed, read, written or killed;
 * disposing the session (client gone, server exit) kills them all. A process-exit hook
 * kills them too if the server dies without disposing.
 */
export class ProcessTable {
  private readonly procs = new Map<string, ProcRecord>();
  private seq = 0;
  private readonly onExit = () => { for (const p of this.procs.values()) p.running.kill(); };

  private constructor() {
    process.on('exit', this.onExit);
  }

  static of(session: Session): ProcessTable {
    const existing = session.resources.get(KEY);
    if (existing instanceof ProcessTable) return existing;
    const t = new ProcessTable();
    session.resources.set(KEY, t);
    return t;
  }

  nextId(): string {
    this.seq += 1;
    return `p${this.seq}`;
  }

  add(rec: ProcRecord): void {
    this.procs.set(rec.id, rec);
    rec.running.done.then((exit) => {
      rec.exit = exit;
      if (rec.running.pid > 0) killGroup(rec.running.pid);
      for (const w of rec.waiters) w();
    }, () => {});
  }

  remove(id: string): void {
    this.procs.delete(id);
  }

  get(id: string): ProcRecord | undefined {
    return this.procs.get(id);
  }

  list(): ProcRecord[] {
    return [...this.procs.values()];
  }

  runningCount(): number {
    return this.list().filter((p) => !p.exit).length;
  }

  async dispose(): Promise<void> {
    process.off('exit', this.onExit);
    const all = this.list();
    for (const p of all) { if (!p.exit) p.killed = true; p.running.kill(); }
    await Promise.allSettled(all.map((p) => p.running.done));
  }
}
