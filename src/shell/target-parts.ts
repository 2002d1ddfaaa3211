import type { CommandWord, PlanTarget } from '../core/types.js';
import type { PathVerdict } from './path-verdict.js';

/** A part to ask about: a stand-in command whose text says why. */
export const askPart = (text: string): PlanTarget => ({ kind: 'command', words: [{ text, literal: false }], text });
/** A part refused with a reason. */
export const denyPart = (text: string, why: string): PlanTarget => ({ kind: 'command', words: [{ text, literal: false }], text, deny_reason: why });

/** `~/x` → HOME/x; any other expansion → null (unknown until it runs). */
export function literalPath(w: CommandWord, home: string): string | null {
  if (w.literal) return w.text;
  if (/^~(\/|$)/.test(w.text) && !/[$`*?[\]{}~]/.test(w.text.slice(1))) return home + w.text.slice(1);
  return null;
}

/** Per-process files that hold another process's secrets (environment, memory, open files). */
export const PROC_SECRET = /^\/proc\/[^/]+\/(task\/[^/]+\/)?(environ|mem|fd|fdinfo|map_files|root|cwd|cmdline|auxv)(\/|$)/;

/** The user's rules on one path, read lexically or resolved: a deny or ask part, or null. */
export function ruleTarget(label: string, rel: string | null, asDir: boolean, o: { pathRule?: ((rel: string, asDir: boolean) => PathVerdict) | undefined }): PlanTarget | null {
  if (rel === null || !o.pathRule) return null;
  const v = o.pathRule(rel, asDir);
  if (!v) return null;
  // The same words whether the path exists, is a folder or is missing: the refusal is no oracle.
  return v.decision === 'deny' ? denyPart(label, `a policy rule denies this path to commands: ${v.rule}`) : askPart(`${label} (${v.rule})`);
}
