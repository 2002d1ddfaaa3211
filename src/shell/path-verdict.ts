import path from 'node:path';
import type { CompiledPolicy } from '../policy/types.js';
import { ruleName } from '../policy/evaluate.js';
import { globStartsBelow, literalBase } from '../workspace/path-gate.js';

/** How the user's path rules judge one path a command reads, lists or runs in. */
export type PathVerdict = { decision: 'deny' | 'ask'; rule: string } | null;

/** A name no rule glob matches except by a wildcard: "does the rule cover what is inside this folder?" */
const PROBE = '\u2400toolgate-probe\u2400';

/**
 * The user's path rules (`rules:` with a `path`, for run_command or `*`) as a function of a
 * path inside a root. A folder is covered when the rule covers it or anything inside it
 * (`priv/**` covers `cd priv`): listing a folder shows what the rule hides.
 */
export function commandPathRules(policy: Pick<CompiledPolicy, 'rules'>, tool = 'run_command'): ((rel: string, asDir: boolean) => PathVerdict) | undefined {
  const rules = policy.rules.filter((r) => r.decision !== 'allow' && r.path && !r.command && !r.domain && r.tool(tool));
  if (rules.length === 0) return undefined;
  return (rel, asDir) => {
    let best: PathVerdict = null;
    for (const r of rules) {
      const hit = r.path!(rel) || (asDir && r.path!(rel === '' ? PROBE : `${rel}/${PROBE}`));
      if (!hit) continue;
      if (r.decision === 'deny') return { decision: 'deny', rule: ruleName(r) };
      best ??= { decision: 'ask', rule: ruleName(r) };
    }
    return best;
  };
}

/**
 * The user's deny/ask path rules for commands whose glob starts strictly inside a folder
 * (`a/b/hidden/**` for `a`): moving, deleting or linking that folder, or reading its history,
 * reaches what the rule covers under another name. With `anywhere`, a glob that may match at
 * any depth (`*.key`) counts too (a folder's git history may hold such files).
 */
export function commandRulesBelow(policy: Pick<CompiledPolicy, 'rules'>, tool = 'run_command'): ((rel: string, abs: string, anywhere: boolean) => PathVerdict) | undefined {
  const rules = policy.rules.filter((r) => r.decision !== 'allow' && r.path && !r.pathTarget && !r.command && !r.domain && r.tool(tool));
  if (rules.length === 0) return undefined;
  return (rel, abs, anywhere) => {
    let best: PathVerdict = null;
    for (const r of rules) {
      const hit = (r.pathPatterns ?? []).some((g) => globStartsBelow(g, rel, abs) || (anywhere && literalBase(g.replace(/^\/+/, '')) === ''));
      if (!hit) continue;
      if (r.decision === 'deny') return { decision: 'deny', rule: ruleName(r) };
      best ??= { decision: 'ask', rule: ruleName(r) };
    }
    return best;
  };
}

/** The path of `abs` relative to the root that holds it (longest root wins), read lexically. */
export function relInRoots(roots: string[], abs: string): string | null {
  let best: string | null = null;
  let len = -1;
  for (const r of roots) {
    if ((abs === r || abs.startsWith(r.endsWith('/') ? r : `${r}/`)) && r.length > len) {
      best = path.relative(r, abs).split(path.sep).join('/');
      len = r.length;
    }
  }
  return best;
}
