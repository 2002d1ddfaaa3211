import type { Dirent } from 'node:fs';
import type { ResolvedPath } from '../../core/types.js';
import { openDir, readDirEntries } from '../../workspace/safe-open.js';
import type { Workspace } from '../../workspace/workspace.js';
import { EntryFilter, entryType, type EntryType, type SkipReason } from './entry-filter.js';
import { DEFAULT_IGNORE_FILES, IgnoreStack, ancestorIgnores, readIgnoreFiles } from './ignore-stack.js';

export const DEFAULT_MAX_VISITS = 200_000;
export const DEFAULT_TIME_LIMIT_MS = 10_000;

export interface WalkEntry {
  name: string;
  /** Relative to the walk's start directory, `/`-separated. */
  rel: string;
  /** Relative to the workspace root that holds the start ('' is the root itself). */
  relToRoot: string;
  abs: string;
  type: EntryType;
  /** 1 for the start directory's own entries. */
  depth: number;
}

export interface WalkOptions {
  workspace: Workspace;
  /** An existing directory admitted by `Workspace.resolve`. */
  start: ResolvedPath;
  /** Names starting with a dot (default false). */
  hidden?: boolean;
  /** Honour .gitignore / .ignore files, those of the start's ancestors included (default true). */
  gitignore?: boolean;
  /**
   * relToRoot of the folder the caller named (default: the start). It is walked even when
   * ignored; a start below it (a glob's literal prefix) is not exempt.
   */
  named?: string;
  /** Which ignore files to read in each directory (default .gitignore, .ignore). */
  ignoreFiles?: readonly string[];
  /** Stop after seeing this many entries (default 200k). */
  maxVisits?: number;
  /** Stop after this long (default 10 s). */
  timeLimitMs?: number;
  signal?: AbortSignal;
  /** Entries deeper than this are not read (1 = the start directory only). */
  maxDepth?: number;
  /** Directories read at once (default 8). */
  concurrency?: number;
  /** Called for a directory the filters kept; false means do not read it. */
  descend?(entry: WalkEntry): boolean;
  /** Called for every entry the filters kept (directories too); return false to stop the walk. */
  onEntry(entry: WalkEntry): boolean | void;
  /** Called every few thousand entries. */
  onProgress?(visited: number): void;
}

export type StopReason = 'visit_cap' | 'time_cap' | 'aborted' | 'stopped';

export interface WalkResult {
  /** Entries seen, filtered or not. */
  visited: number;
  /** Directories read. */
  dirs: number;
  /** Why the walk ended early; null when it covered everything. */
  stopped: StopReason | null;
  skipped: Record<SkipReason | 'unreadable', number>;
}

interface DirTask {
  abs: string;
  relToRoot: string;
  rel: string;
  depth: number;
  stack: IgnoreStack;
}

/**
 * Walks a directory tree inside the workspace. It never follows a symbolic link (a link is
 * reported as an entry of type `symlink` and not entered), reads every directory through
 * `openDir` (the descriptor is checked to be the directory the walk meant, so a directory
 * swapped for a link mid-walk is skipped, not followed), never shows what the secrets deny
 * list catches nor the state dir, skips hidden names and ignored paths unless asked, and
 * stops at a visit cap, a time cap or the signal, saying which.
 *
 * Order of `onEntry` calls is not deterministic (directories are read concurrently); sort
 * the results.
 */
export async function walk(o: WalkOptions): Promise<WalkResult> {
  const ws = o.workspace;
  const hidden = o.hidden ?? false;
  const gitignore = o.gitignore ?? true;
  const ignoreFiles = o.ignoreFiles ?? DEFAULT_IGNORE_FILES;
  const maxVisits = o.maxVisits ?? DEFAULT_MAX_VISITS;
  const deadline = Date.now() + (o.timeLimitMs ?? DEFAULT_TIME_LIMIT_MS);
  const maxDepth = o.maxDepth ?? Infinity;
  const concurrency = Math.max(1, o.concurrency ?? 8);
  const filter = new EntryFilter(ws, { hidden, gitignore });
  const root = ws.roots[o.start.rootIndex]!;
  const result: WalkResult = { visited: 0, dirs: 0, stopped: null, skipped: { hidden: 0, denied: 0, state: 0, ignored: 0, policy: 0, unreadable: 0 } };
  const stop = (why: StopReason) => { if (!result.stopped) result.stopped = why; };

  const startStack = gitignore ? await ancestorIgnores(root, o.start.relToRoot, ignoreFiles, o.named ?? o.start.relToRoot, ws.ignoreCache) : IgnoreStack.empty(ws.ignoreCache);
  const queue: DirTask[] = [{ abs: o.start.abs, relToRoot: o.start.relToRoot, rel: '', depth: 0, stack: startStack }];
  let nextProgress = 5000;

  const readOne = async (task: DirTask): Promise<void> => {
    const rp: ResolvedPath = {
      input: task.relToRoot || '.', abs: task.abs, display: ws.display(task.abs), rootIndex: o.start.rootIndex,
      relToRoot: task.relToRoot, exists: true, kind: 'dir',
    };
    let entries: Dirent[];
    let stack = task.stack;
    let dir;
    try {
      dir = await openDir(rp, ws);
    } catch {
      result.skipped.unreadable++;
      return;
    }
    try {
      entries = await readDirEntries(dir.path);
      if (gitignore) {
        const names = new Set<string>();
        for (const e of entries) if (ignoreFiles.includes(e.name)) names.add(e.name);
        if (names.size) stack = stack.with(task.relToRoot, await readIgnoreFiles(dir.path, names, ignoreFiles));
      }
    } catch {
      result.skipped.unreadable++;
      return;
    } finally {
      await dir.fh.close().catch(() => {});
    }
    result.dirs++;
    const depth = task.depth + 1;
    for (const d of entries) {
      if (result.stopped) return;
      const name = d.name;
      const type = entryType(d);
      const relToRoot = task.relToRoot === '' ? name : `${task.relToRoot}/${name}`;
      const abs = task.abs === '/' ? `/${name}` : `${task.abs}/${name}`;
      const why = filter.check(name, relToRoot, abs, type, stack);
      // Denied entries and the state dir are not even counted: the visit count must not tell what lies there.
      if (why === 'denied' || why === 'state') { result.skipped[why]++; continue; }
      if (++result.visited > maxVisits) { result.visited--; stop('visit_cap'); return; }
      if (result.visited >= nextProgress) {
        nextProgress += 5000;
        o.onProgress?.(result.visited);
        if (Date.now() > deadline) { stop('time_cap'); return; }
      }
      if (why) { result.skipped[why]++; continue; }
      const entry: WalkEntry = { name, rel: task.rel === '' ? name : `${task.rel}/${name}`, relToRoot, abs, type, depth };
      if (o.onEntry(entry) === false) { stop('stopped'); return; }
      // .git holds objects, not sources; it is walked only when both hidden files and no-ignore are asked for.
      if (type === 'dir' && depth < maxDepth && (name !== '.git' || !gitignore) && (!o.descend || o.descend(entry))) {
        queue.push({ abs, relToRoot, rel: entry.rel, depth, stack });
      }
    }
  };

  // A small pool: directories are read concurrently, the queue is taken last-in first-out
  // so memory stays proportional to the depth times the fan-out, not to the whole tree.
  let active = 0;
  await new Promise<void>((resolve, reject) => {
    const pump = () => {
      if (!result.stopped) {
        if (o.signal?.aborted) stop('aborted');
        else if (Date.now() > deadline) stop('time_cap');
      }
      while (!result.stopped && active < concurrency && queue.length > 0) {
        const task = queue.pop()!;
        active++;
        readOne(task).then(() => { active--; pump(); }, (e) => { active--; reject(e); });
      }
      if (active === 0 && (queue.length === 0 || result.stopped)) resolve();
    };
    pump();
  });
  return result;
}
