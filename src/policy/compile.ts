import path from 'node:path';
import picomatch from 'picomatch';
import type { Permission } from '../core/types.js';
import { compileGlobs, PathRules, withRealBases } from '../workspace/path-rules.js';
import { userPrivatePaths } from '../user-state.js';
import { exampleWords, matchesAnyCommand, ruleCoversExample, splitCommandPattern, type ExamplePart } from './match-command.js';
import { BUILTIN_PROFILES, isBuiltinProfile } from './profiles.js';
import type { PolicyData, RuleData } from './schema.js';
import type { CompiledPolicy, CompiledRule } from './types.js';
import { checkArgv, customInput, CustomToolError } from '../tools/custom/args.js';

export class PolicyError extends Error {
  constructor(message: string, readonly line?: number, readonly key?: string) {
    super(message);
    this.name = 'PolicyError';
  }
}

const list = (v: string | string[] | undefined) => (v === undefined ? undefined : Array.isArray(v) ? v : [v]);

/** `*.example.com` covers sub-domains (not example.com itself); anything else is exact. Case-insensitive. */
export function compileDomains(patterns: string[]): (host: string) => boolean {
  const exact = new Set<string>();
  const suffixes: string[] = [];
  for (const p of patterns.map((x) => x.toLowerCase().replace(/\.$/, ''))) {
    if (p.startsWith('*.')) suffixes.push(p.slice(1));
    else exact.add(p);
  }
  return (host) => {
    const h = host.toLowerCase().replace(/\.$/, '');
    return exact.has(h) || suffixes.some((s) => h.endsWith(s) && h.length > s.length);
  };
}

/** Gitignore-style: a rule naming a folder (`dist`, `secrets/`, `src/*`) covers everything inside it. */
function coversPathOrAncestor(match: (p: string) => boolean): (rel: string) => boolean {
  return (rel) => {
    if (match(rel)) return true;
    for (let i = rel.lastIndexOf('/'); i > 0; i = rel.lastIndexOf('/', i - 1)) if (match(rel.slice(0, i))) return true;
    return false;
  };
}

function ruleText(r: RuleData): string {
  const q = [`tool: ${r.tool}`];
  if (r.path) q.push(`path: ${JSON.stringify(r.path)}`);
  if (r.command) q.push(`command: ${JSON.stringify(r.command)}`);
  if (r.domain) q.push(`domain: ${JSON.stringify(r.domain)}`);
  q.push(`decision: ${r.decision}`);
  return `{${q.join(', ')}}`;
}

export function compileRule(r: RuleData, index: number, source: CompiledRule['source'], line?: number, examples?: (text: string) => ExamplePart[]): CompiledRule {
  const where = `${source === 'policy' ? 'rules' : source}[${index}]`;
  // A target is a path, a command or a domain, never two: such a rule would silently match nothing.
  const qualifiers = (['path', 'command', 'domain'] as const).filter((k) => r[k] !== undefined);
  if (qualifiers.length > 1) {
    throw new PolicyError(`${where}: a rule takes one of path, command or domain, not ${qualifiers.join(' and ')}; split it into one rule each`, line, qualifiers[1]);
  }
  const commands = list(r.command)?.map(splitCommandPattern);
  if (commands?.some((c) => c.length === 0)) throw new PolicyError(`${where}: an empty command pattern matches nothing`, line, 'command');
  if ((r.match || r.not_match) && !commands) throw new PolicyError(`${where}: match/not_match examples need a command`, line, 'match');
  for (const ex of r.match ?? []) {
    if (!(examples ? ruleCoversExample(commands!, r.decision, examples(ex)) : matchesAnyCommand(commands!, exampleWords(ex)))) throw new PolicyError(`${where}: example "${ex}" in match does not match the rule's command`, line, 'match');
  }
  for (const ex of r.not_match ?? []) {
    if (examples ? ruleCoversExample(commands!, r.decision, examples(ex)) : matchesAnyCommand(commands!, exampleWords(ex))) throw new PolicyError(`${where}: example "${ex}" in not_match matches the rule's command`, line, 'not_match');
  }
  const paths = list(r.path);
  return {
    index, source, line,
    text: ruleText(r),
    decision: r.decision,
    tool: picomatch(r.tool, { nocase: false }),
    toolOnly: !paths && !commands && !r.domain,
    // deny/ask cover what is inside a folder they name; an allow lifts no more than it matches.
    path: paths ? (r.decision === 'allow' ? compileGlobs(paths) : coversPathOrAncestor(compileGlobs(paths))) : undefined,
    pathPatterns: paths && withRealBases(paths),
    command: commands,
    domain: r.domain ? compileDomains(list(r.domain)!) : undefined,
    network: r.network,
  };
}

export interface CompileOptions {
  origin: string;
  /** CLI overrides (the CLI flag wins). */
  profile?: string;
  mode?: 'interactive' | 'ci';
  /** Absolute paths protected whatever the rules say: the state dir and the policy file. */
  protectedAbs?: string[];
  /** Absolute paths no tool may touch (default: the user's toolgate state and runtime dir). */
  deniedAbs?: string[];
  lines?: (keyPath: (string | number)[]) => number | undefined;
  /** Parses a rule's match/not_match example with the shell parser (SPEC §7: checked at load). */
  commandExamples?: (text: string) => ExamplePart[];
}

export function compilePolicy(data: PolicyData, opts: CompileOptions): CompiledPolicy {
  const profileName = opts.profile ?? data.profile;
  let permissions: readonly Permission[];
  const rules: CompiledRule[] = [];
  if (isBuiltinProfile(profileName)) {
    permissions = BUILTIN_PROFILES[profileName];
  } else {
    const p = data.profiles[profileName];
    if (!p) {
      const known = ['readonly', 'edit', 'full', ...Object.keys(data.profiles)].join(', ');
      throw new PolicyError(`profile "${profileName}" is not defined; use one of ${known}`, opts.lines?.(['profile']), 'profile');
    }
    const base = BUILTIN_PROFILES[p.base];
    permissions = p.permissions ? base.filter((x) => p.permissions!.includes(x)) : base;
    p.rules.forEach((r, i) => rules.push(compileRule(r, i, 'profile', opts.lines?.(['profiles', profileName, 'rules', i]), opts.commandExamples)));
  }
  data.rules.forEach((r, i) => rules.push(compileRule(r, i, 'policy', opts.lines?.(['rules', i]), opts.commandExamples)));
  checkCustomTools(data, opts.lines);
  const protectedAbs = (opts.protectedAbs ?? []).map((p) => path.resolve(p));
  return {
    data,
    origin: opts.origin,
    profile: profileName,
    permissions: new Set(permissions),
    mode: opts.mode ?? data.mode,
    rules,
    pathRules: PathRules.withDefaults(data.paths.deny, data.paths.protect, protectedAbs, data.paths.allow_hardlinks, opts.deniedAbs ?? userPrivatePaths()),
  };
}

/** Custom tools are checked at load: placeholders as whole words, patterns that compile, defaults that fit. */
function checkCustomTools(data: PolicyData, lines: CompileOptions['lines']): void {
  for (const [name, cfg] of Object.entries(data.tools)) {
    try {
      checkArgv(cfg, `tools.${name}`);
      customInput(cfg, `tools.${name}`);
    } catch (e) {
      if (!(e instanceof CustomToolError)) throw e;
      const keyPath = e.key.split('.');
      throw new PolicyError(`${e.key}: ${e.message}`, lines?.(keyPath), e.key);
    }
  }
}
