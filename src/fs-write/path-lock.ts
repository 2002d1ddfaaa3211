/**
 * Serialises changes to the same file inside this process, so two concurrent edits of one
 * file cannot both pass the stale check and then overwrite each other. The table is private
 * and keyed by real path: the file system is shared by every session of the process.
 */
const tails = new Map<string, Promise<void>>();

export async function withPathLocks<T>(paths: string[], fn: () => Promise<T>): Promise<T> {
  // Sorted and de-duplicated: two calls locking the same files take them in the same order.
  const keys = [...new Set(paths)].sort();
  const releases: Array<() => void> = [];
  try {
    for (const k of keys) {
      const before = tails.get(k) ?? Promise.resolve();
      let release!: () => void;
      const mine = new Promise<void>((r) => { release = r; });
      const tail = before.then(() => mine);
      tails.set(k, tail);
      releases.push(() => {
        release();
        if (tails.get(k) === tail) tails.delete(k);
      });
      await before;
    }
    return await fn();
  } finally {
    for (const r of releases.reverse()) r();
  }
}
