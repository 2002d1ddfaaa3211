import picomatch from 'picomatch';
import { otherRels, type GlobMatcher } from '../../workspace/path-rules.js';
import type { Workspace } from '../../workspace/workspace.js';
import { EntryFilter } from '../walk/entry-filter.js';
import type { Query } from './types.js';

/** Never searched by a walk, hidden or not: VCS internals and toolgate's own state dir. */
export const ALWAYS_SKIPPED = new Set(['.git', '.toolgate']);

/**
 * Path order used by both engines: component by component (`a/b` before `a.txt`, as
 * ripgrep's --sort path), so the same tree gives the same answer whichever engine ran.
 */
export function comparePaths(a: string, b: string): number {
  const n = a.length < b.length ? a.length : b.length;
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x === 47) x = -1;
    if (y === 47) y = -1;
    return x - y;
  }
  return a.length - b.length;
}

interface CompiledGlob {
  /** Matched against the whole relative path (the glob has a `/`), else against the name. */
  anchored: boolean;
  dirOnly: boolean;
  test: (s: string) => boolean;
}

function compileGlob(glob: string): CompiledGlob {
  let body = glob;
  const dirOnly = body.length > 1 && body.endsWith('/');
  if (dirOnly) body = body.slice(0, -1);
  const anchored = body.includes('/');
  if (body.startsWith('/')) body = body.slice(1);
  return { anchored, dirOnly, test: picomatch(body, { dot: true }) };
}

function globHits(g: CompiledGlob, rel: string, isDir: boolean): boolean {
  if (g.dirOnly && !isDir) return false;
  if (g.anchored) return g.test(rel);
  const slash = rel.lastIndexOf('/');
  return g.test(slash < 0 ? rel : rel.slice(slash + 1));
}

/**
 * Which files a query selects, by name only: `glob` (positive globs select files, `!` globs
 * exclude files and whole directories, like ripgrep's -g), `type`, hidden entries and the
 * always-skipped folders. The same object filters the built-in walk and ripgrep's results.
 */
export class Selection {
  private readonly positive: CompiledGlob[];
  private readonly negative: CompiledGlob[];
  private readonly type: ((name: string) => boolean) | null;

  constructor(private readonly q: Pick<Query, 'globs' | 'typeGlobs' | 'hidden'>) {
    this.positive = q.globs.filter((g) => !g.startsWith('!')).map(compileGlob);
    this.negative = q.globs.filter((g) => g.startsWith('!')).map((g) => compileGlob(g.slice(1)));
    this.type = q.typeGlobs.length ? picomatch(q.typeGlobs, { dot: true }) : null;
  }

  /** A directory met by a walk (path relative to the search root, its name): is it skipped? */
  dirExcluded(rel: string, name: string): boolean {
    if (ALWAYS_SKIPPED.has(name)) return true;
    if (!this.q.hidden && name.charCodeAt(0) === 46) return true;
    for (const g of this.negative) if (globHits(g, rel, true)) return true;
    return false;
  }

  /** The file-level test alone (its directories already passed dirExcluded). */
  fileSelectedHere(rel: string, name: string): boolean {
    if (name.charCodeAt(0) === 46 && (!this.q.hidden || ALWAYS_SKIPPED.has(name))) return false;
    for (const g of this.negative) if (globHits(g, rel, false)) return false;
    if (this.positive.length && !this.positive.some((g) => globHits(g, rel, false))) return false;
    if (this.type && !this.type(name)) return false;
    return true;
  }

  /** The whole test for a path reported by ripgrep: every directory on the way and the file. */
  fileSelected(rel: string): boolean {
    let start = 0;
    for (let i = rel.indexOf('/'); i >= 0; i = rel.indexOf('/', i + 1)) {
      if (this.dirExcluded(rel.slice(0, i), rel.slice(start, i))) return false;
      start = i + 1;
    }
    return this.fileSelectedHere(rel, rel.slice(start));
  }
}

/**
 * The secrets deny list and the policy's deny/ask rules for grep, applied to files found by a
 * search (both engines). Directories are judged once (PathRules checks every ancestor); a file
 * then only needs its own two names tested. What an ask rule covers is left out and counted.
 */
export class DenyFilter {
  private readonly dirs = new Map<string, boolean>();
  private readonly match: GlobMatcher;
  private readonly filter: EntryFilter;
  /** Files and folders left out because an `ask` rule covers them (reported as skipped_by_policy). */
  askSkipped = 0;

  /** baseRel: the search root relative to its workspace root ('' for the root); baseAbs: its real path. */
  constructor(private readonly ws: Workspace, private readonly baseRel: string, private readonly baseAbs: string) {
    this.match = ws.rules.denyMatch;
    this.filter = new EntryFilter(ws, { hidden: true, gitignore: false });
  }

  private toRoot(rel: string): string {
    return this.baseRel === '' ? rel : rel === '' ? this.baseRel : `${this.baseRel}/${rel}`;
  }

  private toAbs(rel: string): string {
    return rel === '' ? this.baseAbs : this.baseAbs === '/' ? `/${rel}` : `${this.baseAbs}/${rel}`;
  }

  private policy(rel: string, isDir: boolean): boolean {
    const p = this.filter.byPolicy(this.toRoot(rel), this.toAbs(rel), isDir);
    if (p === 'policy') this.askSkipped++;
    return p !== null;
  }

  /** A directory relative to the search root ('' = the root itself). */
  dirDenied(rel: string): boolean {
    let v = this.dirs.get(rel);
    if (v === undefined) {
      const slash = rel.lastIndexOf('/');
      v = this.ws.rules.isDenied(this.toRoot(rel) || null, this.toAbs(rel)) || !!this.ws.spills?.blocks(this.toAbs(rel))
        || (rel !== '' && (this.dirDenied(slash < 0 ? '' : rel.slice(0, slash)) || this.policy(rel, true)));
      this.dirs.set(rel, v);
    }
    return v;
  }

  fileDenied(rel: string): boolean {
    const slash = rel.lastIndexOf('/');
    if (this.dirDenied(slash < 0 ? '' : rel.slice(0, slash))) return true;
    const rootRel = this.toRoot(rel);
    const abs = this.toAbs(rel);
    const a = abs.slice(1);
    // rootRel and the other roots' forms are tails of `a`: no deny pattern within `a`, none in them.
    if (this.match.noneWithin(a) && a.endsWith(rootRel)) return this.policy(rel, false);
    return this.match(rootRel) || this.match(a) || otherRels(abs, this.ws.rules.bases, rootRel).some(this.match) || this.policy(rel, false);
  }
}
