import { z } from 'zod';
import type { CustomArg, CustomToolConfig } from './config.js';

/** `{name}` as a whole argv word. */
const WHOLE = /^\{([a-z][a-z0-9_]*)\}$/;
const ANYWHERE = /\{([a-z][a-z0-9_]*)\}/;

/** Thrown at load for a tool definition that cannot be used; the policy loader names the key. */
export class CustomToolError extends Error {
  constructor(message: string, readonly key: string) { super(message); }
}

function argType(name: string, a: CustomArg, key: string): z.ZodType {
  let t: z.ZodType;
  if (a.type === 'string') {
    let s: z.ZodType<string>;
    if (a.enum) s = z.enum(a.enum as [string, ...string[]]);
    else {
      let str = z.string();
      if (a.pattern !== undefined) {
        let re: RegExp;
        try { new RegExp(a.pattern, 'u'); } catch (e) { throw new CustomToolError(`args.${name}.pattern is not a valid regular expression: ${(e as Error).message}`, `${key}.pattern`); }
        // Anchored: the whole value must match, as a user writing "[a-z]+" expects (JSON Schema's
        // own pattern is unanchored, so "[a-z]+" would pass "a; rm -rf ~"). The advertised schema
        // carries the anchored form, so the model sees the rule that holds.
        re = new RegExp(`^(?:${a.pattern})$`, 'u');
        str = str.regex(re, `must match ${a.pattern} (the whole value)`);
      }
      if (a.maxLength !== undefined) str = str.max(a.maxLength);
      s = str;
    }
    // A value starting with "-" would be read as an option by most programs: never one whole word of data.
    t = s.refine((v) => !v.startsWith('-'), 'must not start with "-" (it would be taken as an option)')
      .refine((v) => !v.includes('\0'), 'must not contain a NUL byte (no program argument can hold one)');
  } else if (a.type === 'integer') {
    let n = z.number().int();
    // "-1" would be read as an option ("kill {pid}" → kill -1): negatives only where a minimum allows them.
    if (a.minimum !== undefined) n = n.min(a.minimum);
    else n = n.min(0, 'must not be negative (it would be taken as an option); the tool declares no minimum below 0');
    if (a.maximum !== undefined) n = n.max(a.maximum);
    t = n;
  } else {
    t = z.boolean();
  }
  if (a.description) t = t.describe(a.description);
  if (a.default !== undefined) {
    const ok = t.safeParse(a.default);
    if (!ok.success) throw new CustomToolError(`args.${name}.default does not satisfy its own schema (${ok.error.issues[0]?.message})`, `${key}.default`);
    t = (t as z.ZodType<unknown>).default(a.default as never);
  }
  return t;
}

/** The strict input schema of a custom tool: every arg required unless it has a default. */
export function customInput(cfg: CustomToolConfig, key: string): z.ZodObject {
  const shape: Record<string, z.ZodType> = {};
  for (const [name, a] of Object.entries(cfg.args)) shape[name] = argType(name, a, `${key}.args.${name}`);
  return z.strictObject(shape);
}

/**
 * Checks the argv at load: a placeholder is a whole word (`{filter}`), never part of a larger
 * one (`--filter={filter}` is refused: a word's meaning must not depend on the value), and names
 * an argument that exists.
 */
export function checkArgv(cfg: CustomToolConfig, key: string): void {
  cfg.argv.forEach((w, i) => {
    const whole = WHOLE.exec(w);
    if (whole) {
      if (!(whole[1]! in cfg.args)) throw new CustomToolError(`argv[${i}] "${w}" names no argument; declare it under args`, `${key}.argv`);
      if (i === 0) throw new CustomToolError('argv[0] is the program and cannot be a placeholder', `${key}.argv`);
      return;
    }
    const inner = ANYWHERE.exec(w);
    if (inner) throw new CustomToolError(`argv[${i}] "${w}": a placeholder must be a whole word ("{${inner[1]}}" alone), never part of a larger one; split it (e.g. ["--filter", "{${inner[1]}}"])`, `${key}.argv`);
  });
}

/**
 * The argv to run: each placeholder replaced by its validated value as exactly one word. The
 * placeholder of an optional string argument (`default: ""`) whose value is "" is left out (an
 * optional filter); any other "" stays an empty word — a required word never vanishes (in
 * `find {dir} -delete` a missing word would mean the current folder).
 */
export function fillArgv(argv: string[], args: Record<string, unknown>, defs: CustomToolConfig['args'] = {}): string[] {
  const out: string[] = [];
  for (const w of argv) {
    const m = WHOLE.exec(w);
    if (!m) { out.push(w); continue; }
    const v = args[m[1]!];
    if (v === undefined || (v === '' && defs[m[1]!]?.default === '')) continue;
    out.push(String(v));
  }
  return out;
}
