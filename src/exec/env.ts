import { existsSync, lstatSync, readlinkSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import picomatch from 'picomatch';

/** Passed through from the server's environment when set (SPEC §5: a minimal allow-list). */
export const BASE_ENV_ALLOW = ['PATH', 'HOME', 'LANG', 'LANGUAGE', 'LC_*', 'TERM', 'TZ', 'USER', 'LOGNAME', 'SHELL', 'TMPDIR', 'COLORTERM', 'NO_COLOR'];

/** Never passed, whatever the policy says. */
const SECRET = /(_TOKEN|_SECRET|_KEY)$|PASSWORD|^AWS_/i;

const DEFAULT_PATH = '/usr/local/bin:/usr/bin:/bin';

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

/** Paths that name the process that looks (its cwd, its descriptors): for a command, its own, in the workspace. */
const PER_PROCESS = /^\/(proc\/(self|thread-self)|dev\/(fd|stdin|stdout|stderr))(\/|$)/;

/**
 * The real path of absolute `p` as the kernel reads it (`..` after a link is the parent of the
 * link's target, not of the link); for a path that does not exist (yet), the real path of its
 * nearest existing ancestor plus the rest, following a dangling link on the way (a command may
 * make the folder it points to). Null when a link met on the way names a per-process path
 * (PER_PROCESS). After 40 links, the kernel's limit (a loop: nothing runs through it), the path
 * itself.
 *
 * Runs for every PATH entry on every command: a missing entry (npm puts several
 * node_modules/.bin in PATH) is found by calls that do not throw (an exception costs ~5–10 µs,
 * the call itself ~1): existsSync (false for missing, dangling, a loop or a path too long, as
 * realpath fails then) and lstat (a link or not, where readlink would throw for "not a link" and
 * "missing"). A loop, not recursion: an entry may have thousands of components.
 */
export function realOrPlanned(p: string): string | null {
  let cur = p;
  for (let links = 0; ;) {
    // The nearest ancestor that exists, by its real path; the components below it in `tail`, last first.
    const tail: string[] = [];
    let base = cur;
    let real = base;
    for (;;) {
      if (existsSync(base)) {
        try { real = realpathSync.native(base); break; } catch { /* gone since, or unreadable: as missing */ }
      }
      const parent = path.dirname(base);
      if (parent === base) { real = base; break; }
      tail.push(path.basename(base));
      base = parent;
    }
    let next: string | null = null;
    for (let i = tail.length - 1; i >= 0 && next === null; i--) {
      const name = tail[i]!;
      if (name === '.' || name === '') continue;
      if (name === '..') { real = path.dirname(real); continue; }
      const joined = real === '/' ? `/${name}` : `${real}/${name}`;
      let target: string | null = null;
      try {
        if (lstatSync(joined, { throwIfNoEntry: false })?.isSymbolicLink()) target = readlinkSync(joined);
      } catch { /* unreadable, too long: as not a link */ }
      if (target === null) { real = joined; continue; }
      if (PER_PROCESS.test(target)) return null;
      if (++links > 40) return p;
      // The link's target in its folder, then the rest of the path, read again from the top.
      const rest = tail.slice(0, i).reverse().join('/');
      const at = target.startsWith('/') ? target : `${real}/${target}`;
      next = rest ? `${at}/${rest}` : at;
    }
    if (next === null) return real;
    cur = next;
  }
}

/**
 * PATH without the entries a command line could plant programs in: empty and relative entries
 * (they name the cwd), per-process ones (`/proc/self/cwd/bin` is the command's own cwd) and any
 * directory inside a workspace root (node_modules/.bin, ./bin…), compared before and after
 * resolving symlinks as the kernel does (for an entry not made yet, as far as they go). A link
 * to a per-process path is found only where the entry does not exist yet: realpath reads an
 * existing one as the server, whose cwd is not the command's.
 */
export function safePath(value: string | undefined, roots: string[]): string {
  const real = (p: string) => { try { return realpathSync.native(p); } catch { return p; } };
  const rootsReal = roots.flatMap((r) => [path.resolve(r), real(r)]);
  // Each entry once (a PATH often repeats some), and resolved once for all roots.
  const kept = [...new Set((value ?? '').split(':'))].filter((e) => {
    if (!e || !path.isAbsolute(e)) return false;
    const abs = path.resolve(e);
    if (PER_PROCESS.test(abs) || rootsReal.some((r) => inside(abs, r))) return false;
    // The entry as written: `..` after a link is not `path.resolve`'s.
    const resolved = realOrPlanned(e);
    return resolved !== null && !rootsReal.some((r) => inside(resolved, r));
  });
  return kept.length ? kept.join(':') : DEFAULT_PATH;
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
export function buildEnv(source: NodeJS.ProcessEnv, policyEnv: { allow: string[]; set: Record<string, string> }, roots: string[] = []): Record<string, string> {
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
  env.PATH = safePath(env.PATH ?? DEFAULT_PATH, roots);
  for (const k of Object.keys(env)) if (/^GIT_CONFIG_(COUNT|KEY_\d+|VALUE_\d+|PARAMETERS)$/.test(k)) delete env[k];
  env.GIT_CONFIG_COUNT = String(GIT_HARDENING.length);
  GIT_HARDENING.forEach(([key, value], i) => { env[`GIT_CONFIG_KEY_${i}`] = key; env[`GIT_CONFIG_VALUE_${i}`] = value; });
  return env;
}
