import type { PlanTarget, Risk } from '../core/types.js';
import { INSIDE, otherRels } from '../workspace/path-rules.js';
import { matchesAnyCommand } from './match-command.js';
import type { PolicyData } from './schema.js';
import type { CompiledPolicy, CompiledRule, Decision, TargetVerdict, ToolFacts, Verdict } from './types.js';

const STRENGTH: Record<Decision, number> = { allow: 0, ask: 1, deny: 2 };

export function stricter(a: Decision, b: Decision): Decision {
  return STRENGTH[a] >= STRENGTH[b] ? a : b;
}

/** Built-in: low: allow, medium: ask, high: ask (SPEC §7); the policy's `defaults:` may change them. */
export function riskDefault(risk: Risk, defaults?: PolicyData['defaults']): Decision {
  if (typeof defaults === 'string') return defaults;
  if (defaults) return defaults[risk];
  return risk === 'low' ? 'allow' : 'ask';
}

export function describeTarget(t: PlanTarget): string {
  if (t.kind === 'path') return `${t.access} ${t.path.display}`;
  if (t.kind === 'command') return t.text;
  return t.host;
}

/**
 * A path rule's glob against one spelling of a path: relative to its root, and absolute (a rule
 * written `/abs/dir/**` matches there). `asDir`: also "something inside it".
 */
export function rulePathCovers(match: (p: string) => boolean, rel: string | null, abs: string, asDir = false, bases: readonly string[] = []): boolean {
  const a = abs.slice(1);
  if (match(a) || (asDir && match(`${a}/${INSIDE}`))) return true;
  // One spelling per root that holds the path (nested roots): the rule holds under each.
  for (const r of [rel, ...otherRels(abs, bases, rel)]) {
    if (r !== null && (match(r) || (asDir && match(r === '' ? INSIDE : `${r}/${INSIDE}`)))) return true;
  }
  return false;
}

function ruleCovers(rule: CompiledRule, tool: string, t: PlanTarget | null): boolean {
  if (!rule.tool(tool)) return false;
  if (rule.toolOnly) return true;
  if (!t) return false;
  if (t.kind === 'path') {
    if (rule.pathTarget) return rule.pathTarget(t);
    if (!rule.path || rule.command || rule.domain) return false;
    // deny and ask also hold on the path as requested (a link named in a rule is covered as its target is),
    // and under every root that holds it (nested roots).
    const strict = rule.decision !== 'allow';
    const bases = strict ? t.path.bases : undefined;
    if (rulePathCovers(rule.path, t.path.relToRoot, t.path.abs, false, bases)) return true;
    const lex = t.path.lexical;
    return strict && !!lex && rulePathCovers(rule.path, lex.relToRoot, lex.abs, false, bases);
  }
  if (t.kind === 'command') return !!rule.command && !rule.path && !rule.domain && (rule.commandTarget ? rule.commandTarget(t.words) : matchesAnyCommand(rule.command, t.words, rule.decision !== 'allow') || (rule.decision !== 'allow' && !!t.asWritten && matchesAnyCommand(rule.command, t.asWritten, true)));
  return !!rule.domain && !rule.path && !rule.command && rule.domain(t.host);
}

function judgeTarget(tool: ToolFacts, t: PlanTarget | null, rules: CompiledRule[], defaults?: PolicyData['defaults']): TargetVerdict {
  const target = t ? describeTarget(t) : tool.name;
  const kind = t ? t.kind : 'tool';
  if (t?.kind === 'command' && t.deny_reason) {
    return { target, kind, decision: 'deny', rule: t.deny_reason, source: 'parser' };
  }
  let best: CompiledRule | undefined;
  for (const r of rules) {
    if (!ruleCovers(r, tool.name, t)) continue;
    // deny beats ask beats allow whatever the order; among equals the first one is named.
    if (!best || STRENGTH[r.decision] > STRENGTH[best.decision]) best = r;
  }
  // A part that runs code the analysis cannot see into (sed's `e`, awk's system(), git -c …), allowed
  // only by a rule that names no command: while deny rules on commands exist, it asks instead — the
  // code may run what they deny.
  if (best?.decision === 'allow' && !best.command && t?.kind === 'command' && t.asWritten && rules.some((r) => r.decision === 'deny' && r.command && r.tool(tool.name))) {
    return { target, kind, decision: 'ask', rule: `${ruleName(best)}, but this part runs code a command deny rule cannot see into`, source: 'policy' };
  }
  // A hard ask (a write to a path known only when it runs, without a sandbox): no rule or default allows it, a person's grant may.
  if (t?.kind === 'command' && t.ask_reason && (best ? best.decision === 'allow' && best.source !== 'grant' : riskDefault(tool.risk, defaults) === 'allow')) {
    return { target, kind, decision: 'ask', rule: t.ask_reason, source: best ? 'policy' : 'default' };
  }
  if (best) return { target, kind, decision: best.decision, rule: ruleName(best), source: best.source === 'grant' ? 'grant' : 'policy' };
  // The network is off unless a rule names the domain.
  if (t?.kind === 'domain') return { target, kind, decision: 'deny', rule: 'network is off by default: no rule allows this domain', source: 'default' };
  const fallback = riskDefault(tool.risk, defaults);
  if (fallback === 'allow' && t?.kind === 'command' && t.asWritten && rules.some((r) => r.decision === 'deny' && r.command && r.tool(tool.name))) {
    return { target, kind, decision: 'ask', rule: `default for ${tool.risk} risk, but this part runs code a command deny rule cannot see into`, source: 'default' };
  }
  return { target, kind, decision: fallback, rule: `default for ${tool.risk} risk`, source: 'default' };
}

export function ruleName(r: CompiledRule): string {
  const where = r.source === 'policy' ? `rules[${r.index}]` : r.source === 'profile' ? `profile rules[${r.index}]` : 'session grant';
  return `${where}${r.line ? ` (line ${r.line})` : ''} ${r.text}`;
}

/**
 * The policy gate: a pure function of the planned call and the compiled policy. Every
 * target (path, command part, domain) is judged on its own; the strictest verdict wins.
 */
export function evaluate(tool: ToolFacts, targets: PlanTarget[], policy: CompiledPolicy, extraRules: CompiledRule[] = []): Verdict {
  const missing = tool.permissions.filter((p) => !policy.permissions.has(p));
  if (missing.length > 0) {
    const part: TargetVerdict = {
      target: tool.name, kind: 'tool', decision: 'deny',
      rule: `profile "${policy.profile}" does not include ${missing.join(', ')}`, source: 'profile',
    };
    return { decision: 'deny', rule: part.rule, source: 'profile', parts: [part] };
  }
  const rules = extraRules.length ? [...policy.rules, ...extraRules] : policy.rules;
  const parts = targets.length === 0
    ? [judgeTarget(tool, null, rules, policy.data.defaults)]
    : targets.map((t) => judgeTarget(tool, t, rules, policy.data.defaults));
  let worst = parts[0]!;
  for (const p of parts) if (STRENGTH[p.decision] > STRENGTH[worst.decision]) worst = p;
  return { decision: worst.decision, rule: worst.rule, source: worst.source, parts };
}

/** A tool the policy denies outright (whatever its arguments) is not listed at all. */
export function deniedOutright(tool: ToolFacts, policy: CompiledPolicy): boolean {
  if (tool.permissions.some((p) => !policy.permissions.has(p))) return true;
  return policy.rules.some((r) => r.toolOnly && r.decision === 'deny' && r.tool(tool.name));
}
