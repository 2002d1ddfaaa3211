import type { CommandWord } from '../core/types.js';

/**
 * GNU sed, read the way sed reads it (sed/compile.c): its options, then its script, command by
 * command, so that `e` (runs a command), `w`/`W` and `s///w` (write a file) and `r`/`R` (read
 * one) are found behind any address (`1e …`, `$e …`, `0~1e …`, `/re/I,+2!e …`). What the parser
 * cannot read is treated as a script that may do anything.
 */
export interface SedCall {
  /** Why no prefix rule can allow the call (it runs commands, or the script cannot be read), or null. */
  code: string | null;
  /** Input files (operands): read, or rewritten with -i. */
  inputs: CommandWord[];
  inPlace: boolean;
  /** Files `r`/`R` read. */
  reads: CommandWord[];
  /** Files `w`/`W` and `s///w` write. */
  writes: CommandWord[];
}

const RUNS = 'the sed script runs commands or writes files';
const UNKNOWN = 'the sed script cannot be read before it runs (it may run commands or write files)';

/** sed's long options (getopt_long: any unambiguous prefix is accepted) → the short option they stand for. */
const LONG: Record<string, { opt: string; arg: 'none' | 'required' | 'optional' }> = {
  binary: { opt: 'b', arg: 'none' }, 'regexp-extended': { opt: 'E', arg: 'none' }, debug: { opt: 'debug', arg: 'none' },
  'in-place': { opt: 'i', arg: 'optional' }, expression: { opt: 'e', arg: 'required' }, file: { opt: 'f', arg: 'required' },
  'line-length': { opt: 'l', arg: 'required' }, 'null-data': { opt: 'z', arg: 'none' }, 'zero-terminated': { opt: 'z', arg: 'none' },
  quiet: { opt: 'n', arg: 'none' }, silent: { opt: 'n', arg: 'none' }, posix: { opt: 'posix', arg: 'none' },
  sandbox: { opt: 'sandbox', arg: 'none' }, separate: { opt: 's', arg: 'none' }, unbuffered: { opt: 'u', arg: 'none' },
  version: { opt: 'version', arg: 'none' }, help: { opt: 'help', arg: 'none' }, 'follow-symlinks': { opt: 'F', arg: 'none' },
};
const SHORT_FLAGS = new Set(['n', 'r', 'E', 's', 'u', 'z', 'b']);

/** A long option name (or prefix) → its entry; null when unknown or ambiguous (sed then refuses to start). */
export function longOption<T extends { opt: string }>(table: Record<string, T>, name: string): T | null {
  if (table[name]) return table[name]!;
  const hits = Object.keys(table).filter((k) => k.startsWith(name)).map((k) => table[k]!);
  if (hits.length === 0 || hits.some((h) => h.opt !== hits[0]!.opt)) return null;
  return hits[0]!;
}

/** Reads a sed argv (words[0] is sed). */
export function sedCall(words: CommandWord[]): SedCall {
  const out: SedCall = { code: null, inputs: [], inPlace: false, reads: [], writes: [] };
  const scripts: CommandWord[] = [];
  const operands: CommandWord[] = [];
  let fromFile = false;
  let sandbox = false;
  let bad = false;
  let opts = true;
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!;
    const t = w.text;
    if (!opts || t === '-' || !t.startsWith('-')) { operands.push(w); continue; }
    // A word known only when it runs may hold any option (`-e1e touch X`).
    if (!w.literal) { bad = true; continue; }
    if (t === '--') { opts = false; continue; }
    if (t.startsWith('--')) {
      const eq = t.indexOf('=');
      const name = t.slice(2, eq < 0 ? undefined : eq);
      const o = longOption(LONG, name);
      if (!o || (o.arg === 'none' && eq >= 0)) { bad = true; continue; }
      let value: CommandWord | undefined;
      if (eq >= 0) value = { ...w, text: t.slice(eq + 1) };
      else if (o.arg === 'required') { value = words[++i]; if (!value) { bad = true; continue; } }
      if (o.opt === 'e') scripts.push(value!);
      else if (o.opt === 'f') fromFile = true;
      else if (o.opt === 'i') out.inPlace = true;
      else if (o.opt === 'sandbox') sandbox = true;
      continue;
    }
    for (let k = 1; k < t.length; k++) {
      const c = t[k]!;
      if (SHORT_FLAGS.has(c)) continue;
      if (c === 'i') { out.inPlace = true; break; } // -i[SUFFIX]: the rest of the word is the suffix
      if (c === 'e' || c === 'f' || c === 'l') {
        const value: CommandWord | undefined = k + 1 < t.length ? { ...w, text: t.slice(k + 1) } : words[++i];
        if (!value) bad = true;
        else if (c === 'e') scripts.push(value);
        else if (c === 'f') fromFile = true;
        break;
      }
      bad = true; // unknown: sed refuses to start, but nothing here is guessed
      break;
    }
  }
  if (scripts.length === 0 && !fromFile) {
    const first = operands.shift();
    if (first) scripts.push(first);
  }
  out.inputs = operands;
  if (sandbox) return out; // --sandbox: sed refuses e, r and w before it starts
  if (bad || fromFile || scripts.some((s) => !s.literal)) { out.code = UNKNOWN; return out; }
  const parsed = parseSedScript(scripts.map((s) => s.text).join('\n'));
  if (!parsed) { out.code = UNKNOWN; return out; }
  if (parsed.runs) out.code = RUNS;
  const literal = scripts.every((s) => s.literal);
  out.reads = parsed.reads.map((text) => ({ text, literal }));
  out.writes = parsed.writes.map((text) => ({ text, literal }));
  return out;
}

export interface SedScript {
  /** `e` or `s///e`: runs a command. */
  runs: boolean;
  reads: string[];
  writes: string[];
}

const isSpace = (c: string | undefined) => c !== undefined && /^[ \t\n\v\f\r]$/.test(c);
const isBlank = (c: string | undefined) => c === ' ' || c === '\t';

/** Parses a GNU sed script; null when it is not one sed would accept as read here (judged as unknown). */
export function parseSedScript(src: string): SedScript | null {
  // GNU sed keeps \r, \v, \f inside labels and file names where a reader ends them (`t x\ra e cmd`
  // is the label "x\ra" and then `e cmd`): a script holding them is not read here.
  if (/[\r\v\f]/.test(src)) return null;
  const res: SedScript = { runs: false, reads: [], writes: [] };
  let i = 0;
  let depth = 0;
  const peek = () => src[i];
  const nonBlank = () => { while (isBlank(src[i])) i++; return src[i]; };
  const digits = () => { const s = i; while (/[0-9]/.test(src[i] ?? '')) i++; return i > s; };
  /** `delim … delim` with backslash escapes; newline only escaped. Leaves i after the closing delimiter. */
  const delimited = (delim: string): boolean => {
    // sed takes one-byte delimiters only; anything else is not read here.
    if (delim === undefined || delim === '\n' || delim === '\\' || delim > '\x7f') return false;
    while (i < src.length) {
      const c = src[i++]!;
      if (c === delim) return true;
      if (c === '\n') return false;
      if (c === '\\') { if (i >= src.length) return false; i++; }
    }
    return false;
  };
  /** Rest of the line (r/w file names, e's command). */
  const restOfLine = () => { nonBlank(); const s = i; while (i < src.length && src[i] !== '\n') i++; return src.slice(s, i); };
  /** After a command: blanks, then the end of it. */
  const endOfCmd = (): boolean => {
    const c = nonBlank();
    if (c === undefined || c === '\n' || c === ';') { i++; return true; }
    return c === '}' || c === '#';
  };
  const address = (second: boolean): boolean | null => {
    const c = peek();
    if (c === undefined) return false;
    if (/[0-9]/.test(c)) {
      digits();
      const save = i;
      if (nonBlank() === '~') { i++; nonBlank(); if (!digits()) return null; } else i = save;
      return true;
    }
    if (c === '$') { i++; return true; }
    if (second && (c === '+' || c === '~')) { i++; nonBlank(); return digits() ? true : null; }
    if (c === '/' || c === '\\') {
      i++;
      const delim = c === '/' ? '/' : src[i++]!;
      if (!delimited(delim)) return null;
      for (;;) { const f = nonBlank(); if (f === 'I' || f === 'M') i++; else break; }
      return true;
    }
    return false;
  };
  while (i < src.length) {
    while (src[i] === ';' || isSpace(src[i])) i++;
    if (i >= src.length) break;
    const a1 = address(false);
    if (a1 === null) return null;
    if (a1) {
      const save = i;
      if (nonBlank() === ',') {
        i++;
        nonBlank();
        if (address(true) !== true) return null;
      } else i = save;
    }
    if (nonBlank() === '!') { i++; if (nonBlank() === '!') return null; }
    const cmd = src[i++];
    if (cmd === undefined) return null;
    switch (cmd) {
      case '{': depth++; break;
      case '}': if (--depth < 0 || !endOfCmd()) return null; break;
      case '#': while (i < src.length && src[i] !== '\n') i++; break;
      case 'a': case 'i': case 'c': {
        // One-liner `a text`, or `a\` then lines; a backslash escapes any character, newline included.
        const c = nonBlank();
        if (c === undefined) return null;
        if (c === '\\') { i++; if (src[i] === '\n') i++; }
        while (i < src.length && src[i] !== '\n') i += src[i] === '\\' ? 2 : 1;
        i++;
        break;
      }
      case ':': case 'b': case 't': case 'T': case 'v': {
        nonBlank();
        const s = i;
        // A label ends at a blank, `;` or `}` (GNU): what follows is the next command (`t x e cmd` runs cmd).
        while (i < src.length && !isSpace(src[i]) && src[i] !== ';' && src[i] !== '}') i++;
        if (cmd === ':' && i === s) return null;
        break;
      }
      case 'l': case 'L': case 'q': case 'Q': nonBlank(); digits(); if (!endOfCmd()) return null; break;
      case 'e': res.runs = true; restOfLine(); break;
      case 'r': case 'R': case 'w': case 'W': {
        const f = restOfLine();
        if (!f) return null;
        (cmd === 'r' || cmd === 'R' ? res.reads : res.writes).push(f);
        break;
      }
      case 's': {
        const delim = src[i++]!;
        if (!delimited(delim) || !delimited(delim)) return null;
        for (let done = false; !done;) {
          const f = src[i];
          if (f === undefined || f === '\n' || f === ';') { i++; done = true; }
          else if (f === '}' || f === '#') done = true;
          else if (f === 'w') { i++; const file = restOfLine(); if (!file) return null; res.writes.push(file); done = true; }
          else if (f === 'e') { res.runs = true; i++; }
          else if (/[gpiImM0-9 \t\r]/.test(f)) i++;
          else return null;
        }
        break;
      }
      case 'y': {
        const delim = src[i++]!;
        if (!delimited(delim) || !delimited(delim) || !endOfCmd()) return null;
        break;
      }
      default:
        if (!'=dDgGhHnNpPxzF'.includes(cmd) || !endOfCmd()) return null;
    }
  }
  return depth === 0 ? res : null;
}
