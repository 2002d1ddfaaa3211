import type { AnyTool } from '../../core/define-tool.js';
import { foldToolName } from '../../core/tool-lookup.js';
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
  // Names are compared as a call's name is looked up when it has no exact match (foldToolName:
  // no case, "-" as "_"), so "GH__x", "gh__x" and "g-h__x" / "g_h__x" never name two different tools.
  const taken = new Set([...builtIn].map(foldToolName));
  const upstreams = Object.keys(data.upstreams);
  const seen = new Map<string, string>();
  for (const u of upstreams) {
    const other = seen.get(foldToolName(u));
    if (other) throw new CustomToolError(`upstreams "${other}" and "${u}" differ only in case or "-"/"_" (their tools would be confused); rename one`, `upstreams.${u}`);
    seen.set(foldToolName(u), u);
  }
  const out: AnyTool[] = [];
  for (const [name, cfg] of Object.entries(data.tools)) {
    if (taken.has(foldToolName(name))) throw new CustomToolError(`custom tool "${name}" has the name of a built-in tool; rename it`, `tools.${name}`);
    const up = upstreams.find((u) => foldToolName(name).startsWith(`${foldToolName(u)}__`));
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
