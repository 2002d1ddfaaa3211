import { globStartsBelow, type AskedPath, type GateVerdict, type PathGate } from '../workspace/path-gate.js';
import { ruleName, rulePathCovers } from './evaluate.js';
import type { CompiledPolicy, CompiledRule } from './types.js';

/**
 * The policy's deny and ask path rules for one tool, as a PathGate: what `Workspace.resolve`
 * asks before it touches the file system, and what every walk asks of each entry. The same
 * matching as `evaluate` (rulePathCovers), so the gate and the verdict cannot disagree.
 */
export class PolicyPathGate implements PathGate {
  readonly asked: AskedPath[] = [];
  readonly asks: boolean;

  private constructor(readonly tool: string, private readonly rules: CompiledRule[], private readonly bases: readonly string[]) {
    this.asks = rules.some((r) => r.decision === 'ask');
  }

  /** null when no deny/ask rule for this tool names a path (nothing to judge: walks pay nothing). */
  static for(tool: string, policy: CompiledPolicy, bases: readonly string[] = []): PolicyPathGate | undefined {
    const rules = policy.rules.filter((r) => r.path && !r.pathTarget && !r.command && !r.domain && r.decision !== 'allow' && r.tool(tool));
    return rules.length ? new PolicyPathGate(tool, rules, bases) : undefined;
  }

  /**
   * The path globs of every deny rule for this tool (or `*`): what the sandbox masks for a command,
   * as it masks paths.deny — static analysis of a command line cannot see `cat p*` or `grep -r`.
   */
  static denyPatterns(tool: string, policy: CompiledPolicy): string[] {
    return policy.rules.filter((r) => r.decision === 'deny' && r.path && !r.pathTarget && !r.command && !r.domain && r.tool(tool)).flatMap((r) => r.pathPatterns ?? []);
  }

  denyBelow(rel: string, abs: string): GateVerdict | null {
    const r = this.rules.find((x) => x.decision === 'deny' && x.pathPatterns?.some((g) => globStartsBelow(g, rel, abs)));
    return r ? { decision: 'deny', rule: ruleName(r) } : null;
  }

  judge(rel: string | null, abs: string, asDir: boolean): GateVerdict | null {
    let best: CompiledRule | undefined;
    for (const r of this.rules) {
      if (best && (best.decision === 'deny' || r.decision === 'ask')) continue;
      if (rulePathCovers(r.path!, rel, abs, asDir, this.bases)) best = r;
    }
    return best ? { decision: best.decision as 'deny' | 'ask', rule: ruleName(best) } : null;
  }
}
