import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { lstat, opendir } from 'node:fs/promises';
import path from 'node:path';
import type { PathRules } from '../workspace/path-rules.js';

/** How one path is treated inside the sandbox. */
/** `ask`: a path a user ask rule for commands covers, hidden unless the call was approved. */
export type MaskKind = 'hide' | 'readonly' | 'ask';

/** What the index needs to classify a path inside its root. */
export interface MaskRules {
  rules: PathRules;
  /** The user's deny rules for commands (rules: with a path, for run_command or `*`): `asDir` asks "does it cover everything inside?". */
  userDeny?: (rel: string, asDir: boolean) => boolean;
  /** The user's ask rules for commands: hidden from a command nobody approved. */
  userAsk?: (rel: string, asDir: boolean) => boolean;
}

/** Entries a (re)build looks at before it gives up: the caller then refuses rather than half-masks. */
export const INDEX_CAP = 1_000_000;
/** Changed paths kept one by one; past this the next use rebuilds. */
const PENDING_CAP = 20_000;

/**
 * Every fs.watch of this process is read by libuv from one inotify queue, which holds
 * fs.inotify.max_queued_events (16,384 by default). Past that the kernel drops events, and libuv
 * drops its overflow notice: a `.env` created during a flood would never be seen. A drop needs that
 * many events queued at once, and all of them are read later, so when half as many (a margin) have
 * arrived, across every index of the process, since an index last answered, it rebuilds instead of
 * trusting the events. A fact about the process, so counted once for all indexes.
 */
const INOTIFY_QUEUE = (() => {
  try { return Number(readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8').trim()) || 16_384; } catch { return 16_384; }
})();
const watchEvents = { seen: 0 };

/**
 * The paths of one root that the sandbox must hide (secrets, paths a user deny rule covers)
 * or make read-only (protected paths at any depth: a nested `.git`, `sub/.vscode`…). Built
 * once by a walk, then kept current by one inotify watch per folder: changed paths are re-judged
 * (a new folder is walked) just before the next command starts; a watcher error or too many
 * changes rebuild it. So the cost of a command no longer grows with the tree.
 */
export class MaskIndex {
  private readonly entries = new Map<string, MaskKind>();
  private pending = new Set<string>();
  private stale = true;
  private incomplete = false;
  /** One inotify watch per folder walked (Node 20's recursive fs.watch polls every file on Linux). */
  private readonly watchers = new Map<string, FSWatcher>();
  private building: Promise<void> | null = null;
  private watchFailed = false;
  /** watchEvents.seen when this index last answered. */
  private seenAt = 0;

  constructor(readonly root: string, private readonly m: MaskRules, private readonly opts: { watch?: boolean } = {}) {}

  /** Classifies a path (relative to the root) on its own: hide beats readonly. */
  classify(rel: string, abs: string, isDir: boolean): MaskKind | null {
    if (this.m.rules.isDenied(rel, abs, isDir) || this.m.userDeny?.(rel, isDir)) return 'hide';
    if (this.m.rules.isProtected(rel, abs)) return 'readonly';
    if (this.m.userAsk?.(rel, isDir)) return 'ask';
    return null;
  }

  /** Tells the index about a path toolgate itself changed (its own writes need no watcher round trip). */
  touched(abs: string): void {
    const rel = path.relative(this.root, abs);
    if (!rel.startsWith('..') && !path.isAbsolute(rel)) this.note(rel);
  }

  /** The current mask set: absolute path → kind, top-most paths only. `incomplete` when the walk hit its cap. */
  async current(): Promise<{ paths: Map<string, MaskKind>; incomplete: boolean }> {
    // Every change made before this call is already queued by the kernel (inotify queues events in
    // the syscall that made them); libuv reads them in its poll phase. One setImmediate can run
    // before any poll phase (when called from an I/O callback); a second one, set from the first,
    // runs only after the next poll phase: so every event queued before now has been seen.
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    // So many events since the last answer that the kernel may have dropped some: walk again.
    if (watchEvents.seen - this.seenAt >= INOTIFY_QUEUE / 2) { this.stale = true; this.pending.clear(); }
    this.seenAt = watchEvents.seen;
    if (this.stale) await this.rebuild();
    else if (this.pending.size) await this.drain();
    const out = new Map<string, MaskKind>();
    for (const [rel, kind] of this.entries) out.set(path.join(this.root, rel), kind);
    return { paths: out, incomplete: this.incomplete };
  }

  close(): void {
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
  }

  private note(rel: string): void {
    if (this.stale) return;
    if (this.pending.size >= PENDING_CAP) { this.stale = true; this.pending.clear(); return; }
    this.pending.add(rel.split(path.sep).join('/'));
  }

  /** Watches one folder (relative to the root); any failure means the index can no longer trust events. */
  private watchDir(rel: string): void {
    if (this.opts.watch === false || this.watchers.has(rel)) return;
    try {
      const w = watch(path.join(this.root, rel), { persistent: false }, (ev, name) => {
        watchEvents.seen++;
        if (name === null || name === undefined) { this.stale = true; return; }
        // A file's content changing (the audit log, a build) does not change what is masked: only names do.
        if (ev === 'change') return;
        this.note(rel ? `${rel}/${String(name)}` : String(name));
      });
      w.on('error', () => { this.stale = true; });
      this.watchers.set(rel, w);
    } catch {
      // Out of inotify watches, or the folder went away: rebuild before the next command.
      this.watchFailed = true;
    }
  }

  private async rebuild(): Promise<void> {
    if (this.building) return this.building;
    this.building = (async () => {
      this.stale = false;
      this.watchFailed = false;
      this.pending.clear();
      this.entries.clear();
      this.close();
      const r = await this.walk('', { n: 0 });
      this.incomplete = r;
      // Without watchers nothing keeps it current: the next command rebuilds.
      if (this.opts.watch === false || this.watchFailed) this.stale = true;
    })().finally(() => { this.building = null; });
    return this.building;
  }

  /** Walks below `rel`, recording top-most hits; returns true when it hit the cap. */
  private async walk(rel: string, count: { n: number }): Promise<boolean> {
    const stack = [rel];
    while (stack.length) {
      const d = stack.pop()!;
      this.watchDir(d);
      let it;
      try { it = await opendir(path.join(this.root, d)); } catch { continue; }
      for await (const e of it) {
        if (++count.n > INDEX_CAP) return true;
        const r = d ? `${d}/${e.name}` : e.name;
        const isDir = e.isDirectory();
        const kind = this.classify(r, path.join(this.root, r), isDir);
        if (kind === 'hide') { this.entries.set(r, kind); continue; }
        if ((kind === 'readonly' || kind === 'ask') && !this.under(r, kind)) this.entries.set(r, kind);
        // Below a read-only folder a secret still has to be hidden (.vscode/.env); a .git is not
        // walked (its objects are many, and nothing a command writes can land there).
        if (isDir && !(kind === 'readonly' && e.name === '.git')) stack.push(r);
      }
    }
    return false;
  }

  /** True when an ancestor of `rel` is recorded (as `kind`, or as anything). */
  private under(rel: string, kind?: MaskKind): boolean {
    for (let i = rel.lastIndexOf('/'); i > 0; i = rel.lastIndexOf('/', i - 1)) {
      const k = this.entries.get(rel.slice(0, i));
      if (k && (kind === undefined || k === kind)) return true;
    }
    return false;
  }

  private async drain(): Promise<void> {
    const todo = [...this.pending];
    this.pending.clear();
    for (const rel of todo) {
      if (!rel || rel.startsWith('..')) continue;
      const abs = path.join(this.root, rel);
      let st;
      try { st = await lstat(abs); } catch { st = null; }
      if (!st) {
        // Gone: forget it and anything recorded or watched below it.
        for (const k of [...this.entries.keys()]) if (k === rel || k.startsWith(`${rel}/`)) this.entries.delete(k);
        // Only a watched folder can have watched folders below it (a file never does).
        if (this.watchers.has(rel)) for (const [k, w] of [...this.watchers]) if (k === rel || k.startsWith(`${rel}/`)) { w.close(); this.watchers.delete(k); }
        continue;
      }
      if (!st.isDirectory()) {
        // No longer a folder (a link or a file took its place, review 31): nothing recorded below it
        // is there now. A stale entry would make bwrapArgs pin its "folders", through the link.
        for (const k of [...this.entries.keys()]) if (k.startsWith(`${rel}/`)) this.entries.delete(k);
        if (this.watchers.has(rel)) for (const [k, w] of [...this.watchers]) if (k === rel || k.startsWith(`${rel}/`)) { w.close(); this.watchers.delete(k); }
      }
      // Hidden as part of a hidden folder: nothing to add. Below a read-only one, only a secret counts.
      if (this.under(rel, 'hide')) continue;
      const kind = this.classify(rel, abs, st.isDirectory());
      if ((kind === 'readonly' || kind === 'ask') && this.under(rel, kind)) continue;
      if (kind) {
        for (const [k, v] of [...this.entries]) if (k.startsWith(`${rel}/`) && (kind === 'hide' || v === kind)) this.entries.delete(k);
        this.entries.set(rel, kind);
        if (kind !== 'hide' && st.isDirectory() && path.basename(rel) !== '.git' && await this.walk(rel, { n: 0 })) this.stale = true;
      } else {
        this.entries.delete(rel);
        // A new or moved-in folder: its contents may not have produced events of their own.
        if (st.isDirectory() && await this.walk(rel, { n: 0 })) this.stale = true;
      }
    }
    if (this.stale) await this.rebuild();
  }
}

const byOwner = new WeakMap<object, Map<string, MaskIndex>>();

/**
 * The index of one root for one owner (the compiled policy: its rules decide what is masked),
 * created on first use. `key` separates rule sets that differ per workspace (state dir…).
 */
export function maskIndexFor(owner: object, root: string, key: string, m: MaskRules): MaskIndex {
  let map = byOwner.get(owner);
  if (!map) { map = new Map(); byOwner.set(owner, map); }
  const k = `${root}\0${key}`;
  let idx = map.get(k);
  if (!idx) { idx = new MaskIndex(root, m); map.set(k, idx); }
  return idx;
}
