import { lstatSync, realpathSync } from 'node:fs';
import { lstat, readlink, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { ToolError } from '../core/errors.js';
import type { PathAccess, ResolvedPath } from '../core/types.js';
import type { PathRules } from './path-rules.js';
import { IgnoreCompileCache } from '../tools/walk/ignore-cache.js';
import { TreeSizes } from '../tools/walk/tree-sizes.js';
import { LinkCache } from '../tools/walk/link-cache.js';
import { ruleRefusal, secretsRefusal, spillRefusal, type PathGate, type SpillGuard } from './path-gate.js';

const sep = '/';

/** True when `child` equals `root` or lies below it, compared by whole path components. */
export function isWithin(child: string, root: string): boolean {
  if (child === root) return true;
  const prefix = root.endsWith(sep) ? root : root + sep;
  return child.startsWith(prefix);
}

function kindOf(st: { isFile(): boolean; isDirectory(): boolean }): ResolvedPath['kind'] {
  return st.isFile() ? 'file' : st.isDirectory() ? 'dir' : 'other';
}

const WRITE_ACCESS: ReadonlySet<PathAccess> = new Set(['write', 'create', 'delete']);

export const NO_WORKSPACE_MESSAGE =
  'toolgate has no workspace: start it with --workspace DIR, or use a client that sends MCP roots.';

/**
 * The set of root directories a session may touch, and the one function that
 * admits a path into it. Roots are real paths (symlinks resolved at start).
 */
export class Workspace {
  /** `emptyReason` explains an empty workspace better than the generic message (e.g. disjoint client roots). */
  constructor(
    readonly roots: string[], readonly rules: PathRules, private readonly emptyReason?: string,
    /** The policy's path rules for the tool of this call (set by the pipeline). */
    readonly gate?: PathGate,
    /** Which spill files this session may read (set by the pipeline). */
    readonly spills?: SpillGuard,
    /** Compiled .gitignore rules by text, reused across calls (see IgnoreCompileCache). */
    readonly ignoreCache: IgnoreCompileCache = new IgnoreCompileCache(),
    /** Sizes of the folders glob started from, to pick its engine (see TreeSizes). */
    readonly treeSizes: TreeSizes = new TreeSizes(),
    /** Symbolic links per folder, checked by inode and ctime, for glob's ripgrep engine (see LinkCache). */
    readonly linkCache: LinkCache = new LinkCache(),
  ) {}

  /** The same workspace judged for one call: the tool's path rules and the session's spills. */
  forCall(gate: PathGate | undefined, spills: SpillGuard | undefined): Workspace {
    return new Workspace(this.roots, this.rules, this.emptyReason, gate, spills, this.ignoreCache, this.treeSizes, this.linkCache);
  }

  /** Resolves every directory to its real path; refuses what is not a directory. */
  static async realRoots(dirs: string[]): Promise<string[]> {
    const out: string[] = [];
    for (const d of dirs) {
      let real: string;
      try {
        real = await realpath(path.resolve(d));
      } catch {
        throw new Error(`workspace root ${d} does not exist`);
      }
      if (!(await stat(real)).isDirectory()) throw new Error(`workspace root ${d} is not a directory`);
      if (!out.includes(real)) out.push(real);
    }
    return out;
  }

  /**
   * Client roots narrow the ceiling, never widen it: a client root inside a ceiling root is
   * kept, a ceiling root inside a client root is kept, anything else is dropped.
   */
  static intersect(ceiling: string[] | null, client: string[] | null): string[] {
    if (!ceiling) return client ?? [];
    if (!client) return ceiling;
    const out: string[] = [];
    for (const c of client) for (const r of ceiling) {
      const keep = isWithin(c, r) ? c : isWithin(r, c) ? r : null;
      if (keep && !out.includes(keep)) out.push(keep);
    }
    return out;
  }

  /** The root containing `abs` and the path relative to it ('' for the root), or null. */
  locate(abs: string): { rootIndex: number; relToRoot: string } | null {
    let best = -1;
    for (let i = 0; i < this.roots.length; i++) {
      if (isWithin(abs, this.roots[i]!) && (best < 0 || this.roots[i]!.length > this.roots[best]!.length)) best = i;
    }
    if (best < 0) return null;
    const root = this.roots[best]!;
    const rel = abs === root ? '' : abs.slice(root.endsWith(sep) ? root.length : root.length + 1);
    return { rootIndex: best, relToRoot: rel };
  }

  /** What results show for an absolute path inside the workspace. */
  display(abs: string): string {
    const loc = this.locate(abs);
    if (!loc) return abs;
    if (loc.rootIndex === 0 || this.roots.length === 1) return loc.relToRoot === '' ? '.' : loc.relToRoot;
    return abs;
  }

  get primary(): string {
    const r = this.roots[0];
    if (!r) throw new ToolError('PathDenied', this.emptyReason ?? NO_WORKSPACE_MESSAGE);
    return r;
  }

  /**
   * Admits a path: exact string (no trimming or decoding), NUL refused, every symlink
   * resolved (the nearest existing ancestor for a new path), containment by component,
   * deny list for any access and protect list for writes, on both the requested and
   * the resolved path. Throws a ToolError; never returns a path outside the roots.
   */
  async resolve(input: string, access: PathAccess, opts: { named?: string } = {}): Promise<ResolvedPath> {
    if (typeof input !== 'string') throw new ToolError('InvalidArguments', 'path must be a string.');
    if (input.includes('\0')) {
      throw new ToolError('PathTraversalBlocked', 'The path contains a NUL byte; give the plain file name.');
    }
    const root = this.primary;
    const requested = input === '' ? '.' : input;
    const joined = path.isAbsolute(requested) ? requested : `${root}${sep}${requested}`;

    // The requested path, read lexically, is judged before anything looks at the file system:
    // a refusal cannot depend on what exists behind it.
    const lexical = path.resolve(joined);
    const lexLoc = this.locate(lexical);
    // Messages name what the caller gave (`named`: the whole path when this is a part of it).
    const said = opts.named ?? input;
    this.admit(said, access, lexLoc?.relToRoot ?? null, lexical);

    const { abs, exists, kind } = await this.realOf(joined, said, access);
    const loc = this.locate(abs);
    if (!loc) {
      throw new ToolError('PathTraversalBlocked',
        `${said} resolves outside the workspace (${this.roots.join(', ')}); use a path inside it.`,
        { details: { path: said } });
    }
    this.admit(said, access, loc.relToRoot, abs);
    if (kind === 'other') {
      throw new ToolError('PathDenied', `${said} is not a regular file or directory (a FIFO, socket or device); toolgate does not open those.`);
    }
    const out: ResolvedPath = { input, abs, display: this.display(abs), rootIndex: loc.rootIndex, relToRoot: loc.relToRoot, exists, kind };
    if (lexLoc && lexical !== abs) out.lexical = { relToRoot: lexLoc.relToRoot, abs: lexical };
    if (this.rules.bases.length > 1) out.bases = this.rules.bases;
    return out;
  }

  /**
   * The deny list, the policy's rules for this tool, the spill guard and (for writes) the protect
   * list, on one spelling of a path. A path is treated as a folder whatever it is (a rule on
   * everything inside `d` covers `d`), so the answer never depends on the file system.
   */
  private admit(input: string, access: PathAccess, rel: string | null, abs: string): void {
    if (this.rules.isDenied(rel, abs, true)) throw secretsRefusal(input);
    const v = this.gate?.judge(rel, abs, true);
    if (v?.decision === 'deny') throw ruleRefusal(this.gate!.tool, input, v);
    if (this.spills?.blocks(abs)) throw spillRefusal(input);
    if (WRITE_ACCESS.has(access) && this.rules.isProtected(rel, abs)) {
      throw new ToolError('PathDenied',
        `${input} is protected (paths.protect): it can be read but no tool may write, create or delete it.`,
        { details: { path: input, list: 'protect' } });
    }
    if (v?.decision === 'ask' && !this.gate!.asked.some((a) => a.abs === abs)) this.gate!.asked.push({ input, access, relToRoot: rel, abs });
  }

  /**
   * The checks of resolve() on one absolute path the caller reaches by `input` (e.g. a link's
   * own path, which resolve would follow): throws the same refusal resolve would.
   */
  admitPath(input: string, access: PathAccess, abs: string): void {
    this.admit(input, access, this.locate(abs)?.relToRoot ?? null, abs);
  }

  /** True when a deny list, a deny rule or the spill guard covers `abs` (a link target met while resolving). */
  private blocked(abs: string): boolean {
    const rel = this.locate(abs)?.relToRoot ?? null;
    return this.rules.isDenied(rel, abs, true) || this.gate?.judge(rel, abs, true)?.decision === 'deny' || !!this.spills?.blocks(abs);
  }

  /**
   * A link that cannot be resolved (dangling, a loop): follow its targets lexically, and when one
   * lies in a denied area give that area's refusal — the error must not tell a missing file
   * there from a present one. Otherwise the given error stands.
   */
  private async refuseLinkInto(link: string, input: string, access: PathAccess, otherwise: ToolError): Promise<never> {
    let cur = link;
    for (let hop = 0; hop < 40; hop++) {
      let target: string;
      try {
        target = path.resolve(path.dirname(cur), await readlink(cur));
      } catch {
        break;
      }
      if (this.blocked(target)) this.admit(input, access, this.locate(target)?.relToRoot ?? null, target);
      let parent: string;
      try {
        parent = await realpath(path.dirname(target));
      } catch {
        break;
      }
      const next = path.join(parent, path.basename(target));
      if (this.blocked(next)) this.admit(input, access, this.locate(next)?.relToRoot ?? null, next);
      const st = await lstat(next).catch(() => null);
      if (!st?.isSymbolicLink()) break;
      cur = next;
    }
    throw otherwise;
  }

  /** Real path of `joined`; for a path that does not exist, its nearest existing ancestor's real path plus the rest. */
  private async realOf(joined: string, input: string, access: PathAccess): Promise<{ abs: string; exists: boolean; kind: ResolvedPath['kind'] }> {
    try {
      // Metadata calls on the common path are synchronous: two thread-pool round trips cost
      // more than the syscalls themselves (the slow walk below stays asynchronous).
      const abs = realpathSync.native(joined);
      return { abs, exists: true, kind: kindOf(lstatSync(abs)) };
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // A loop is found again (and judged) by the walk below.
      if (code !== 'ENOENT' && code !== 'ENOTDIR' && code !== 'ELOOP') throw new ToolError('IOError', `Cannot resolve ${input}: ${code}`, { cause: e });
    }
    // Walk component by component: `..` after a symlink means the link target's parent, as the kernel reads it.
    const parts = joined.split(sep);
    let cur = sep;
    for (let i = 1; i < parts.length; i++) {
      const comp = parts[i]!;
      if (comp === '' || comp === '.') continue;
      if (comp === '..') { cur = path.dirname(cur); continue; }
      const next = cur === sep ? sep + comp : cur + sep + comp;
      let st;
      try {
        st = await lstat(next);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code !== 'ENOENT' && code !== 'ENOTDIR') throw new ToolError('IOError', `Cannot resolve ${input}: ${code}`, { cause: e });
        // Keep walking: a later `..` can climb back out of the missing part onto a symlink
        // (`missing/../outlink/x`), so what follows must be resolved, not read lexically.
        cur = next;
        continue;
      }
      if (st.isSymbolicLink()) {
        try {
          cur = await realpath(next);
        } catch (e) {
          const loop = (e as NodeJS.ErrnoException).code === 'ELOOP';
          await this.refuseLinkInto(next, input, access, new ToolError('PathTraversalBlocked', loop
            ? `${input} has a symbolic link loop.`
            : `${input} goes through a symbolic link whose target does not exist; toolgate does not follow dangling links.`));
        }
      } else {
        cur = next;
      }
    }
    // `cur` is now real up to its first missing component, and holds no `..` after it.
    try {
      const abs = await realpath(cur);
      return { abs, exists: true, kind: kindOf(await lstat(abs)) };
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw new ToolError('IOError', `Cannot resolve ${input}: ${code}`, { cause: e });
      return { abs: cur, exists: false, kind: 'missing' };
    }
  }

  /** Whether writing here is allowed by the path lists (used for files found by a walk). */
  isDenied(abs: string): boolean {
    const loc = this.locate(abs);
    return this.rules.isDenied(loc?.relToRoot ?? null, abs);
  }
}

export { WRITE_ACCESS };
