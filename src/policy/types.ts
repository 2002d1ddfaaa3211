import type { CommandWord, Permission, Risk } from '../core/types.js';
import type { PathRules } from '../workspace/path-rules.js';
import type { Decision, PolicyData } from './schema.js';

export type { Decision };

/** A rule ready to match: globs and prefixes compiled once, at load. */
export interface CompiledRule {
  index: number;
  /** Where it came from, for "the rule that made it". */
  source: 'policy' | 'profile' | 'grant';
  /** 1-based line in the policy file, when known. */
  line?: number;
  text: string;
  decision: Decision;
  tool: (name: string) => boolean;
  /** Rule has no path/command/domain qualifier: it covers the whole tool. */
  toolOnly: boolean;
  path?: (relToRoot: string) => boolean;
  /** The rule's path globs as written (what a recursive delete checks for areas below it). */
  pathPatterns?: string[];
  /** Session grants: matched on the target itself (real path, access), not on a glob. */
  pathTarget?: (t: { access: string; path: { abs: string } }) => boolean;
  command?: string[][];
  /** Stored and session grants: the call's literal words start with exactly these (no wildcard). */
  commandTarget?: (words: CommandWord[]) => boolean;
  domain?: (host: string) => boolean;
  network?: boolean;
}

export interface CompiledPolicy {
  data: PolicyData;
  /** Where the policy came from: a file path, or "(defaults)". */
  origin: string;
  profile: string;
  permissions: ReadonlySet<Permission>;
  mode: 'interactive' | 'ci';
  rules: CompiledRule[];
  pathRules: PathRules;
}

export interface ToolFacts {
  name: string;
  risk: Risk;
  permissions: readonly Permission[];
}

export interface TargetVerdict {
  /** What was judged, for a human: a path, a command, a domain, or the tool itself. */
  target: string;
  kind: 'tool' | 'path' | 'command' | 'domain';
  decision: Decision;
  rule: string;
  source: 'profile' | 'policy' | 'default' | 'parser' | 'grant';
}

export interface Verdict {
  decision: Decision;
  /** The rule that made the decision (the strictest part's). */
  rule: string;
  source: TargetVerdict['source'];
  parts: TargetVerdict[];
}
