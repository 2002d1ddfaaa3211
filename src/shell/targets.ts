import path from 'node:path';
import { isToolError } from '../core/errors.js';
import { isPolicyRefusal } from '../core/gate-audit.js';
import type { CommandWord, PlanTarget } from '../core/types.js';
import type { Workspace } from '../workspace/workspace.js';
import type { Analysis } from './analyze.js';
import type { FileRef } from './effects.js';
import { relInRoots, type PathVerdict } from './path-verdict.js';
import { operandTargets } from './strict-operands.js';
import { askPart, denyPart, literalPath, PROC_SECRET, ruleTarget } from './target-parts.js';

export interface TargetOptions {
  workspace: Workspace;
  /** Absolute working directory of the command. */
  cwd: string;
  /** HOME as the command will see it (for `~/…`). */
  home: string;
  /** True when the command runs in bubblewrap, whose /tmp is private and thrown away. */
  privateTmp: boolean;
  /**
   * True when an OS sandbox masks the secrets (default: privateTmp, i.e. bubblewrap). Without
   * one, reads the text cannot pin down (globs, `$(…)`, recursive greps, paths outside the
   * workspace) ask, and /proc/PID/environ & co are refused.
   */
  sandboxed?: boolean;
  /** Whether the policy lets this command reach the network (bash's /dev/tcp, /dev/udp). */
  network: boolean;
  /** The user's path rules for commands (commandPathRules): every path a command names is judged by them. */
  pathRule?: (rel: string, asDir: boolean) => PathVerdict;
  /** The user's rules whose glob starts inside a folder (commandRulesBelow): moving, deleting or linking it, or its git history, reaches them. */
  rulesBelow?: (rel: string, abs: string, anywhere: boolean) => PathVerdict;
  /** Whether a folder holds a protected path (a nested `.git`, `.vscode`…): deleting or moving it is refused. */
  protectedInside?: (abs: string) => boolean | Promise<boolean>;
  /**
   * Set when the user's rules deny paths to commands and no OS sandbox hides them: a walk or
   * search of a folder, and any read whose path is known only when it runs, is refused, since
   * static analysis cannot keep it out of the denied area. Judged on the text alone (never on
   * what the folder holds), so the refusal reveals nothing about the denied paths.
   */
  strictReads?: boolean;
  /** A background shell: every folder its earlier input may have left it in (cwd when unset). */
  cwds?: readonly (string | null)[];
}

/** Files a command may always write: they are not files. */
const HARMLESS = /^\/dev\/(null|stdout|stderr|stdin|tty|fd\/\d+|zero)$/;

/**
 * Turns the analysis into what the gate judges: one command target per part, a path target
 * per file written or deleted (judged by the path rules), and refusals for files on the
 * deny/protect lists or outside the workspace. Reads only check the secrets list: reading
 * is what an allowed command does anyway.
 */
export async function planTargets(a: Analysis, o: TargetOptions): Promise<PlanTarget[]> {
  const out: PlanTarget[] = a.parts.map((p) => ({ kind: 'command', words: p.words, text: p.text, ...(p.deny_reason ? { deny_reason: p.deny_reason } : {}), ...(p.asWritten ? { asWritten: p.asWritten } : {}) }));
  const dirs = folderCandidates(a.dirs, o);
  const seen = new Set<string>();
  const sandboxed = o.sandboxed ?? o.privateTmp;
  for (const f of a.files) {
    if (f.access === 'history') {
      const t = await historyTarget(f, o, dirs);
      if (t) out.push(t);
      continue;
    }
    const lp = literalPath(f.word, o.home);
    if (lp === null && f.via === 'test' && o.strictReads && !(o.sandboxed ?? o.privateTmp) && /[*?[]/.test(f.word.text)) {
      // `for f in pub/*`: a glob lists its folder; judged like any other glob word.
      const t = globTarget(f.word, o, dirs);
      if (t) out.push(t);
      continue;
    }
    const writes = f.access === 'write' || f.access === 'delete';
    const reads = f.access === 'read' || f.access === 'search' || f.access === 'link' || ((f.access === 'list' || f.access === 'walk') && !!o.pathRule);
    if (lp === null && reads && !sandboxed && o.strictReads) {
      out.push(denyPart(`${f.via} ${f.access} ${f.word.text}`, 'a path known only when it runs, and no OS sandbox hides what your path rules deny'));
      continue;
    }
    if (lp === null) {
      // A link to a path known only when it runs is a way to write there later (`ln -s "$PWD/.git" g; echo >> g/config`).
      if (writes || f.access === 'link') out.push(hardAsk(askPart(`${f.via} ${f.access === 'delete' ? 'deletes' : f.access === 'link' ? 'links to' : 'writes'} ${f.word.text} (a path known only when it runs)`), sandboxed));
      else if (reads && !sandboxed) out.push(askPart(`${f.via} reads ${f.word.text} (a path known only when it runs, and no OS sandbox hides the secrets)`));
      continue;
    }
    const bases = path.isAbsolute(lp) ? [o.cwd] : dirs;
    for (const base of bases) {
      if (base === null) {
        if (writes) out.push(hardAsk(askPart(`${f.via} ${f.access === 'delete' ? 'deletes' : 'writes'} ${lp} after a cd to a directory known only when it runs`), sandboxed));
        else if (reads && !sandboxed && o.strictReads) out.push(denyPart(`${f.via} ${f.access} ${lp}`, 'a path after a cd to a folder known only when it runs (cd -, popd, a variable), and no OS sandbox hides what your path rules deny'));
        continue;
      }
      const abs = path.resolve(base, lp);
      const key = `${f.access}:${abs}`;
      if (seen.has(key) || HARMLESS.test(abs)) continue;
      seen.add(key);
      const t = await fileTarget(f, abs, writes, o);
      if (t) out.push(t);
    }
  }
  // GIT_WORK_TREE=pub / GIT_INDEX_FILE=… / GIT_DIR=… anywhere in the line (a prefix, `env`, `export`) point
  // checkout & co at another folder, where committed copies of denied files land.
  const gitEnv = (w: CommandWord) => /(^|[^A-Za-z0-9_])GIT_(WORK_TREE|DIR|INDEX_FILE|COMMON_DIR|OBJECT_DIRECTORY|ALTERNATE_OBJECT_DIRECTORIES)=/.test(w.text);
  // Any other GIT_* variable set or exported in the line (GIT_ICASE_PATHSPECS=1, GIT_GLOB_PATHSPECS,
  // `read GIT_X; export GIT_X`) may change what a pathspec matches: `-- PRIV/SECRET.TXT` then shows priv/secret.txt.
  const gitVar = (w: CommandWord) => /(^|[^A-Za-z0-9_])GIT_[A-Za-z0-9_]/.test(w.text);
  const words = (p: Analysis['parts'][number]) => [...p.words, ...(p.asWritten ?? [])];
  const pathspecs = a.files.some((f) => f.access === 'history' && f.word.text !== '') && a.parts.some((p) => words(p).some(gitVar));
  if (o.pathRule && (pathspecs || a.parts.some((p) => words(p).some(gitEnv)))) {
    const t = await historyTarget({ word: { text: '', literal: true }, access: 'history', via: 'git with GIT_* settings from the environment' }, o, dirs);
    if (t) out.push(t);
  }
  if (o.strictReads && !sandboxed && o.pathRule) {
    // Without a sandbox a glob in any word lists a folder as it expands (`echo priv/*`, `for f in */x`).
    for (const p of a.parts) for (const w of p.words) {
      const t = globTarget(w, o, dirs);
      if (t) out.push(t);
    }
  }
  // Any program may read the paths it is given (`rev priv/x`, `iconv … priv/x`, `rev .env`): see operandTargets.
  if (!sandboxed) out.push(...operandTargets(a, o, dirs, seen));
  return out;
}

/**
 * A write or delete whose path is known only when it runs (`> $f`, `> ~+/x`, what an archive or a
 * patch names): without a sandbox it may reach a protected path (.git/config, .git/hooks…) or one
 * a rule denies, so it is asked even where a rule or `defaults: allow` would allow it; only a
 * person (or their grant) lets it run. `~+`/`~-` stay unknown: PWD and OLDPWD are variables a line may set.
 */
const HARD_ASK_WHY = 'a write to a path known only when it runs, and no OS sandbox keeps it from protected paths (.git/config…) or paths your rules deny: a person must approve it (or run under bubblewrap)';
const hardAsk = (t: PlanTarget, sandboxed: boolean): PlanTarget => (sandboxed || t.kind !== 'command' ? t : { ...t, ask_reason: HARD_ASK_WHY });

/** More folders a command line may be in than this: the rest counts as unknown. */
const MAX_FOLDERS = 32;

/**
 * Every folder the command may be in when it names a relative path: where it starts (or, for a
 * background shell, every folder earlier input may have left it in) and each `cd`/`pushd` target
 * resolved against each of those, in order — `cd a; cd b; cd ../../priv` ends in priv, which a
 * target resolved against the start alone (`../../priv` above it) did not show. null: a folder
 * known only when it runs (`cd -`, `popd`, `cd "$d"`).
 */
export function folderCandidates(cds: readonly CommandWord[], o: Pick<TargetOptions, 'cwd' | 'home' | 'cwds'>): (string | null)[] {
  const dirs: (string | null)[] = [...(o.cwds ?? [o.cwd])];
  for (const d of cds) {
    const lp = literalPath(d, o.home);
    const known = dirs.filter((x): x is string => x !== null);
    const next = lp === null ? [null] : path.isAbsolute(lp) ? [path.resolve(lp)] : known.map((b) => path.resolve(b, lp));
    for (const n of next) {
      if (dirs.includes(n)) continue;
      if (dirs.length >= MAX_FOLDERS) { if (!dirs.includes(null)) dirs.push(null); break; }
      dirs.push(n);
    }
  }
  return dirs;
}

/** A glob word without a sandbox: its literal folder is listed (and walked when a folder part is a pattern). */
function globTarget(word: CommandWord, o: TargetOptions, dirs: (string | null)[]): PlanTarget | null {
  if (word.literal) return null;
  // `a=(priv/*)`, `x=*.txt`: the value of an assignment, item by item.
  const asg = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=\(?/.exec(word.text);
  if (asg) {
    for (const item of word.text.slice(asg[0].length).replace(/\)$/, '').split(/\s+/)) {
      const t = item ? globTarget({ text: item, literal: false }, o, dirs) : null;
      if (t) return t;
    }
    return null;
  }
  const w = { ...word, text: word.text.replace(/\$\{[^}]*\}/g, '$V') };
  const at = w.text.search(/[*?[]/);
  if (at < 0) return null;
  const label = `glob ${w.text}`;
  const prefix = w.text.slice(0, at);
  if (/[$`~{\\'"]/.test(prefix)) return denyPart(label, 'a glob under a path known only when it runs, and no OS sandbox hides what your path rules deny');
  const dir = prefix.slice(0, prefix.lastIndexOf('/') + 1) || '.';
  const deep = w.text.slice(at).includes('/');
  for (const base of path.isAbsolute(dir) ? [o.cwd] : dirs) {
    if (base === null) return denyPart(label, 'a glob after a cd to a folder known only when it runs, and no OS sandbox hides what your path rules deny');
    const abs = path.resolve(base, dir);
    const rel = relInRoots(o.workspace.roots, abs);
    if (rel === null) continue;
    const v = o.pathRule!(rel, true) ?? (deep ? o.rulesBelow?.(rel, abs, true) ?? null : null);
    if (v) return denyPart(label, `the glob lists ${deep ? 'folders below ' : ''}${dir}, and a policy rule ${v.decision === 'deny' ? 'denies' : 'asks about'} paths there (${v.rule}) while no OS sandbox hides them; name the files you need`);
  }
  return null;
}

/**
 * Committed content (git log -p, show, archive, grep…): the object store holds a copy of every
 * committed path, and no sandbox mask reaches inside it. With user path rules for commands the
 * call must name `-- <paths>` that no rule covers or reaches below; the whole history is refused.
 */
async function historyTarget(f: FileRef, o: TargetOptions, dirs: (string | null)[]): Promise<PlanTarget | null> {
  if (!o.pathRule) return null;
  const label = `${f.via} shows committed content of ${f.word.text || 'every path'}`;
  const refuse = (v: NonNullable<PathVerdict>) => denyPart(label, `the repository's history holds copies of paths a policy rule ${v.decision === 'deny' ? 'denies to commands' : 'asks about'} (${v.rule}); limit it with \`-- <paths>\` your rules allow`);
  const whole = o.rulesBelow?.('', o.workspace.primary, true) ?? { decision: 'deny' as const, rule: 'path rules for commands' };
  if (f.word.text === '' || !f.word.literal) return whole ? refuse(whole) : null;
  for (const base of path.isAbsolute(f.word.text) ? [o.cwd] : dirs) {
    if (base === null) return whole ? refuse(whole) : null;
    const abs = path.resolve(base, f.word.text);
    const rel = relInRoots(o.workspace.roots, abs);
    if (rel === null) continue;
    const v = o.pathRule(rel, true) ?? o.rulesBelow?.(rel, abs, true) ?? null;
    if (!v) continue;
    if (v.decision === 'deny' || o.pathRule(rel, true) === null) return refuse(v);
    // The pathspec is an asked path: judged as a read of it, so the ask rule asks (a command part could be allowed by a tool-wide rule).
    try {
      return { kind: 'path', access: 'read', path: await o.workspace.resolve(abs, 'read') };
    } catch (e) {
      if (!isToolError(e)) throw e;
      return refuse(v);
    }
  }
  return null;
}

function belowTarget(label: string, v: PathVerdict): PlanTarget | null {
  if (!v) return null;
  return v.decision === 'deny'
    ? denyPart(label, `a policy rule denies paths inside it to commands (${v.rule}); moving, deleting or linking the folder would carry them out`)
    : askPart(`${label} (paths inside it: ${v.rule})`);
}

async function fileTarget(f: FileRef, abs: string, writes: boolean, o: TargetOptions): Promise<PlanTarget | null> {
  const label = `${f.via} ${f.access} ${f.word.text}`;
  const sandboxed = o.sandboxed ?? o.privateTmp;
  if (/^\/dev\/(tcp|udp)\//.test(abs) && !o.network) return denyPart(label, 'bash network redirection, and the network is off for this command (sandbox.network / a rule with network: true)');
  if (!sandboxed && PROC_SECRET.test(abs)) return denyPart(label, `${abs} exposes a process's environment or memory, and no OS sandbox isolates it`);
  // Every path is judged as what it may show: `grep -r x d`, `ls d`, `cd d`, `cp -r d …` see everything inside.
  const asDir = true;
  // With the call's gate on the workspace, resolve() records a path an ask rule covers and the
  // pipeline asks about it naming that rule: one answer for every spelling and state of the path.
  const gated = !!o.workspace.gate;
  const own = (t: PlanTarget | null) => (t && gated && t.kind === 'command' && !t.deny_reason ? null : t);
  const lexical = own(ruleTarget(label, relInRoots(o.workspace.roots, abs), asDir, o));
  if (lexical) return lexical;
  // Moving, deleting or linking a folder carries what a rule covers below it (`mv a b` with
  // `a/b/hidden/**` denied) out from under the rule.
  const moves = f.access === 'delete' || f.access === 'link';
  const below = (rel: string | null, at: string) => (moves && rel !== null ? belowTarget(label, o.rulesBelow?.(rel, at, false) ?? null) : null);
  const lexBelow = below(relInRoots(o.workspace.roots, abs), abs);
  if (lexBelow) return lexBelow;
  try {
    const rp = await o.workspace.resolve(abs, f.access === 'delete' || f.access === 'link' ? (f.access === 'delete' ? 'delete' : 'write') : writes ? 'write' : f.access === 'list' || f.access === 'walk' ? 'list' : 'read');
    const real = own(ruleTarget(label, rp.relToRoot, asDir, o)) ?? below(rp.relToRoot, rp.abs);
    if (real) return real;
    if (f.access === 'delete' && rp.kind === 'dir' && o.protectedInside && await o.protectedInside(rp.abs)) {
      return denyPart(label, `${rp.display} holds protected paths (paths.protect: a .git, .vscode…); no command may delete or move it`);
    }
    if (!sandboxed && o.strictReads && (f.access === 'search' || f.access === 'walk' || (f.access === 'read' && rp.kind === 'dir'))) {
      return denyPart(label, 'a walk or search of a folder, and your path rules deny some paths to commands while no OS sandbox hides them; name the files you need');
    }
    if (f.access === 'search' && !sandboxed) return askPart(`${f.via} reads every file under ${rp.display} (secrets included: no OS sandbox hides them)`);
    return writes ? { kind: 'path', access: f.access === 'delete' ? 'delete' : 'write', path: rp } : null;
  } catch (e) {
    if (!isToolError(e)) throw e;
    // A path an ask rule covers shows its state (a FIFO, a dangling link) only once approved: the
    // pipeline asks about every path resolve() admitted under an ask rule.
    if (!isPolicyRefusal(e) && o.workspace.gate?.asked.some((a) => a.abs === abs)) return null;
    if (e.code === 'PathTraversalBlocked') {
      if (o.workspace.rules.isDenied(null, abs)) return denyPart(label, `${abs} is on the secrets deny list (paths.deny)`);
      if ((f.access === 'read' || f.access === 'search' || f.access === 'link') && !sandboxed) return askPart(`${f.via} reads ${abs}, outside the workspace, and no OS sandbox hides the secrets there`);
      if (!writes) return null;
      if (o.privateTmp && (abs === '/tmp' || abs.startsWith('/tmp/'))) return null;
      return denyPart(label, `${abs} is outside the workspace; commands may only write inside it${o.privateTmp ? ' (or in the private /tmp)' : ''}`);
    }
    return denyPart(label, e.message);
  }
}
