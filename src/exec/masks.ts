import type { ToolContext } from '../core/types.js';
import { commandPathRules } from '../shell/path-verdict.js';
import { maskIndexFor } from './mask-index.js';

/**
 * What the sandbox hides (secrets, paths a user deny rule for commands covers) and binds
 * read-only (protected paths at any depth), from one index per root kept current by a file
 * watcher: no walk of the workspace per command.
 */
export async function sandboxMasks(ctx: Pick<ToolContext, 'workspace' | 'policy'>): Promise<{ hide: string[]; readonly: string[]; ask: string[]; incomplete: boolean }> {
  const rules = ctx.workspace.rules;
  const pathRule = commandPathRules(ctx.policy);
  const userDeny = pathRule ? (rel: string, asDir: boolean) => pathRule(rel, asDir)?.decision === 'deny' : undefined;
  const userAsk = pathRule ? (rel: string, asDir: boolean) => pathRule(rel, asDir)?.decision === 'ask' : undefined;
  const key = JSON.stringify([rules.deny, rules.protect, rules.protectedAbs, rules.deniedAbs]);
  const hide: string[] = [];
  const readonly: string[] = [];
  const ask: string[] = [];
  let incomplete = false;
  for (const root of ctx.workspace.roots) {
    const cur = await maskIndexFor(ctx.policy, root, key, { rules, userDeny, userAsk }).current();
    incomplete ||= cur.incomplete;
    for (const [abs, kind] of cur.paths) (kind === 'hide' ? hide : kind === 'ask' ? ask : readonly).push(abs);
  }
  return { hide: hide.sort(), readonly: readonly.sort(), ask: ask.sort(), incomplete };
}
