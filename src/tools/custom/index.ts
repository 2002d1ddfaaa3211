import type { AnyTool } from '../../core/define-tool.js';
import type { PolicyData } from '../../policy/schema.js';
import { PolicyError } from '../../policy/compile.js';
import type { CompiledPolicy } from '../../policy/types.js';
import { CustomToolError } from './args.js';
import { makeCustomTool } from './custom-tool.js';

export { CustomToolError };

/**
 * The policy's custom tools, checked against the other names: a custom tool may not take a
 * built-in's name, nor the `<upstream>__` prefix of a mounted upstream (a load error, never a
 * silent overwrite).
 */
export function customTools(data: PolicyData, builtIn: Iterable<string>): AnyTool[] {
  // Names are compared without case: a call's name is matched case-insensitively when it has no
  // exact match, so "GH__x" and "gh__x" must never name two different tools.
  const taken = new Set([...builtIn].map((n) => n.toLowerCase()));
  const upstreams = Object.keys(data.upstreams);
  const seen = new Map<string, string>();
  for (const u of upstreams) {
    const other = seen.get(u.toLowerCase());
    if (other) throw new CustomToolError(`upstreams "${other}" and "${u}" differ only in case (their tools would be confused); rename one`, `upstreams.${u}`);
    seen.set(u.toLowerCase(), u);
  }
  const out: AnyTool[] = [];
  for (const [name, cfg] of Object.entries(data.tools)) {
    if (taken.has(name.toLowerCase())) throw new CustomToolError(`custom tool "${name}" has the name of a built-in tool; rename it`, `tools.${name}`);
    const up = upstreams.find((u) => name.toLowerCase().startsWith(`${u.toLowerCase()}__`));
    if (up) throw new CustomToolError(`custom tool "${name}" starts with "${up}__", the prefix of upstream ${up}'s tools; rename it`, `tools.${name}`);
    out.push(makeCustomTool(name, cfg));
  }
  return out;
}

/** customTools for a compiled policy; a clash is a PolicyError naming the file and key. */
export function loadCustomTools(policy: CompiledPolicy, builtIn: Iterable<string>): AnyTool[] {
  try {
    return customTools(policy.data, builtIn);
  } catch (e) {
    if (e instanceof CustomToolError) throw new PolicyError(`${policy.origin}: ${e.key}: ${e.message}`, undefined, e.key);
    throw e;
  }
}
