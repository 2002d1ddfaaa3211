import { closeSync, constants, lstatSync, openSync, type Stats } from 'node:fs';

const HAS_PROC_FD = process.platform === 'linux';
/** Below this many names the two chdirs cost more than they save. */
const CHDIR_MIN = 8;

const tryLstat = (p: string): Stats | undefined => {
  try { return lstatSync(p, { throwIfNoEntry: false }); } catch { return undefined; }
};

/**
 * `lstat` of entries of an opened, verified folder, by name (undefined for a name that is gone
 * or cannot be looked at). `dirPath` names exactly that folder: on Linux the /proc link of its
 * descriptor, so a folder swapped for a symbolic link after the check is never entered.
 *
 * Through /proc each lookup first walks /proc/<pid>/fd/N (~4 µs an entry here, against ~1.6 µs
 * for a name relative to the working directory: a 100-entry listing spends ~270 µs more). So on
 * Linux, for more than a few names, the process steps into the folder through the same /proc
 * link (the kernel takes the descriptor's folder, whatever its path now names), looks the names
 * up relative to it, and steps back through a descriptor of where it was — all in one
 * synchronous stretch, in which no other JavaScript runs. toolgate itself passes only absolute
 * paths to the file system and gives every child process its `cwd`, so nothing else depends on
 * the working directory during that stretch. When a step fails (a folder without search
 * permission, a working directory that cannot be opened) the names are looked up through
 * `dirPath` as before.
 */
export function lstatNames(dirPath: string, names: readonly string[]): Array<Stats | undefined> {
  const look = (base: string) => names.map((name) =>
    // A directory entry's name never holds a slash and is never "." or "..": no lookup leaves the folder.
    (name === '' || name.includes('/') || name === '.' || name === '..' ? undefined : tryLstat(base + name)));
  return names.length >= CHDIR_MIN ? inFolder(dirPath, look) : look(`${dirPath}/`);
}

/**
 * Runs `fn` with the working directory inside the folder `dirPath` names (see lstatNames) and
 * steps back after it, whatever it throws; `fn` gets the prefix that makes a path relative to the
 * folder: '' inside it, `${dirPath}/` when the process could not step in (or off Linux). `fn` must
 * be synchronous and use only that prefix or absolute paths.
 */
export function inFolder<T>(dirPath: string, fn: (base: string) => T): T {
  const home = HAS_PROC_FD ? enter(dirPath) : null;
  if (home === null) return fn(`${dirPath}/`);
  try {
    return fn('');
  } finally {
    leave(home);
  }
}

/** Steps into the folder; returns a descriptor of the previous working directory, or null (nothing changed). */
function enter(dirPath: string): number | null {
  let home: number;
  try {
    home = openSync('.', constants.O_RDONLY | constants.O_DIRECTORY);
  } catch {
    return null;
  }
  try {
    process.chdir(dirPath);
    return home;
  } catch {
    closeSync(home);
    return null;
  }
}

/**
 * Steps back. It fails when the folder the process was in lost its search permission meanwhile:
 * not for root, but a process running as the owner of its working directory (the Docker image, in
 * /workspace) loses it to an agent that chmods that folder while a listing runs
 * (tests/attacks/review-chdir.test.ts wins that race within a few calls). The process then goes
 * to `/` for good rather than stay inside the listed folder: nothing may depend on where it is
 * (stdio upstreams get their folder fixed at start, upstream/manager.ts).
 */
function leave(home: number): void {
  try {
    process.chdir(`/proc/self/fd/${home}`);
  } catch {
    process.chdir('/');
  } finally {
    closeSync(home);
  }
}
