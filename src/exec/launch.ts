import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ToolError } from '../core/errors.js';
import type { Plan, ToolContext } from '../core/types.js';
import { matchesAnyCommand } from '../policy/match-command.js';
import { limitText } from '../core/output.js';
import { OutputCapture } from './capture.js';
import { directExec } from './direct.js';
import { buildEnv, givenPath } from './env.js';
import { ProcessTable, type ProcRecord } from './processes.js';
import { withoutChannel } from './inherited-fds.js';
import { markingOn, markScript } from './mark.js';
import { Running, viaStarter, type Exit } from './run.js';
import { BWRAP_OWN_DIRS, bwrapArgs, chooseBackend, holdMountPoints, protectedPaths } from './sandbox.js';
import { linkOnTheWay, linkOutOfProtected, notAFolderOnTheWay, realOrSelf, shown } from './sandbox-links.js';
import { MAX_SECRET_MOUNTS } from './secret-scan.js';
import { privateBase, withKeyringFilter } from './seccomp.js';
import { sandboxMasks } from './masks.js';

export interface LaunchInput {
  /** The command line, run as `bash -c` (a plain one exec'd as bash would, direct.ts) — or, when `argv` is given, only shown (records, process_list). */
  command: string;
  cwd: string;
  stdin?: string;
  background: boolean;
  plan: Plan;
  programs: string[];
  /** A fixed argv run as is, without bash (custom tools); `command` is then only its display text. */
  argv?: string[];
  /**
   * True when a person approved this call under an ask rule: paths the user's ask rules for
   * commands cover are then visible in the sandbox. Otherwise they are hidden like denied ones
   * (a glob, `$(…)`, a script or `grep -r` would read them without asking). Default: the call's
   * path gate asked about a path.
   */
  approved?: boolean;
}

/** The network is on for a command when the policy says so globally, or an allow rule with `network: true` matches one of its parts. */
export function networkAllowed(ctx: Pick<ToolContext, 'policy'>, plan: Plan): boolean {
  if (ctx.policy.data.sandbox.network === 'allow') return true;
  const rules = ctx.policy.rules.filter((r) => r.network === true && r.decision === 'allow' && r.command && r.tool('run_command'));
  return plan.targets.some((t) => t.kind === 'command' && !t.deny_reason && rules.some((r) => matchesAnyCommand(r.command!, t.words)));
}

/** Absolute file behind a storage_ref. */
function refPath(ref: string, ctx: ToolContext): string {
  return path.isAbsolute(ref) ? ref : path.join(ctx.workspace.primary, ref);
}

/**
 * Starts `bash -c COMMAND` — or a fixed `argv`, no shell — inside bwrap when available, with
 * the masked paths, minimal environment and bounded capture, and registers it with the session.
 */
export async function launch(input: LaunchInput, ctx: ToolContext): Promise<ProcRecord> {
  const table = ProcessTable.of(ctx.session);
  const max = ctx.policy.data.limits.max_processes;
  if (input.background && table.runningCount() >= max) {
    throw new ToolError('ToolNotAllowed', `${max} background processes are already running (limits.max_processes); stop one with process_kill first.`);
  }
  const choice = await chooseBackend(ctx.policy.data.sandbox.backend);
  if (choice.error) throw new ToolError('ToolNotAllowed', `${choice.error}; install bubblewrap or set sandbox.backend: auto.`);
  // Under bubblewrap /tmp and /dev are the command's own to fill: no PATH entry there (or through them).
  let env = buildEnv(process.env, ctx.policy.data.env, ctx.workspace.roots, choice.backend === 'bwrap' ? BWRAP_OWN_DIRS : []);
  const pathSeen = { given: givenPath(process.env, ctx.policy.data.env), kept: env.PATH ?? '' };
  const home = env.HOME ?? os.homedir();
  const half = Math.floor(ctx.limits.output_bytes / 2);
  // A background run's output is read from its file (process_output): made now. A foreground
  // run's file is only made if its output outgrows memory (most commands print little).
  // The record (made below, before any output can arrive) names the file once it exists.
  const spilled: { file?: string; storage_ref?: string } = {};
  let recRef: ProcRecord | undefined;
  const makeSpill = async () => {
    const s = await ctx.spill('', 'log');
    spilled.storage_ref = s.storage_ref;
    spilled.file = refPath(s.storage_ref, ctx);
    if (recRef) { recRef.storage_ref = spilled.storage_ref; recRef.file = spilled.file; }
    return spilled.file;
  };
  // --norc: bash sources ~/.bashrc when stdin is a socket (it thinks rshd started it); Node's pipes are sockets.
  // A plain line (one program, plain words) without a sandbox is exec'd as bash would exec it, without bash (direct.ts).
  // Every process started for a command carries the mark (mark.ts) that tells the approval inbox
  // it is not a person: through the starter, which carries it; started directly, by its argv
  // (then never exec'd without bash: bash sets the mark).
  const via = viaStarter();
  const mark = via === null && markingOn();
  const direct = !input.argv && choice.backend === 'none' && !mark ? directExec(input.command, env, input.cwd) : null;
  if (direct) env = direct.env;
  let argv = input.argv ?? direct?.argv ?? ['/bin/bash', '--norc', '--noprofile', '-c', mark ? markScript(input.command) : input.command];
  if (input.argv && mark && argv.length > 0) {
    const m = withoutChannel(argv[0]!, argv.slice(1), env, { mark: true, closeFd: null });
    argv = [m.command, ...m.args];
    env = m.env;
  }
  if (argv.length === 0) throw new ToolError('InvalidArguments', 'An empty argv cannot be run.');
  tooLongForExec(argv, !input.argv);
  if (input.background) await makeSpill();
  const capture = new OutputCapture(half, half, input.background ? 0 : Math.max(ctx.limits.output_bytes * 4, 1 << 20), input.background ? spilled.file! : makeSpill);
  let file0 = argv[0]!;
  let args = argv.slice(1);
  let release = () => {};
  if (choice.backend === 'bwrap') {
    const rules = ctx.workspace.rules;
    const masks = await sandboxMasks(ctx);
    const approved = input.approved ?? (ctx.workspace.gate?.asked.length ?? 0) > 0;
    if (masks.incomplete || masks.hide.length + masks.readonly.length + masks.ask.length > MAX_SECRET_MOUNTS) {
      throw new ToolError('ToolNotAllowed', masks.incomplete
        ? 'The workspace is too large to find every secret or protected path to mask in the sandbox; use a smaller workspace.'
        : `The workspace holds ${masks.hide.length + masks.readonly.length} secret, denied or protected paths, more than the sandbox masks (${MAX_SECRET_MOUNTS}); move some out or narrow the workspace.`);
    }
    const roots = ctx.workspace.roots;
    refuseUnsafeLayout(roots, [...protectedPaths(roots, ctx.policy.data.paths.protect), ...masks.readonly], rules.deniedAbs, rules.protectedAbs);
    const b = bwrapArgs({
      // Saved output of every session (spills) is masked too: a command is not the session that got the storage_ref.
      // The private paths as they really are: one named through an absolute link failed every command (review 34).
      secretPaths: [...masks.hide, ...(approved ? [] : masks.ask), ...new Set(rules.deniedAbs.map(realOrSelf)), ...(ctx.workspace.spills?.dirs ?? [])], readonlyPaths: masks.readonly,
      bin: choice.bin!, roots: ctx.workspace.roots, cwd: input.cwd, home, network: networkAllowed(ctx, input.plan),
      protectedAbs: rules.protectedAbs, extraDeny: ctx.policy.data.paths.deny, extraProtect: ctx.policy.data.paths.protect,
    }, argv);
    // No kernel keyring calls inside (review 33): the filter goes to bwrap on a descriptor.
    ({ file: file0, args } = withKeyringFilter(choice.bin!, b.args, roots));
    release = holdMountPoints(b.created);
  }
  const rec: ProcRecord = {
    id: table.nextId(), command: input.command, cwd: ctx.workspace.display(input.cwd), sandbox: choice.backend,
    background: input.background, capture, file: spilled.file, storage_ref: spilled.storage_ref,
    started_at: new Date().toISOString(), killed: false, timed_out: false, programs: input.programs,
    waiters: new Set(), path: pathSeen,
    running: undefined as unknown as Running,
  };
  recRef = rec;
  try {
    rec.running = new Running({
      file: file0, args, cwd: input.cwd, env, capture, via, ...(direct ? { argv0: direct.argv0 } : {}),
      // Text, even the text "keep", is written and stdin closed; a background run without text keeps it open.
      stdin: input.stdin !== undefined ? { text: input.stdin } : input.background ? 'keep' : undefined,
      onOutput: () => { for (const w of rec.waiters) w(); },
    });
  } catch (e) {
    // spawn() itself threw (EAGAIN, ENOMEM…): nothing started.
    release();
    capture.finish();
    throw new ToolError('IOError', `The command could not be started: ${(e as Error).message}. Try again; if it persists, the machine is short of processes or memory.`, { cause: e });
  }
  rec.running.done.finally(() => {
    release();
    // A background run's output file stays for process_output; close its descriptor.
    if (input.background) capture.finish();
  }).catch(() => {});
  table.add(rec);
  // Started through the starter process, the pid comes one message later: callers record it.
  await rec.running.spawned;
  return rec;
}

/**
 * Waits for a foreground run: stops its process group at `limit` ms (`timed_out`) or when the
 * call is cancelled (`killed`, also when the cancel came while it was being started), reports
 * progress every 2 s, and takes it off the process table once it has ended.
 */
export async function awaitForeground(rec: ProcRecord, limit: number, ctx: ToolContext): Promise<Exit> {
  // Looked up now: after the wait the session may be gone, and a lookup would make it a new table.
  const table = ProcessTable.of(ctx.session);
  const timer = setTimeout(() => { rec.timed_out = true; rec.running.kill(); }, limit);
  const onAbort = () => { rec.killed = true; rec.running.kill(); };
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  // A cancel that came while the process was being started has fired already.
  if (ctx.signal.aborted) onAbort();
  const tick = setInterval(() => ctx.progress(`running for ${Math.round((Date.now() - rec.running.started) / 1000)} s, ${rec.capture.bytes} bytes of output`), 2000);
  try {
    return await rec.running.done;
  } finally {
    clearTimeout(timer);
    clearInterval(tick);
    ctx.signal.removeEventListener('abort', onAbort);
    table.remove(rec.id);
  }
}

/**
 * The output of a finished foreground run for the envelope: head and tail within the limits,
 * and the whole of it saved (storage_ref) when anything was cut.
 */
export async function finishedOutput(rec: ProcRecord, ctx: Pick<ToolContext, 'spill' | 'limits'>): Promise<{ text: string; truncated: boolean; total_bytes: number; storage_ref?: string; sha256?: string }> {
  await rec.capture.ready();
  const whole = rec.capture.wholeOutput();
  const cap = rec.capture.finish();
  const shown = limitText(cap.text, ctx.limits, 'head_tail');
  let storage: { storage_ref?: string; sha256?: string } = {};
  if (cap.truncated) storage = { storage_ref: rec.storage_ref, sha256: cap.sha256 };
  else if (shown.truncated) storage = { storage_ref: (await ctx.spill(whole ?? cap.text, 'log')).storage_ref, sha256: cap.sha256 };
  return { text: shown.text, truncated: cap.truncated || shown.truncated, total_bytes: cap.total_bytes, ...storage };
}

/** Linux's cap on one argument of a program (MAX_ARG_STRLEN, its closing NUL included). */
const MAX_ARG_BYTES = 32 * 4096;

/**
 * Refuses, before anything starts, an argument the kernel would refuse (E2BIG): `bash -c` takes
 * the whole line as one argument, and 100,000 characters can be 400,000 bytes in UTF-8.
 */
function tooLongForExec(argv: string[], line: boolean): void {
  for (const a of argv) {
    if (a.length * 3 < MAX_ARG_BYTES - 1) continue;
    const bytes = Buffer.byteLength(a);
    if (bytes < MAX_ARG_BYTES) continue;
    throw new ToolError('InvalidArguments', line
      ? `The command line is ${bytes} bytes in UTF-8, and Linux takes at most ${MAX_ARG_BYTES - 1} bytes in one argument (bash -c gets the line as one): write it to a script with write_file and run the script.`
      : `An argument is ${bytes} bytes in UTF-8, and Linux takes at most ${MAX_ARG_BYTES - 1} bytes in one: pass the data in a file or on stdin.`,
      { details: { bytes, max: MAX_ARG_BYTES - 1 } });
  }
}

/** A folder of the user's (0700; its missing parents as mkdir -p makes them), when it is missing. */
function makePrivateDir(p: string): void {
  try {
    mkdirSync(path.dirname(p), { recursive: true });
    mkdirSync(p, { mode: 0o700 });
  } catch { /* there already, or not makeable: the mask finds what is there */ }
}

/**
 * What no sandbox can hold, refused before one starts (reviews 34, 35), each with what to do:
 * a link on the way to a protected or private path (no mount holds a link); a link in a protected
 * folder that leads into a root; a private path (the user's toolgate state, HOME in the workspace)
 * with a file on its way; no temp folder outside the roots for the sandbox's own files.
 */
function refuseUnsafeLayout(roots: readonly string[], protectedInRoots: string[], privateAbs: readonly string[], protectedAbs: readonly string[]): void {
  const refuse = (why: string, fix: string, details: Record<string, unknown>) => {
    throw new ToolError('ToolNotAllowed', `${why}: a command could put its own files there, and the sandbox cannot hold it. ${fix}`, { details });
  };
  const isPrivate = (p: string) => privateAbs.includes(p);
  const link = linkOnTheWay(roots, [...protectedInRoots, ...privateAbs, ...protectedAbs]);
  if (link) {
    const what = link.link === link.path ? `${shown(roots, link.link)} is a symbolic link` : `${shown(roots, link.link)} is a symbolic link on the way to ${shown(roots, link.path)}`;
    refuse(`${what}, which the sandbox keeps from commands (no mount can hold a link)`,
      isPrivate(link.path) ? 'Replace the link with the folder it points to, or set XDG_STATE_HOME to a folder outside the workspace.' : 'Replace the link with what it points to, or move it out of the workspace.', { ...link });
  }
  const below = linkOutOfProtected(roots, protectedInRoots);
  if (below) refuse(`${shown(roots, below.link)}, in a folder the sandbox keeps read-only, is a link to ${shown(roots, below.to)}, which commands may write`, 'Replace the link with a copy of what it points to, or move the target out of the workspace.', { ...below });
  // The user's toolgate state and runtime dir (grants, pins, sockets) are masked like secrets. One
  // missing inside a root (HOME in the workspace) is made first: a mask needs something to cover,
  // and a command could otherwise create it and store a grant for every tool (review 33).
  for (const p of privateAbs) if (roots.some((r) => p.startsWith(`${r}/`))) makePrivateDir(p);
  const file = notAFolderOnTheWay(roots, privateAbs);
  if (file) refuse(`${shown(roots, file.part)} is not a folder, on the way to toolgate's own ${shown(roots, file.path)}`, 'Remove it, or set XDG_STATE_HOME to a folder outside the workspace.', { ...file });
  if (!privateBase(roots)) refuse('Every temp folder (TMPDIR, /tmp, /var/tmp) lies in a workspace root, and the sandbox keeps its own files (the seccomp filter, empty stand-ins) in one', 'Set TMPDIR to a folder outside the workspace.', { roots });
}
