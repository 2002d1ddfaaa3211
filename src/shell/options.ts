import type { CommandWord } from '../core/types.js';

/** How a wrapper's own options look, so the word after them — what it runs — is found exactly. */
export interface OptionSpec {
  /** Options without a value: "-i", "--null". */
  flags?: string[];
  /** Options that take a value, attached ("-n5", "--signal=KILL") or as the next word. */
  withArg?: string[];
  /** Options that make the wrapper impossible to judge (env -S splits a string into a command). */
  refuse?: string[];
  /** "-5" style numeric options (nice). */
  numeric?: boolean;
  /** Leading NAME=VALUE words are environment assignments (env). */
  assignments?: boolean;
  /** Positional words before the command (timeout's duration). */
  positional?: number;
}

export type OptionResult =
  | { ok: true; rest: CommandWord[]; assigns: CommandWord[]; seen: string[] }
  | { ok: false; reason: string };

/** Skips a wrapper's options; anything it does not know is a refusal, never a guess. */
export function skipOptions(prog: string, words: CommandWord[], spec: OptionSpec): OptionResult {
  const flags = new Set(spec.flags ?? []);
  const withArg = new Set(spec.withArg ?? []);
  const refuse = new Set(spec.refuse ?? []);
  const assigns: CommandWord[] = [];
  const seen: string[] = [];
  let i = 1;
  const fail = (why: string): OptionResult => ({ ok: false, reason: `${prog}: ${why}` });
  while (i < words.length) {
    const w = words[i]!;
    if (!w.literal) {
      if (w.text.startsWith('-') || spec.assignments) return fail(`option "${w.text}" is only known when it runs`);
      break;
    }
    const t = w.text;
    if (t === '--') { i++; break; }
    if (spec.assignments && /^[A-Za-z_][A-Za-z0-9_]*=/.test(t)) { assigns.push(w); i++; continue; }
    if (t.startsWith('--')) {
      const name = t.split('=')[0]!;
      if (refuse.has(name)) return fail(`${name} cannot be judged`);
      seen.push(name);
      if (withArg.has(name)) { i += t.includes('=') ? 1 : 2; continue; }
      if (flags.has(name) && !t.includes('=')) { i++; continue; }
      return fail(`unknown option ${name}`);
    }
    if (t.startsWith('-') && t.length > 1) {
      if (spec.numeric && /^-\d+$/.test(t)) { i++; continue; }
      let consumedNext = false;
      for (let k = 1; k < t.length; k++) {
        const o = `-${t[k]}`;
        if (refuse.has(o)) return fail(`${o} cannot be judged`);
        seen.push(o);
        if (withArg.has(o)) { if (k === t.length - 1) consumedNext = true; break; }
        if (!flags.has(o)) return fail(`unknown option ${o}`);
      }
      i += consumedNext ? 2 : 1;
      continue;
    }
    if (t === '-' && spec.assignments) { i++; continue; }
    break;
  }
  i += spec.positional ?? 0;
  if (i > words.length) return fail('is missing an argument');
  return { ok: true, rest: words.slice(i), assigns, seen };
}
