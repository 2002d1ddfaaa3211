import { realpath, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { SessionWorkspace } from '../core/pipeline.js';
import type { Runtime } from '../core/runtime.js';
import { Session } from '../core/session.js';
import { Workspace } from '../workspace/workspace.js';

async function realDirs(uris: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const u of uris) {
    try {
      const p = u.startsWith('file:') ? fileURLToPath(u) : u;
      const real = await realpath(p);
      if ((await stat(real)).isDirectory() && !out.includes(real)) out.push(real);
    } catch {
      // A root that does not exist on this machine narrows to nothing.
    }
  }
  return out;
}

/**
 * One client session's workspace: the operator's ceiling (--workspace), narrowed by the
 * client's MCP roots when it sends them. Calls that arrive while roots are being fetched
 * wait for them, so a start-up race never widens or empties the workspace by accident.
 */
export class SessionRoots implements SessionWorkspace {
  readonly session: Session;
  private clientRoots: string[] | null = null;
  private pending: Promise<void> | null = null;
  private cached: Workspace | null = null;

  constructor(private readonly rt: Runtime, private readonly ceiling: string[] | null, session?: Session) {
    this.session = session ?? new Session();
  }

  /** Called when the client's roots (file:// URIs) are known or changed. */
  refresh(fetchRoots: () => Promise<string[]>): void {
    const p = (async () => {
      try {
        this.clientRoots = await realDirs(await fetchRoots());
      } catch (e) {
        this.rt.log.warn({ err: e }, 'could not list the client roots');
        // Without an answer the ceiling stands; with no ceiling there is no workspace.
        this.clientRoots = this.ceiling ? null : [];
      }
      this.cached = null;
    })();
    this.pending = p;
  }

  async workspace(): Promise<Workspace> {
    if (this.pending) await this.pending;
    if (this.cached) return this.cached;
    const roots = Workspace.intersect(this.ceiling, this.clientRoots);
    const stateDir = this.rt.stateDir(roots[0]);
    const auditFile = this.rt.auditFile(roots[0]);
    // Rules are relative to a root: to the session's roots and to the --workspace ceiling they narrow.
    const bases = [...new Set([...(this.ceiling ?? []), ...roots])];
    const rules = this.rt.policy.pathRules.withProtected([stateDir, auditFile, `${auditFile}.head`]).withBases(bases);
    const why = roots.length === 0 && this.ceiling && this.clientRoots
      ? `The client's roots (${this.clientRoots.join(', ') || 'none'}) do not overlap the workspace toolgate was started with (${this.ceiling.join(', ')}); open a folder inside it in the client.`
      : undefined;
    this.cached = new Workspace(roots, rules, why);
    return this.cached;
  }
}
