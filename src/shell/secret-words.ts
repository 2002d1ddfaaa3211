import { readdirSync } from 'node:fs';
import path from 'node:path';
import type { CommandWord } from '../core/types.js';
import type { Analysis } from './analyze.js';

/** Names read from one folder to expand a glob word for the secrets check. */
const MAX_NAMES = 5000;

type Token = { kind: 'star' } | { kind: 'any' } | { kind: 'set'; test: (c: string) => boolean };

/** A bash glob segment (`*`, `?`, `[…]`, `[!…]`) as tokens; null when it is not one read here. */
function tokens(pat: string, nocase: boolean): Token[] | null {
  const out: Token[] = [];
  const fold = (c: string) => (nocase ? c.toLowerCase() : c);
  for (let i = 0; i < pat.length; i++) {
    const c = pat[i]!;
    if (c === '*') out.push({ kind: 'star' });
    else if (c === '?') out.push({ kind: 'any' });
    else if (c === '[') {
      const end = pat.indexOf(']', i + 2);
      if (end < 0) return null;
      let body = pat.slice(i + 1, end);
      const neg = body.startsWith('!') || body.startsWith('^');
      if (neg) body = body.slice(1);
      if (/\[:|\\/.test(body)) return null;
      const ranges: [string, string][] = [];
      for (let k = 0; k < body.length; k++) {
        if (body[k + 1] === '-' && k + 2 < body.length) { ranges.push([fold(body[k]!), fold(body[k + 2]!)]); k += 2; } else ranges.push([fold(body[k]!), fold(body[k]!)]);
      }
      out.push({ kind: 'set', test: (x) => ranges.some(([a, b]) => fold(x) >= a && fold(x) <= b) !== neg });
      i = end;
    } else { const f = fold(c); out.push({ kind: 'set', test: (x) => fold(x) === f }); }
  }
  return out;
}

/** Whether `name` matches the tokens: dynamic programming, linear in the pattern times the name (no backtracking). */
function matches(t: Token[], name: string): boolean {
  let row = new Array<boolean>(name.length + 1).fill(false);
  row[0] = true;
  for (const tok of t) {
    const next = new Array<boolean>(name.length + 1).fill(false);
    for (let j = 0; j <= name.length; j++) {
      if (tok.kind === 'star') next[j] = row[j]! || (j > 0 && next[j - 1]!);
      else if (j > 0 && row[j - 1]) next[j] = tok.kind === 'any' || tok.test(name[j - 1]!);
    }
    row = next;
  }
  return row[name.length]!;
}

/** Shell options in the line that widen globs: dotfiles (dotglob, GLOBIGNORE), case (nocaseglob). */
export function globOptions(a: Analysis): { dot: boolean; nocase: boolean } {
  const text = a.parts.flatMap((p) => [...p.words, ...(p.asWritten ?? [])]).map((w) => w.text).join(' ');
  return { dot: /dotglob|GLOBIGNORE/.test(text), nocase: /nocaseglob/.test(text) };
}

/**
 * The paths a word may name for the secrets list, beyond literal ones (they add refusals, never
 * remove one): `"$HOME/x"` / `${HOME}/x` as HOME/x, and a glob in the last segment (`.e*`, `.en[v]`)
 * as the names it matches now in each folder the command may be in. Not for path rules: a nested
 * shell may run with another HOME (`env -i bash -c …`), and the folder may change before it runs.
 */
export function secretPaths(w: CommandWord, home: string, dirs: readonly (string | null)[], cwd: string, g: { dot: boolean; nocase: boolean }): string[] {
  if (w.literal) return [];
  const h = /^(\$HOME|\$\{HOME\})(\/.*)?$/.exec(w.text);
  if (h) return /[$`*?[\]{}~]/.test(h[2] ?? '') ? [] : [home + (h[2] ?? '')];
  if (/[$`{}~\\'"]/.test(w.text) || !/[*?[]/.test(w.text)) return [];
  const cut = w.text.lastIndexOf('/');
  const dir = w.text.slice(0, cut + 1);
  const pat = w.text.slice(cut + 1);
  const t = pat && !/[*?[]/.test(dir) ? tokens(pat, g.nocase) : null;
  if (!t) return [];
  const out: string[] = [];
  for (const base of path.isAbsolute(dir) ? [cwd] : dirs) {
    if (base === null) continue;
    const folder = path.resolve(base, dir || '.');
    let names: string[];
    try { names = readdirSync(folder).slice(0, MAX_NAMES); } catch { continue; }
    for (const n of names) if ((g.dot || !n.startsWith('.') || pat.startsWith('.')) && matches(t, n)) out.push(path.join(folder, n));
  }
  return out;
}
