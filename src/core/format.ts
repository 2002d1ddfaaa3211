import type { z } from 'zod';

/** One sentence per problem, naming the argument: what a model needs to fix its call. */
export function formatZodError(err: z.ZodError): string {
  return err.issues.slice(0, 5).map((i) => {
    const where = i.path.length ? `"${i.path.join('.')}"` : 'arguments';
    if (i.code === 'unrecognized_keys') return `unknown argument(s) ${i.keys.map((k) => `"${k}"`).join(', ')} (remove them)`;
    if (i.code === 'invalid_type' && i.message.includes('received undefined')) return `${where} is required`;
    return `${where}: ${i.message}`;
  }).join('; ');
}

/** Args echoed in the envelope: long strings cut, so a 200 KB write does not come back whole. */
export function shortArgs(v: unknown, depth = 0): unknown {
  if (typeof v === 'string') return v.length > 200 ? `${v.slice(0, 200)}… (${v.length} chars)` : v;
  if (Array.isArray(v)) return depth > 4 ? '[…]' : v.slice(0, 20).map((x) => shortArgs(x, depth + 1));
  if (v && typeof v === 'object') {
    if (depth > 4) return '{…}';
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shortArgs(x, depth + 1)]));
  }
  return v;
}

/** Single-quotes a string for a POSIX shell. */
export function shellQuote(s: string): string {
  if (/^[A-Za-z0-9_./:=@%+-]+$/.test(s)) return s;
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
