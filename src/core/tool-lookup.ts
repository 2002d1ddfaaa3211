import type { AnyTool } from './define-tool.js';

/** Names other agents use for the same tools; resolved with a note. */
const ALIASES: Record<string, string> = {
  read: 'read_file', write: 'write_file', edit: 'edit_file', multiedit: 'multi_edit', ls: 'list_dir',
  bash: 'run_command', shell: 'run_command', grep: 'grep', glob: 'glob', webfetch: 'fetch_url',
  fetch: 'fetch_url', patch: 'apply_patch', delete: 'delete_file', rm: 'delete_file',
  // The seeds' tool schemas (their argument names are each tool's `aliases`).
  globfilesearch: 'glob', runterminalcmd: 'run_command', runshell: 'run_command', searchfiles: 'grep',
};

function distance(a: string, b: string): number {
  const dp = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = dp[0]!;
    dp[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = dp[j]!;
      dp[j] = Math.min(dp[j]! + 1, dp[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return dp[b.length]!;
}

export interface Lookup {
  tool?: AnyTool;
  note?: string;
  suggestions: string[];
}

/** How a call's name is folded when it has no exact match: no case, "-" and spaces as "_". Names that fold alike must not name two tools. */
export const foldToolName = (name: string): string => name.toLowerCase().replace(/[-\s]/g, '_');

export function lookupTool(tools: ReadonlyMap<string, AnyTool>, name: string): Lookup {
  const exact = tools.get(name);
  if (exact) return { tool: exact, suggestions: [] };
  const folded = foldToolName(name);
  const byCase = tools.get(folded) ?? tools.get(ALIASES[folded.replace(/_/g, '')] ?? '');
  if (byCase) return { tool: byCase, note: `"${name}" was taken as ${byCase.name}`, suggestions: [] };
  const suggestions = [...tools.keys()]
    .map((k) => ({ k, d: distance(folded, k) }))
    .filter((x) => x.d <= Math.max(2, Math.floor(x.k.length / 3)))
    .sort((a, b) => a.d - b.d)
    .map((x) => x.k)
    .slice(0, 3);
  return { suggestions };
}
