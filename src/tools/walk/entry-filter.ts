import type { Dirent } from 'node:fs';
import type { PathGate, SpillGuard } from '../../workspace/path-gate.js';
import { INSIDE, type GlobMatcher } from '../../workspace/path-rules.js';
import type { Workspace } from '../../workspace/workspace.js';
import type { IgnoreStack } from './ignore-stack.js';

export type EntryType = 'file' | 'dir' | 'symlink' | 'other';

/** Why an entry was left out of a listing or walk. */
export type SkipReason = 'hidden' | 'denied' | 'state' | 'ignored' | 'policy';

/** Directory toolgate keeps its own state in (audit, spills); never listed or walked. */
export const STATE_DIR_NAME = '.toolgate';

export function entryType(d: Dirent): EntryType {
  // Dirent types come from the directory itself (lstat semantics): a symlink is a symlink.
  return d.isSymbolicLink() ? 'symlink' : d.isDirectory() ? 'dir' : d.isFile() ? 'file' : 'other';
}

export interface FilterOptions {
  /** Keep names starting with a dot. */
  hidden: boolean;
  /** Apply .gitignore / .ignore rules (the stack is built by the caller). */
  gitignore: boolean;
}

/** EntryFilter.check for the entries of one folder: see EntryFilter.folder. */
export interface FolderFilter {
  check(name: string, type: EntryType, stack: IgnoreStack | null): SkipReason | null;
}

/**
 * THE walk filter: every tool that walks or lists (list_dir, glob, the walk module, grep's
 * DenyFilter, delete_file's walk, a future ripgrep-backed glob) asks it of each entry.
 * Decides, entry by entry, what a listing or walk may show: never the secrets deny list
 * (not even a name), never what a deny rule for the call's tool (or `*`) covers (silently,
 * like the secrets), never what an `ask` rule covers ('policy': counted, reported as
 * skipped_by_policy), never the state dir, hidden names and ignored paths only on request.
 *
 * The deny check here tests only the entry itself (relative and absolute, and "something
 * inside" for a directory): its ancestors were admitted by `Workspace.resolve` or by this
 * filter on the way down, which is what PathRules.isDenied would re-test for every entry.
 */
export class EntryFilter {
  private readonly deny: GlobMatcher;
  private readonly stateDirs: ReadonlySet<string>;
  private readonly deniedAbs: ReadonlySet<string>;
  private readonly gate: PathGate | undefined;
  private readonly bases: readonly string[];
  private readonly basePrefixes: ReadonlyArray<readonly [string, string]>;
  private readonly spills: SpillGuard | undefined;

  constructor(ws: Workspace, readonly opts: FilterOptions) {
    this.deny = ws.rules.denyMatch;
    this.stateDirs = new Set(ws.rules.protectedAbs);
    this.deniedAbs = new Set(ws.rules.deniedAbs);
    this.gate = ws.gate;
    this.bases = ws.rules.bases;
    this.basePrefixes = this.bases.map((b) => [b, `${b}/`] as const);
    this.spills = ws.spills;
  }

  isDenied(relToRoot: string, abs: string, isDir: boolean): boolean {
    // The walk reached `abs` through admitted ancestors, so an exact hit is enough here.
    if (this.deniedAbs.has(abs)) return true;
    // Saved output (spills) of any session: a walk of the state dir does not list or search it.
    if (this.spills?.blocks(abs)) return true;
    const a = abs.slice(1);
    // Every name tested below is a part of `a` (relToRoot and each root-relative form are its
    // tails), alone or followed by "/" INSIDE: when no deny pattern can match within `a`, none does.
    if (this.deny.noneWithin(a) && a.endsWith(relToRoot)) return false;
    if (this.deny(a) || (isDir && this.deny(`${a}/${INSIDE}`))) return true;
    if (this.deny(relToRoot) || (isDir && this.deny(`${relToRoot}/${INSIDE}`))) return true;
    // Under every other root that holds the entry (nested roots), not only the one the walk started in.
    // (otherRels inlined, with each base's "dir/" prefix built once: this runs for every entry.)
    for (const [b, prefix] of this.basePrefixes) {
      const r = abs === b ? '' : b === '/' ? abs.slice(1) : abs.startsWith(prefix) ? abs.slice(prefix.length) : null;
      if (r === null || r === relToRoot) continue;
      if (this.deny(r) || (isDir && this.deny(`${r}/${INSIDE}`))) return true;
    }
    return false;
  }

  /** What the policy's rules for this tool say of an entry: 'denied' (silent), 'policy' (an ask rule), or null. */
  byPolicy(relToRoot: string, abs: string, isDir: boolean): 'denied' | 'policy' | null {
    const v = this.gate?.judge(relToRoot, abs, isDir);
    if (!v) return null;
    if (v.decision === 'deny') return 'denied';
    // A walk runs only after its call was approved: what lies inside a path that was asked about is covered.
    return this.gate!.asked.some((a) => abs === a.abs || abs.startsWith(`${a.abs}/`)) ? null : 'policy';
  }

  /**
   * check() for the entries of one folder (`dirRelToRoot`, `dirAbs`), with the folder's part of the
   * work done once: the same answer as check(name, its relToRoot, its abs, …) for every name (one
   * path segment). The deny test's quick answer is taken by parts (GlobMatcher.noneWithinUnder);
   * the paths are built only when a test needs them.
   */
  folder(dirRelToRoot: string, dirAbs: string): FolderFilter {
    const relOf = (n: string) => (dirRelToRoot === '' ? n : `${dirRelToRoot}/${n}`);
    const prefix = dirAbs === '/' ? '/' : `${dirAbs}/`;
    const absOf = (n: string) => prefix + n;
    const here = (set: ReadonlySet<string>) => {
      const out = new Set<string>();
      for (const p of set) if (p.length > prefix.length && p.startsWith(prefix) && !p.includes('/', prefix.length)) out.add(p.slice(prefix.length));
      return out;
    };
    const deniedHere = here(this.deniedAbs);
    const stateHere = here(this.stateDirs);
    const spills = this.spills;
    const spillsHere = !!spills && dirAbs.includes(spills.needle);
    // isDenied's quick answer: noneWithin(abs.slice(1)) and abs.slice(1) ending with relToRoot, by parts.
    const dirPart = dirAbs.slice(1);
    const none = this.deny.noneWithinUnder(dirPart);
    const tailOk = dirRelToRoot === '' || dirPart.endsWith(dirRelToRoot);
    // The ignore test for this folder's entries, by name (IgnoreStack.folder), for the stack last given.
    let tested: IgnoreStack | null = null;
    let ignoredHere: (name: string, isDir: boolean) => boolean = () => false;
    return {
      check: (name, type, stack) => {
        const isDir = type === 'dir';
        if (isDir && (name === STATE_DIR_NAME || stateHere.has(name))) return 'state';
        let rel: string | undefined;
        let abs: string | undefined;
        if (deniedHere.has(name)) return 'denied';
        if (spills && (spillsHere || name.includes(spills.needle)) && spills.blocks((abs = absOf(name)))) return 'denied';
        if (!(tailOk && none(name)) && this.isDenied((rel = relOf(name)), (abs ??= absOf(name)), isDir)) return 'denied';
        if (this.gate) {
          const p = this.byPolicy((rel ??= relOf(name)), (abs ??= absOf(name)), isDir);
          if (p) return p;
        }
        if (!this.opts.hidden && name.charCodeAt(0) === 46 /* . */) return 'hidden';
        if (this.opts.gitignore && stack && stack.size > 0) {
          if (stack !== tested) { tested = stack; ignoredHere = stack.folder(dirRelToRoot); }
          if (ignoredHere(name, isDir)) return 'ignored';
        }
        return null;
      },
    };
  }

  check(name: string, relToRoot: string, abs: string, type: EntryType, stack: IgnoreStack | null): SkipReason | null {
    const isDir = type === 'dir';
    if (isDir && (name === STATE_DIR_NAME || this.stateDirs.has(abs))) return 'state';
    if (this.isDenied(relToRoot, abs, isDir)) return 'denied';
    // A link is judged by its own name here; what it points at is never entered by a walk.
    const p = this.byPolicy(relToRoot, abs, isDir);
    if (p) return p;
    if (!this.opts.hidden && name.charCodeAt(0) === 46 /* . */) return 'hidden';
    if (this.opts.gitignore && stack && stack.size > 0 && stack.ignored(relToRoot, isDir)) return 'ignored';
    return null;
  }
}
