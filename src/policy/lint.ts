import { ruleName } from './evaluate.js';
import type { CompiledPolicy } from './types.js';

/** Rules whose `tool` matches no tool of this build: usually a typo (`read_flie`) that silently matches nothing. */
export function lintPolicy(policy: CompiledPolicy, toolNames: string[]): string[] {
  return policy.rules
    .filter((r) => !toolNames.some((n) => r.tool(n)))
    .map((r) => `${ruleName(r)} names no known tool (known: ${toolNames.join(', ')})`);
}
