import path from 'node:path';
import type { CompiledPolicy } from '../policy/types.js';
import { ruleName } from '../policy/evaluate.js';
import { globStartsBelow, literalBase } from '../workspace/path-gate.js';
import { compileGlobs, withRealBases } from '../workspace/path-rules.js';

/** A deny or ask rule on paths, for commands: the policy's rules, and its own `paths: deny:` list. */
interface PathRuleLike { decision: 'deny' | 'ask'; path: (rel: string) => boolean; patterns: readonly string[]; name: string }

const lists = new WeakMap<object, PathRuleLike | null>();

/**
 * The policy's `paths: deny:` list (the user's patterns, not the built-in secrets) as a deny rule
 * for commands: without a sandbox its paths must be judged in every word, as a deny rule's are.
 */
function denyList(policy: Partial<Pick<CompiledPolicy, 'data'>>): PathRuleLike | null {
  const deny = policy.data?.paths?.deny ?? [];
  if (deny.length === 0 || !policy.data) return null;
  let r = lists.get(policy.data);
  if (r === undefined) {
    const match = compileGlobs(deny);
    // A pattern naming a folder covers what is inside it, as a rule's does.
    const covers = (rel: string) => { for (let i = rel.length; i > 0; i = rel.lastIndexOf('/', i - 1)) if (match(rel.slice(0, i))) return true; return false; };
    r = { decision: 'deny', path: covers, patterns: withRealBases(deny), name: `paths.deny ${JSON.stringify(deny)}` };
    lists.set(policy.data, r);
  }
  return r;
}

function pathRulesFor(policy: Pick<CompiledPolicy, 'rules'> & Partial<Pick<CompiledPolicy, 'data'>>, tool: string, grants: boolean): PathRuleLike[] {
  const out: PathRuleLike[] = policy.rules.filter((r) => r.decision !== 'allow' && r.path && (grants || !r.pathTarget) && !r.command && !r.domain && r.tool(tool))
    .map((r) => ({ decision: r.decision as 'deny' | 'ask', path: r.path!, patterns: r.pathPatterns ?? [], name: ruleName(r) }));
  const list = denyList(policy);
  return list ? [...out, list] : out;
}

/** How the user's path rules judge one path a command reads, lists or runs in. */
export type PathVerdict = { decision: 'deny' | 'ask'; rule: string } | null;

/** A name no rule glob matches except by a wildcard: "does the rule cover what is inside this folder?" */
const PROBE = '\u2400toolgate-probe\u2400';

/**
 * The user's path rules (`rules:` with a `path`, for run_command or `*`) as a function of a
 * path inside a root. A folder is covered when the rule covers it or anything inside it
 * (`priv/**` covers `cd priv`): listing a folder shows what the rule hides.
 */
export function commandPathRules(policy: Pick<CompiledPolicy, 'rules'> & Partial<Pick<CompiledPolicy, 'data'>>, tool = 'run_command'): ((rel: string, asDir: boolean) => PathVerdict) | undefined {
  const rules = pathRulesFor(policy, tool, true);
  if (rules.length === 0) return undefined;
  return (rel, asDir) => {
    let best: PathVerdict = null;
    for (const r of rules) {
      const hit = r.path(rel) || (asDir && r.path(rel === '' ? PROBE : `${rel}/${PROBE}`));
      if (!hit) continue;
      if (r.decision === 'deny') return { decision: 'deny', rule: r.name };
      best ??= { decision: 'ask', rule: r.name };
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
export function commandRulesBelow(policy: Pick<CompiledPolicy, 'rules'> & Partial<Pick<CompiledPolicy, 'data'>>, tool = 'run_command'): ((rel: string, abs: string, anywhere: boolean) => PathVerdict) | undefined {
  const rules = pathRulesFor(policy, tool, false);
  if (rules.length === 0) return undefined;
  return (rel, abs, anywhere) => {
    let best: PathVerdict = null;
    for (const r of rules) {
      const hit = r.patterns.some((g) => globStartsBelow(g, rel, abs) || (anywhere && literalBase(g.replace(/^\/+/, '')) === ''));
      if (!hit) continue;
      if (r.decision === 'deny') return { decision: 'deny', rule: r.name };
      best ??= { decision: 'ask', rule: r.name };
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
