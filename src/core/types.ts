import type { z } from 'zod';
import type { Logger } from 'pino';
import type { Workspace } from '../workspace/workspace.js';
import type { CompiledPolicy } from '../policy/types.js';
import type { Session } from './session.js';

export type Risk = 'low' | 'medium' | 'high';
/** `upstream`: calls a tool of another MCP server mounted behind the gate (SPEC §12). `git.write`: a git command that changes a repository. */
export type Permission = 'fs.read' | 'fs.write' | 'fs.delete' | 'proc.exec' | 'net.connect' | 'upstream' | 'git.write';
export type Status = 'ok' | 'partial' | 'error';

/** A path after the sandbox has resolved and admitted it. */
export interface ResolvedPath {
  /** The string the caller gave. */
  input: string;
  /** Absolute real path (symlinks resolved; for a path that does not exist yet, its real parent joined with the rest). */
  abs: string;
  /** What results show: relative to the first root with `/` separators, or absolute for a path under another root. */
  display: string;
  /** Index of the root that contains it. */
  rootIndex: number;
  /** Relative to its root with `/` separators, '' for the root itself: what policy path globs match. */
  relToRoot: string;
  exists: boolean;
  kind: 'file' | 'dir' | 'other' | 'missing';
  /** The requested path read lexically, when it differs from `abs` (a link): deny and ask rules match it too. */
  lexical?: { relToRoot: string; abs: string };
  /** The roots rules are relative to, when they nest (PathRules.bases): deny and ask rules match under each. */
  bases?: readonly string[];
}

export type PathAccess = 'read' | 'list' | 'search' | 'write' | 'create' | 'delete';

/** One word of a parsed simple command, after quote removal. */
export interface CommandWord {
  text: string;
  /** False when the word still holds `$`, a backtick, a glob or `~`: it cannot satisfy a literal allow token. */
  literal: boolean;
  /** Set when bash may make several words of it (`$x` unquoted, `"$@"`, `"${a[@]}"`, `$(…)`). */
  split?: boolean;
}

export type PlanTarget =
  | { kind: 'path'; access: PathAccess; path: ResolvedPath }
  | { kind: 'command'; words: CommandWord[]; text: string; /** set when the parser itself refuses the part (eval, parse error…) */ deny_reason?: string; network?: boolean;
      /** The words as written when `words` hides them (code a prefix rule must not allow): deny and ask rules still catch them. */ asWritten?: CommandWord[];
      /** Set on a part that must be asked (never allowed by a rule or the defaults, only by a person's grant): why. */ ask_reason?: string }
  | { kind: 'domain'; host: string; url: string };

/** What a call will do, worked out before it runs: the gate and the audit judge this, never raw strings. */
export interface Plan {
  targets: PlanTarget[];
  /** One line for a human: what will happen. */
  summary: string;
  /**
   * Args for the `toolgate call … --approve` replay when they must differ from the call's
   * (a write tool adds the expected_sha256 of what this session read: a fresh CLI session has no reads).
   */
  replay_args?: Record<string, unknown>;
}

export interface Limits {
  timeout_ms: number;
  output_bytes: number;
  output_lines: number;
}

export interface SpillRef {
  storage_ref: string;
  sha256: string;
}

export interface ToolContext {
  workspace: Workspace;
  policy: CompiledPolicy;
  session: Session;
  signal: AbortSignal;
  callId: string;
  traceId: string;
  /** The client's JSON-RPC id of this tools/call (requests sent on its behalf name it). */
  requestId?: string | number;
  limits: Limits;
  log: Logger;
  /** Tell the client how far a long call has got (progress notification when it gave a token). */
  progress(message: string, progress?: number, total?: number): void;
  /** Send a logging notification to the client (used by display). */
  notify(level: 'info' | 'notice' | 'warning' | 'error', data: unknown): Promise<void>;
  /** Write full output to the state dir and return where it is. */
  spill(content: string | Buffer, ext?: string): Promise<SpillRef>;
}

export type PlanContext = Pick<ToolContext, 'workspace' | 'policy' | 'session' | 'signal' | 'limits'>;

export interface ToolResult<D> {
  data: D;
  /** Short summary a model can read on its own; never a dump. */
  text: string;
  status?: 'ok' | 'partial';
  stats?: Record<string, number>;
  files_changed?: string[];
  commands_run?: string[];
  storage_ref?: string;
  sha256?: string;
  /** Hashes of files touched (for the audit). */
  hashes?: Record<string, string>;
  /** Facts for the audit record only (e.g. the pid of a background process); never sent to the client. */
  audit?: Record<string, unknown>;
  /** Extra MCP content blocks (an image). */
  content?: ExtraContent[];
}

/** MCP content blocks beside the envelope's text block (an image; an upstream's own text). */
export type ExtraContent = { type: 'image'; data: string; mimeType: string } | { type: 'text'; text: string };

export interface Annotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export interface ToolSpec<I extends z.ZodObject, D> {
  name: string;
  version: string;
  title: string;
  description: string;
  input: I;
  output: z.ZodType<D>;
  risk: Risk;
  permissions: Permission[];
  side_effects: string;
  annotations: Annotations;
  /** Default time limit for one call; the policy's limits.timeout_ms applies when absent. */
  timeout_ms?: number;
  /** Old argument names still accepted (old -> new), with a warning in the result. */
  aliases?: Record<string, string>;
  /**
   * Argument shapes other agents use that a rename cannot express (read_file's
   * start_line/end_line → offset/limit): runs after the renames, before validation; pushes a
   * warning for what it changed; throws ToolError('InvalidArguments') on values it cannot map.
   */
  adaptArgs?: (args: Record<string, unknown>, warnings: string[]) => Record<string, unknown>;
  /**
   * Resolve only: which paths, commands and domains the call touches (Workspace.resolve: realpath,
   * containment, the deny lists and the tool's deny rules). Anything that looks at the state of
   * an admitted path (exists? a folder? read before?) belongs in `inspect` or `execute`, which run
   * after the gate and the approval.
   */
  plan(args: z.output<I>, ctx: PlanContext): Promise<Plan> | Plan;
  /** Optional: state checks run after the gate and the approval, before execute. */
  inspect?(args: z.output<I>, plan: Plan, ctx: PlanContext): Promise<void> | void;
  execute(args: z.output<I>, plan: Plan, ctx: ToolContext): Promise<ToolResult<D>>;
}
