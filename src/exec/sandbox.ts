import { execFile } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, writeFileSync, chmodSync, readdirSync, rmdirSync, rmSync, statSync, unlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { mountPoints, withPinCheck } from './pin-check.js';
import { hideRuntime } from './sandbox-hide.js';
import { privateBase, withKeyringFilter } from './seccomp.js';

export type SandboxBackend = 'bwrap' | 'none';

// Whether bwrap works is a fact about this machine: probed once per process, shared.
let probe: Promise<string | null> | undefined;

/** Path of a working bwrap (a trial run succeeded), or null. TOOLGATE_SANDBOX=none hides it (tests of the fallback). */
export function detectBwrap(): Promise<string | null> {
  probe ??= new Promise((resolve) => {
    if (process.platform !== 'linux' || process.env.TOOLGATE_SANDBOX?.trim().toLowerCase() === 'none') { resolve(null); return; }
    const bin = ['/usr/bin/bwrap', '/usr/local/bin/bwrap', '/bin/bwrap'].find((p) => existsSync(p));
    if (!bin) { resolve(null); return; }
    // The probe runs what every command gets, the keyring filter included (seccomp.ts).
    const probe = withKeyringFilter(bin, ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--remount-ro', '/proc',
      '--unshare-net', '--cap-drop', 'ALL', '--unshare-ipc', '--unshare-pid',
      '--die-with-parent', '--new-session', '--', '/bin/sh', '-c', 'exit 0']);
    execFile(probe.file, probe.args, { timeout: 5000 }, (err) => resolve(err ? null : bin));
  });
  return probe;
}

/** Which backend the policy asks for and this machine offers. `bwrap` asked but missing is an error, not a silent fallback. */
export async function chooseBackend(setting: 'auto' | 'bwrap' | 'none'): Promise<{ backend: SandboxBackend; bin?: string; error?: string }> {
  if (setting === 'none') return { backend: 'none' };
  const bin = await detectBwrap();
  if (bin) return { backend: 'bwrap', bin };
  if (setting === 'bwrap') return { backend: 'none', error: 'sandbox.backend is "bwrap" but bubblewrap is not installed or does not work here' };
  return { backend: 'none' };
}

// Empty, read-only stand-ins bound over protected paths that do not exist yet; in a folder no
// root holds (a command could write into them otherwise, and other sandboxes would show it, review 34).
let blanks: { file: string; dir: string } | undefined;
function placeholders(roots: readonly string[]): { file: string; dir: string } {
  const baseDir = privateBase(roots);
  if (!baseDir) throw new Error('every temp folder lies in a workspace root: no private place for the stand-ins'); // launch() refuses first
  if (blanks && blanks.file.startsWith(`${baseDir}/`) && existsSync(blanks.file) && existsSync(blanks.dir)) return blanks;
  const base = mkdtempSync(path.join(baseDir, 'toolgate-blank-'));
  const file = path.join(base, 'empty');
  const dir = path.join(base, 'emptydir');
  writeFileSync(file, '');
  chmodSync(file, 0o444);
  mkdirSync(dir);
  chmodSync(dir, 0o555);
  blanks = { file, dir };
  // Removed with the process (one folder per server was left in the temp dir, review 35).
  process.once('exit', () => { try { chmodSync(dir, 0o700); rmSync(base, { recursive: true, force: true }); } catch { /* gone */ } });
  return blanks;
}

/** Always read-only inside a root, existing or not (SPEC §4 protect list, made concrete). */
// `.git` first and whole: a stand-in `.git` left writable around stand-in hooks/config let a
// command write .git/HEAD + .git/commondir (pointing at a config with core.fsmonitor), and the
// user's next `git status` on the host ran it. Its hooks and config are then inside it.
const PROTECTED_IN_ROOT: Array<[string, 'file' | 'dir']> = [
  ['.git', 'dir'], ['.git/hooks', 'dir'], ['.git/config', 'file'], ['.bashrc', 'file'], ['.zshrc', 'file'], ['.profile', 'file'],
  ['.bash_profile', 'file'], ['.gitconfig', 'file'], ['.mcp.json', 'file'], ['.claude', 'dir'], ['.cursor', 'dir'],
  ['.vscode', 'dir'], ['.idea', 'dir'], ['.codex', 'dir'], ['.gemini', 'dir'], ['.toolgate', 'dir'],
];
/** Every protected path a root holds by name (the defaults, then the policy's literal paths.protect). */
export function protectedPaths(roots: readonly string[], extraProtect: readonly string[]): string[] {
  const rels = [...PROTECTED_IN_ROOT.map(([rel]) => rel), ...extraProtect.filter(isLiteral).map(literalPattern)];
  return roots.flatMap((r) => rels.map((rel) => path.join(r, rel)));
}

const SECRET_DIRS = ['.ssh', '.aws', '.gnupg'];
const SECRET_FILES = ['.netrc', '.npmrc', '.env'];
/** Hidden in HOME only (a project may well have a `.docker` folder): credentials and container engines' sockets (review 32). */
const HOME_ONLY_DIRS = ['.docker', '.kube', '.colima', '.rd', '.lima'];

export interface SandboxSpec {
  bin: string;
  roots: string[];
  cwd: string;
  home: string;
  network: boolean;
  /** Absolute paths protected whatever their name (state dir, policy file). */
  protectedAbs: string[];
  /** Extra deny / protect patterns from the policy (literal ones are bound; globs are best effort). */
  extraDeny: string[];
  extraProtect: string[];
  /** Secrets and user-denied paths found anywhere inside the roots (the mask index): hidden. */
  secretPaths?: string[];
  /** Protected paths at any depth inside the roots (a nested `.git`, `sub/.vscode`): bound read-only. */
  readonlyPaths?: string[];
}

function kindOf(p: string): 'file' | 'dir' | null {
  try { return statSync(p).isDirectory() ? 'dir' : 'file'; } catch { return null; }
}

const literalPattern = (p: string) => p.replace(/^\*\*\//, '').replace(/\/\*\*$/, '');
const isLiteral = (p: string) => !/[*?[\]{}!]/.test(p);

/**
 * What a sandboxed command may write besides the workspace: the private /dev and /tmp that
 * bwrapArgs gives it (`--dev /dev`, `--tmpfs /tmp`). The PATH check (env.ts safePath) treats
 * them as the command's own, like the workspace. Keep the two lists together.
 */
export const BWRAP_OWN_DIRS: readonly string[] = ['/tmp', '/dev'];

/**
 * bwrap arguments: read-only /, writable roots, private /tmp, /dev and /proc; no network
 * unless allowed; own pid namespace and session; dies with toolgate. Secrets are masked
 * (empty tmpfs over directories, an empty file over files); protected paths inside the
 * roots are bound read-only, and ones that do not exist yet get a read-only empty stand-in
 * so they cannot be created. Returns the mount points that bwrap may create on the host.
 */
export function bwrapArgs(s: SandboxSpec, argv: string[]): { args: string[]; created: string[] } {
  const blank = placeholders(s.roots);
  const a = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', ...keyLists(blank.file), '--tmpfs', '/tmp'];
  // Host services' sockets (the session bus runs what it is sent outside the sandbox; docker.sock,
  // the system bus for root): --unshare-net does not cut a Unix socket that has a path (review 31).
  const runtime = hideRuntime(s);
  a.push(...runtime.args);
  const hiddenAlready = (p: string) => runtime.hidden.some((h) => p === h || p.startsWith(`${h}/`));
  for (const r of s.roots) a.push('--bind', r, r);
  // Every folder above a hidden path is bound onto itself first: a mount point cannot be renamed
  // or removed, so no command (`mv a b`, `os.rename` in a script) carries a hidden folder out
  // from under the rule that hides it. Later read-only binds still apply on top.
  const hostMounts = s.secretPaths?.length || s.readonlyPaths?.length || s.protectedAbs.length ? mountPoints() : new Set<string>();
  const extraDeny = s.extraDeny.filter(isLiteral).map(literalPattern);
  const extraProtect = s.extraProtect.filter(isLiteral).map(literalPattern);
  const prot: Array<[string, 'file' | 'dir']> = [...PROTECTED_IN_ROOT, ...extraProtect.map((p): [string, 'dir'] => [p, 'dir'])];
  // The folders above a protected path are pinned too: a stand-in below a plain folder went with it
  // when a command renamed that folder, and the path could then be made (review 33).
  const pins = ancestorsToPin(s, hostMounts, s.roots.flatMap((r) => prot.map(([rel]) => path.join(r, rel))));
  for (const p of pins) a.push('--bind', p, p);
  const created: string[] = [];
  // Each mount costs bwrap ~0.1–0.2 ms: a path is masked once, and a read-only bind of a path
  // onto itself is skipped below a folder already bound read-only onto itself (same content).
  const masked = new Set<string>();
  const readonly = (s.readonlyPaths ?? []).filter((p) => !inStandIn(p));
  const roSelf: string[] = [];
  const underRo = (p: string) => roSelf.some((ro) => p === ro || p.startsWith(`${ro}/`));
  const roBind = (p: string) => { if (underRo(p) || hiddenAlready(p)) return; a.push('--ro-bind', p, p); roSelf.push(p); };
  const mask = (p: string) => {
    // Under a hidden runtime folder: already out of sight (and its tmpfs turns read-only last).
    if (masked.has(p) || hiddenAlready(p)) return;
    const k = kindOf(p);
    if (k === 'dir') a.push('--tmpfs', p, '--remount-ro', p);
    else if (k === 'file') a.push('--ro-bind', blank.file, p);
    if (k) masked.add(p);
  };
  for (const d of [...SECRET_DIRS, ...HOME_ONLY_DIRS]) mask(path.join(s.home, d));
  for (const f of SECRET_FILES) mask(path.join(s.home, f));
  for (const r of s.roots) {
    for (const d of SECRET_DIRS) mask(path.join(r, d));
    for (const f of SECRET_FILES) mask(path.join(r, f));
    // Top-level files like .env.local, server.pem, id.key.
    try {
      for (const n of readdirSync(r)) if (/^\.env\./.test(n) || /\.(pem|key)$/.test(n)) mask(path.join(r, n));
    } catch { /* unreadable root: bwrap will say so */ }
    for (const p of extraDeny) mask(path.join(r, p));
    // A stand-in another sandbox made (the index sees it as a protected path) is bound and held as a stand-in below.
    for (const p of readonly) if (p.startsWith(r + '/') && kindOf(p)) roBind(p);
    const blanked: string[] = [];
    for (const [rel, kind] of prot) {
      const p = path.join(r, rel);
      // Already read-only as part of a protected folder bound whole (a `.git`), or inside a stand-in bound
      // above: nothing to add, and no mount point can be made there.
      if (readonly.some((ro) => p === ro || p.startsWith(`${ro}/`)) || blanked.some((b) => p.startsWith(`${b}/`))) continue;
      // Missing, or a stand-in another sandbox made: bind a read-only stand-in so the command cannot
      // create it. bwrap makes the mount point; this sandbox holds it (and its missing parents) until it ends.
      if (!standIns.has(p)) {
        const k = kindOf(p);
        if (k) { roBind(p); continue; }
      }
      // Below a file (`.github` a file, `.github/workflows` protected): nothing can be made there
      // while the file is; the file is bound read-only so it stays (bwrap cannot mount below it).
      const file = fileOnTheWay(r, rel);
      if (file) { roBind(file); continue; }
      // A missing folder above it gets the stand-in instead (an empty read-only folder): nothing can
      // be made below it, and as a mount point it cannot be renamed (review 33).
      const chain = standInChain(r, rel);
      const at = chain[0] !== undefined && chain[0] !== p ? chain[0] : p;
      created.push(at);
      a.push('--ro-bind', at !== p || kind === 'dir' ? blank.dir : blank.file, at);
      blanked.push(at);
    }
  }
  for (const p of s.protectedAbs) if (kindOf(p)) roBind(p);
  // Found secrets, inside the roots or not (the user's toolgate state; / is bound read-only, not
  // hidden), are masked last: a read-only bind of a protected folder above one (the state dir
  // above its spills, .vscode above a .env) would otherwise put the real file back.
  for (const p of s.secretPaths ?? []) mask(p);
  if (!s.network) a.push('--unshare-net');
  // No capability inside, also for a server run as root (bwrap keeps the caller's otherwise: a
  // command could unmount, remount / read-write and write the host; review 30).
  // The kernel's settings and the rest of /proc, read-only: bwrap leaves /proc/sys writable (its
  // access(W_OK) test on the folder fails), and sysctl files check the owner bits, not a
  // capability: a command of a server run as root set kernel.core_pattern to a program of its own,
  // run as host root (review 31). The sandbox's own /proc, made read-only last: binding the host's
  // /proc/sys brought its binfmt_misc automount point along (review 32).
  a.push('--remount-ro', '/proc');
  for (const d of runtime.hidden) a.push('--remount-ro', d);
  // Own System V IPC and POSIX message queues: the host's shared memory is not the command's (review 31).
  a.push('--cap-drop', 'ALL', '--unshare-ipc', '--unshare-pid', '--die-with-parent', '--new-session', '--chdir', s.cwd, '--',
    // bwrap follows a link swapped in for a pinned folder meanwhile: the sandbox checks its pins first (pin-check.ts).
    ...withPinCheck(pins, roSelf.filter((p) => s.roots.some((r) => p.startsWith(`${r}/`)) && !hostMounts.has(p)), argv));
  return { args: a, created };
}

/** Folders strictly between a root and each hidden path inside it, outermost first, none under a read-only path. */
function ancestorsToPin(s: SandboxSpec, hostMounts: ReadonlySet<string>, protectedInRoots: string[]): string[] {
  const out = new Set<string>();
  const ro = [...(s.readonlyPaths ?? []), ...s.protectedAbs];
  const underRo = (p: string) => ro.some((x) => p === x || p.startsWith(`${x}/`));
  // Above a hidden path, and above a read-only one (a nested repository's .git, sub/.vscode): a
  // folder another sandbox could exchange for a link while bwrap mounts would carry the read-only
  // bind away from the real .git (review 32).
  for (const inner of [...(s.secretPaths ?? []), ...ro, ...protectedInRoots]) {
    const root = s.roots.find((r) => inner.startsWith(`${r}/`));
    if (!root) continue;
    const parts = inner.slice(root.length + 1).split('/').slice(0, -1);
    let cur = root;
    for (const part of parts) {
      cur = `${cur}/${part}`;
      if (out.has(cur)) continue;
      if (underRo(cur)) break;
      // lstat: bound read-write onto itself, a link would bind what it points to (review 31).
      let st;
      try { st = lstatSync(cur); } catch { break; }
      if (!st.isDirectory()) break;
      // A mount point of the host is one in every sandbox already (it cannot be renamed there).
      if (!hostMounts.has(cur)) out.add(cur);
    }
  }
  return [...out].sort();
}

/** /proc/keys and /proc/key-users list the keys of the server's uid, names included: read as empty (review 34). */
let keyFiles: string[] | undefined;
function keyLists(empty: string): string[] {
  keyFiles ??= ['/proc/keys', '/proc/key-users'].filter((f) => existsSync(f));
  return keyFiles.flatMap((f) => ['--ro-bind', empty, f]);
}

/** The first part of root/rel above its last that exists and is not a folder, or null. */
function fileOnTheWay(root: string, rel: string): string | null {
  let cur = root;
  for (const part of rel.split('/').slice(0, -1)) {
    cur = path.join(cur, part);
    let st;
    try { st = lstatSync(cur); } catch { return null; }
    if (!st.isDirectory()) return cur;
  }
  return null;
}

/** True for a stand-in, or a path inside one. */
function inStandIn(p: string): boolean {
  for (let q = p; q.length > 1; q = path.dirname(q)) if (standIns.has(q)) return true;
  return false;
}

/** The components from root to root/rel that do not exist or are stand-ins already, outermost first. */
function standInChain(root: string, rel: string): string[] {
  const out: string[] = [];
  let cur = root;
  for (const part of rel.split('/')) {
    cur = path.join(cur, part);
    if (standIns.has(cur) || !existsSync(cur)) out.push(cur);
  }
  return out;
}

/**
 * Mount points bwrap created for missing protected paths (the file system is shared by every
 * sandbox): how many running sandboxes hold each. A sandbox that finds one already there binds
 * its stand-in over it and holds it too, so the path cannot be removed under it (removing a
 * mount point detaches the mount inside every sandbox, and the path could then be created).
 * They are removed once no sandbox has held them for IDLE_MS: removing a mount point still
 * mounted in a namespace being torn down costs a kernel RCU grace period (~0.3 ms each, ~4 ms
 * per command measured), and back-to-back commands would make and remove them every time.
 */
const standIns = new Map<string, number>();
const IDLE_MS = 1000;
let sweepTimer: NodeJS.Timeout | undefined;
let exitHook = false;

export function holdMountPoints(paths: string[]): () => void {
  for (const p of paths) standIns.set(p, (standIns.get(p) ?? 0) + 1);
  if (!exitHook) { exitHook = true; process.on('exit', () => sweepStandIns(true)); }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    for (const p of paths) standIns.set(p, Math.max(0, (standIns.get(p) ?? 1) - 1));
    if (sweepTimer) clearTimeout(sweepTimer);
    sweepTimer = setTimeout(() => { sweepTimer = undefined; sweepStandIns(false); }, IDLE_MS);
    sweepTimer.unref();
  };
}

/** Removes the stand-ins no sandbox holds (all of them when the process exits), deepest first, when still empty. */
export function sweepStandIns(all: boolean): void {
  for (const p of [...standIns.keys()].sort((x, y) => y.length - x.length)) {
    if (!all && standIns.get(p)! > 0) continue;
    standIns.delete(p);
    try {
      const st = statSync(p);
      if (st.isDirectory()) rmdirSync(p);
      else if (st.size === 0) unlinkSync(p);
    } catch { /* not empty, or already gone: leave it */ }
  }
}
