import { existsSync, lstatSync, readlinkSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import picomatch from 'picomatch';

/** Passed through from the server's environment when set (SPEC §5: a minimal allow-list). */
export const BASE_ENV_ALLOW = ['PATH', 'HOME', 'LANG', 'LANGUAGE', 'LC_*', 'TERM', 'TZ', 'USER', 'LOGNAME', 'SHELL', 'TMPDIR', 'COLORTERM', 'NO_COLOR'];

/** Never passed, whatever the policy says. */
const SECRET = /(_TOKEN|_SECRET|_KEY)$|PASSWORD|^AWS_/i;

const DEFAULT_PATH = '/usr/local/bin:/usr/bin:/bin';
/** PATH when no folder is safe: a path under a file, which nothing can be made in (and not empty: bash would search the cwd). */
const NO_PATH = '/dev/null/no-safe-path';

/**
 * Git settings forced on every command (GIT_CONFIG_COUNT outranks every config file): a
 * repository cannot make `git status`/`git log` run its own code (fsmonitor, hooks) or be
 * swapped for a bare repository planted in the workspace.
 */
export const GIT_HARDENING: Array<[string, string]> = [
  ['core.fsmonitor', 'false'],
  ['core.hooksPath', '/dev/null'],
  ['safe.bareRepository', 'explicit'],
];

export function isSecretName(name: string): boolean {
  return SECRET.test(name);
}

const inside = (p: string, root: string) => p === root || p.startsWith(root.endsWith('/') ? root : `${root}/`);

const DOTS = /(^|\/)\.\.?(\/|$)/;
/** Linux's limit on a path a system call takes (bytes, with its NUL). */
const PATH_MAX = 4096;

/** Names in /dev that are the process's own descriptors (for a command: its own). */
const OWN_DEV = new Set(['fd', 'stdin', 'stdout', 'stderr']);

/**
 * Where the kernel (bash's PATH search) finds programs for absolute `p`, walked a name at a time
 * from `/` as the kernel walks it (`..` after a link is the parent of the link's target); for a
 * path that does not exist (yet), as if its missing folders were made as plain folders. Null when
 * a command could change the answer: a name is looked up in a folder `changeable` says a command
 * may change (one inside a workspace root), or in /proc (a command's /proc/self and its own pids'
 * cwd are in the workspace; bwrap gives it pids 1 and 2), or is one of /dev's descriptors. After
 * 40 links, the kernel's limit (a loop: nothing runs through it), the path itself.
 *
 * Runs for every PATH entry on every command. Most are taken by one realpath (below); the rest
 * (a link or a `.`/`..` on the way, or missing, as npm's node_modules/.bin often are) by an lstat
 * per name, which does not throw for a missing one (an exception costs ~5–10 µs, the call ~1),
 * and a readlink per link. A loop, not recursion: an entry may have thousands of names.
 */
export function realOrPlanned(p: string, changeable: (dir: string) => boolean = () => false): string | null {
  let names: string[] | null = null; // a stack: the next name last
  let real = '/';
  let links = 0;
  // The longest existing prefix whose real path is itself went through no link: only its own
  // folders were looked in, and one realpath says so. The walk starts below it (not in /proc).
  if (!DOTS.test(p) && Buffer.byteLength(p) < PATH_MAX) {
    const rest: string[] = [];
    let base = path.resolve(p);
    while (base !== '/' && !existsSync(base)) { rest.push(path.basename(base)); base = path.dirname(base); }
    try {
      if (base !== '/proc' && !base.startsWith('/proc/') && realpathSync.native(base) === base) {
        if (changeable(base)) return null;
        real = base;
        names = rest;
      }
    } catch { /* walked from the top */ }
  }
  names ??= p.split('/').reverse();
  while (names.length > 0) {
    const name = names.pop()!;
    if (name === '' || name === '.') continue;
    if (name === '..') { real = path.dirname(real); continue; }
    if (real === '/proc' || (real === '/dev' && OWN_DEV.has(name)) || changeable(real)) return null;
    const joined = real === '/' ? `/${name}` : `${real}/${name}`;
    // No system call takes a path this long: what the kernel reaches there (through links, it can)
    // cannot be looked at from here. Such an entry is dropped.
    if (joined.length >= PATH_MAX / 4 && Buffer.byteLength(joined) >= PATH_MAX) return null;
    let raw: Buffer | null = null;
    try {
      if (lstatSync(joined, { throwIfNoEntry: false })?.isSymbolicLink()) raw = readlinkSync(joined, { encoding: 'buffer' });
    } catch { /* unreadable, too long: as not a link */ }
    if (raw === null) { real = joined; continue; }
    // A target that is not UTF-8 would be read with U+FFFD for its bytes (another path): dropped.
    const target = raw.toString('utf8');
    if (!Buffer.from(target, 'utf8').equals(raw)) return null;
    if (++links > 40) return p;
    // The target, in the link's folder (or from the top), then the names after the link.
    if (target.startsWith('/')) real = '/';
    for (const n of target.split('/').reverse()) names.push(n);
  }
  return changeable(real) ? null : real;
}

/**
 * PATH without the entries a command line could plant programs in: empty and relative entries
 * (they name the cwd), and any whose programs are found in a workspace root (node_modules/.bin,
 * ./bin…) or through one: compared as written, then walked as the kernel walks it (realOrPlanned:
 * a link in the workspace is the command's to re-point, a per-process path its own).
 */
export function safePath(value: string | undefined, roots: string[], own: readonly string[] = []): string {
  const real = (p: string) => { try { return realpathSync.native(p); } catch { return p; } };
  const rootsReal = [...roots.flatMap((r) => [path.resolve(r), real(r)]), ...own];
  const inRoot = (p: string) => rootsReal.some((r) => inside(p, r));
  // Each entry once (a PATH often repeats some), and resolved once for all roots.
  const keep = (e: string) => {
    // bash joins entry/name, and the kernel refuses a path of PATH_MAX bytes or more: unusable.
    if (!e || !path.isAbsolute(e) || Buffer.byteLength(e) >= PATH_MAX) return false;
    return !inRoot(path.resolve(e)) && realOrPlanned(e, inRoot) !== null;
  };
  const kept = [...new Set((value ?? '').split(':'))].filter(keep);
  // The fallback is checked too (a root of /usr would hold it); none left: a folder that cannot exist.
  return kept.length ? kept.join(':') : DEFAULT_PATH.split(':').filter(keep).join(':') || NO_PATH;
}

/** PATH as buildEnv finds it, before safePath cleans it (PATH is always allowed; env.set wins). */
export function givenPath(source: NodeJS.ProcessEnv, policyEnv: { set: Record<string, string> }): string {
  return policyEnv.set.PATH ?? source.PATH ?? DEFAULT_PATH;
}

/** Where the system keeps its programs: a workspace root holding one of them (/ or /usr) empties PATH. */
const SYSTEM_BIN = new Set(['/usr/local/bin', '/usr/bin', '/bin', '/usr/sbin', '/sbin']);

/**
 * For a command that was not found (exit 127): the PATH folders the check dropped and why, and
 * what to do instead. null when none was dropped.
 */
export function pathDropNote(given: string, kept: string): string | null {
  const keptSet = new Set(kept.split(':'));
  const dropped = [...new Set(given.split(':'))].filter((e) => e !== '' && !keptSet.has(e));
  if (dropped.length === 0 && kept !== NO_PATH) return null;
  const named = `${dropped.slice(0, 3).join(', ')}${dropped.length > 3 ? `, and ${dropped.length - 3} more` : ''}`;
  const what = kept === NO_PATH
    ? `The command got no PATH folder${dropped.length ? ` (${named} dropped)` : ''}`
    : `PATH lost ${dropped.length === 1 ? 'a folder' : `${dropped.length} folders`}: ${named}`;
  const why = 'inside a workspace root (or reached through a link there), a command could plant programs in it for later commands to run';
  const fix = kept === NO_PATH || dropped.some((e) => SYSTEM_BIN.has(e))
    ? "The system's program folders are among them: a workspace root of / or /usr holds them. Choose a narrower workspace folder, or name programs by their full path."
    : 'Run a program kept there by its path (e.g. ./node_modules/.bin/NAME).';
  return `${what}: ${why}. ${fix}`;
}

/** HOME as buildEnv gives it to a command (HOME is always allowed; env.set wins), or the user's home. */
export function commandHome(policyEnv: { set: Record<string, string> }, source: NodeJS.ProcessEnv = process.env): string {
  return policyEnv.set.HOME ?? source.HOME ?? os.homedir();
}

// Compiling the allow-list costs more than the rest of buildEnv: one matcher per policy list.
// Plain names are looked up in a set; only the globs (LC_*, a policy's NODE_*) go to picomatch,
// which tests a name against each pattern in turn (~40 names × 13 patterns per command otherwise).
const matchers = new WeakMap<string[], (name: string) => boolean>();
function allowMatcher(extra: string[]): (name: string) => boolean {
  let m = matchers.get(extra);
  if (!m) {
    const all = [...BASE_ENV_ALLOW, ...extra];
    const plain = new Set(all.filter((p) => /^[A-Za-z0-9_]+$/.test(p)));
    const globs = all.filter((p) => !plain.has(p));
    const glob = globs.length ? picomatch(globs) : () => false;
    m = (name) => plain.has(name) || glob(name);
    matchers.set(extra, m);
  }
  return m;
}

/**
 * The environment a command gets: the allow-list (plus policy env.allow, globs allowed),
 * then policy env.set; secret-looking names are dropped from both. PATH is cleaned (safePath)
 * and git is told to ignore repository-controlled code (GIT_HARDENING).
 */
export function buildEnv(source: NodeJS.ProcessEnv, policyEnv: { allow: string[]; set: Record<string, string> }, roots: string[] = [], own: readonly string[] = []): Record<string, string> {
  const allowed = allowMatcher(policyEnv.allow);
  const env: Record<string, string> = {};
  // Names first, then only the allowed values: each read of process.env is a call into C++
  // (Object.entries read all ~50 values: 26 µs a command, against 8).
  for (const k of Object.keys(source)) {
    if (!allowed(k) || isSecretName(k)) continue;
    const v = source[k];
    if (v !== undefined) env[k] = v;
  }
  for (const [k, v] of Object.entries(policyEnv.set)) if (!isSecretName(k)) env[k] = v;
  env.PATH = safePath(givenPath(source, policyEnv), roots, own);
  for (const k of Object.keys(env)) if (/^GIT_CONFIG_(COUNT|KEY_\d+|VALUE_\d+|PARAMETERS)$/.test(k)) delete env[k];
  env.GIT_CONFIG_COUNT = String(GIT_HARDENING.length);
  GIT_HARDENING.forEach(([key, value], i) => { env[`GIT_CONFIG_KEY_${i}`] = key; env[`GIT_CONFIG_VALUE_${i}`] = value; });
  return env;
}
