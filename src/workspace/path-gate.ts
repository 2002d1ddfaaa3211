import { ToolError } from '../core/errors.js';
import type { PathAccess } from '../core/types.js';

/** A path resolve() admitted although an `ask` rule covers it. */
export interface AskedPath {
  input: string;
  access: PathAccess;
  relToRoot: string | null;
  abs: string;
}

/** What the policy's path rules say about one path for the tool being called (allow is null). */
export interface GateVerdict {
  decision: 'deny' | 'ask';
  /** The rule that made it, as the audit names it. */
  rule: string;
}

/**
 * The policy's path rules for one call's tool, asked before anything looks at the file
 * system: `Workspace.resolve` refuses a denied path (as requested, then as resolved) and
 * walks (EntryFilter, grep's DenyFilter, delete's walk) leave denied and asked entries out.
 * Built per call by the pipeline (src/policy/gate.ts); absent when no deny/ask rule names a path.
 */
export interface PathGate {
  readonly tool: string;
  /** True when an `ask` rule names a path for this tool (walks then count what they leave out). */
  readonly asks: boolean;
  /**
   * rel: relative to the root that holds the path (null outside every root); abs: its absolute
   * path. A rule covers the path, an ancestor, or — `asDir` — something inside it.
   */
  judge(rel: string | null, abs: string, asDir: boolean): GateVerdict | null;
  /**
   * A deny rule whose globs name an area strictly below `rel` (their literal base lies inside
   * it): what a recursive delete of `rel` would reach whatever exists there. Judged on the
   * rule's text alone, so the answer does not tell whether anything is there.
   */
  denyBelow(rel: string, abs: string): GateVerdict | null;
  /** Paths resolve() admitted although an `ask` rule covers them (the pipeline asks before revealing their state). */
  readonly asked: AskedPath[];
}

/**
 * Spill files (`<state>/runs/<run>/observations/*`) are readable only by the session that got
 * their storage_ref. `blocks(abs)` is true for any other path under a runs folder.
 */
export interface SpillGuard {
  blocks(abs: string): boolean;
  /** Text every path blocks() refuses holds (no "/" in it): a path without it is never blocked. */
  readonly needle: string;
  /** The runs folders themselves (a command's sandbox masks them: its own output is captured outside). */
  readonly dirs: readonly string[];
}

/**
 * The refusal for a path a rule denies: the same code, message and details whether the path
 * exists, is a file, a folder, a link or nothing — it names only what the caller gave.
 */
export function ruleRefusal(tool: string, input: string, v: GateVerdict): ToolError {
  return new ToolError('ToolNotAllowed', `The policy denies this ${tool} call on ${input} (${v.rule}). Leave that path out or ask the user to change the policy.`,
    { details: { path: input, rule: v.rule } });
}

export function secretsRefusal(input: string): ToolError {
  return new ToolError('PathDenied', `${input} is on the secrets deny list (paths.deny); no tool may read, list, search or write it.`,
    { details: { path: input, list: 'deny' } });
}

export function spillRefusal(input: string): ToolError {
  return new ToolError('PathDenied', `${input} is saved output that belongs to another session or call; read only the storage_ref your own call returned.`,
    { details: { path: input, list: 'spills' } });
}

/** The literal folder a glob starts with ('' when it may match at any depth). */
export function literalBase(glob: string): string {
  let base = '';
  for (const seg of glob.split('/')) {
    if (/[*?[\]{}()!+@]/.test(seg)) break;
    base = base === '' ? seg : `${base}/${seg}`;
  }
  return base === glob && !glob.includes('/') ? '' : base;
}

/**
 * True when a glob's literal base lies strictly inside the folder. A glob written with a leading
 * "/" is tried both ways, as the rules match it: rooted at the root and as an absolute path.
 */
export function globStartsBelow(glob: string, rel: string, abs: string): boolean {
  const g = glob.replace(/\/+$/, '');
  const rooted = g.startsWith('/');
  const base = literalBase(rooted ? g.replace(/^\/+/, '') : g);
  if (base === '' && !(rooted && g.includes('/', 1))) return false;
  const inside = (b: string, dir: string) => b !== '' && (dir === '' ? true : b.startsWith(`${dir}/`));
  return inside(base, rel) || (rooted && inside(base, abs.replace(/^\/+/, '')));
}
