import { ToolError } from '../../core/errors.js';
import type { Query } from './types.js';

/**
 * ripgrep's pattern syntax (Rust regex) rendered as a JavaScript RegExp for the built-in
 * engine. What maps one to one is translated; what ripgrep itself refuses (look-around,
 * backreferences, a newline without multiline) is refused the same way; the few Rust-only
 * constructs JavaScript cannot express are refused with a message that says so.
 */
export interface JsPattern {
  /** Global, Unicode-mode regex with the query's flags; `^`/`$` mean line start/end. */
  re: RegExp;
  /** A plain string every match contains (fast pre-check), or null. */
  literal: string | null;
}

const SYNTAX = new Set('^$\\.*+?()[]{}|/'.split(''));
const PLAIN_ESCAPES = new Set('nrtfvdDwWsSbB'.split(''));
const POSIX: Record<string, string> = {
  alnum: '0-9A-Za-z', alpha: 'A-Za-z', ascii: '\\x00-\\x7F', blank: '\\t ', cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9', graph: '!-~', lower: 'a-z', print: ' -~', punct: '!-\\/:-@\\[-`\\{-~',
  space: '\\t\\n\\v\\f\\r ', upper: 'A-Z', word: '0-9A-Za-z_', xdigit: '0-9A-Fa-f',
};

function invalid(message: string): never {
  throw new ToolError('InvalidArguments', message);
}

function unsupported(what: string): never {
  invalid(`The pattern uses ${what}, which ripgrep accepts but the built-in search (used because ripgrep is not available) cannot run; rewrite it without that, or install ripgrep.`);
}

export function escapeLiteral(s: string): string {
  let out = '';
  for (const ch of s) out += SYNTAX.has(ch) ? `\\${ch}` : ch;
  return out;
}

interface Flags { i: boolean; s: boolean }

/** Rust regex source → JavaScript (Unicode mode) source. */
function translate(p: string, flags: Flags, multiline: boolean): string {
  let i = 0;
  // Leading inline flags: (?i), (?s), (?m), (?is)…
  for (let m = /^\(\?([a-zA-Z]+)\)/.exec(p); m; m = /^\(\?([a-zA-Z]+)\)/.exec(p.slice(i))) {
    for (const f of m[1]!) {
      if (f === 'i') flags.i = true;
      else if (f === 's') flags.s = true;
      else if (f === 'm' || f === 'u') continue;
      else unsupported(`the inline flag (?${f})`);
    }
    i += m[0].length;
  }
  let out = '';
  let inClass = false;
  let classStart = false;
  /** Whether a quantifier may follow (something to repeat sits before it). */
  let canRepeat = false;
  for (; i < p.length; i++) {
    const c = p[i]!;
    if (c === '\\') {
      const n = p[i + 1];
      if (n === undefined) invalid('The pattern ends with a lone backslash; escape it as \\\\ or set fixed_strings.');
      i++;
      canRepeat = true;
      classStart = false;
      if (n >= '1' && n <= '9') invalid('Backreferences (\\1…) are not supported by ripgrep\'s regex engine; match the text explicitly.');
      if (n === 'n' && !multiline) invalid('The pattern matches a newline (\\n); set multiline: true to search across lines.');
      if (PLAIN_ESCAPES.has(n)) { out += `\\${n}`; continue; }
      if (n === 'A' || n === 'z') {
        if (inClass) invalid(`\\${n} cannot appear inside a character class.`);
        out += n === 'A' ? '(?<![\\s\\S])' : '(?![\\s\\S])';
        continue;
      }
      if (n === 'p' || n === 'P') {
        if (p[i + 1] === '{') {
          const end = p.indexOf('}', i + 2);
          if (end < 0) invalid('Unclosed \\p{…} in the pattern.');
          out += `\\${n}{${p.slice(i + 2, end)}}`;
          i = end;
        } else {
          const letter = p[i + 1];
          if (!letter) invalid('The pattern ends with \\p; name a Unicode class, e.g. \\p{L}.');
          out += `\\${n}{${letter}}`;
          i++;
        }
        continue;
      }
      if (n === 'x' || n === 'u' || n === 'U') {
        let hex: string;
        if (p[i + 1] === '{') {
          const end = p.indexOf('}', i + 2);
          if (end < 0) invalid(`Unclosed \\${n}{…} in the pattern.`);
          hex = p.slice(i + 2, end);
          i = end;
        } else {
          const len = n === 'x' ? 2 : n === 'u' ? 4 : 8;
          hex = p.slice(i + 1, i + 1 + len);
          i += len;
        }
        if (!/^[0-9a-fA-F]{1,8}$/.test(hex)) invalid(`\\${n} must be followed by hexadecimal digits.`);
        out += `\\u{${hex}}`;
        continue;
      }
      if (n === 'a') { out += '\\x07'; continue; }
      if (n === 'e') { out += '\\x1B'; continue; }
      if (/[A-Za-z0-9]/.test(n)) invalid(`\\${n} is not a recognised escape sequence; write the character itself or escape only punctuation.`);
      // Escaped punctuation: JavaScript's Unicode mode only lets syntax characters be escaped.
      out += SYNTAX.has(n) || (inClass && n === '-') ? `\\${n}` : n;
      continue;
    }
    if (inClass) {
      if (c === '[') {
        const m = /^\[:(\^?)([a-z]+):\]/.exec(p.slice(i));
        if (!m) unsupported('a nested character class');
        if (m[1] === '^') unsupported('a negated POSIX class [[:^…:]]');
        const range = POSIX[m[2]!];
        if (!range) invalid(`[:${m[2]}:] is not a POSIX character class.`);
        out += range;
        i += m[0].length - 1;
        classStart = false;
        continue;
      }
      if ((c === '&' || c === '-' || c === '~') && p[i + 1] === c && !classStart) unsupported(`the class set operation "${c}${c}"`);
      if (c === ']' && !classStart) { inClass = false; out += ']'; canRepeat = true; continue; }
      if (c === ']') { out += '\\]'; classStart = false; continue; }
      if (c === '^' && classStart && out.endsWith('[')) { out += '^'; continue; }
      classStart = false;
      out += c;
      continue;
    }
    switch (c) {
      case '[':
        inClass = true;
        classStart = true;
        out += '[';
        break;
      case '(':
        if (p[i + 1] === '?') {
          const rest = p.slice(i + 2);
          if (rest.startsWith(':')) { out += '(?:'; i += 2; }
          else if (rest.startsWith('P<')) { out += '(?<'; i += 3; }
          else if (rest.startsWith('=') || rest.startsWith('!') || rest.startsWith('<=') || rest.startsWith('<!')) {
            invalid('Look-around ((?=…), (?!…), (?<=…), (?<!…)) is not supported by ripgrep\'s regex engine; rewrite the pattern without it.');
          } else if (rest.startsWith('<')) { out += '(?<'; i += 2; }
          else unsupported('inline flags inside the pattern (only a leading (?i)/(?s) is translated)');
        } else out += '(';
        canRepeat = false;
        break;
      case ')':
        out += ')';
        canRepeat = true;
        break;
      case '|':
        out += '|';
        canRepeat = false;
        break;
      case '.':
        out += flags.s ? '[\\s\\S]' : '[^\\n]';
        canRepeat = true;
        break;
      case '^':
        out += '(?<![^\\n])';
        canRepeat = false;
        break;
      case '$':
        out += '(?![^\\n])';
        canRepeat = false;
        break;
      case '{': {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(p.slice(i));
        if (!m || !canRepeat) invalid('The pattern has a "{" that is not a repetition like {2,5}; escape it as \\{ or set fixed_strings: true.');
        out += m[0];
        i += m[0].length - 1;
        break;
      }
      case '}':
      case ']':
        out += `\\${c}`;
        canRepeat = true;
        break;
      case '*':
      case '+':
      case '?':
        if (!canRepeat && !(c === '?' && /[*+?}]$/.test(out))) invalid(`The pattern has a "${c}" with nothing to repeat; escape it as \\${c} or set fixed_strings: true.`);
        out += c;
        break;
      case '\n':
        if (!multiline) invalid('The pattern contains a newline; set multiline: true to search across lines.');
        out += '\\n';
        canRepeat = true;
        break;
      default:
        out += c;
        canRepeat = true;
    }
  }
  if (inClass) invalid('The pattern has an unclosed character class "["; close it or set fixed_strings: true.');
  return out;
}

/** The longest run of plain characters when the pattern is one, for a cheap pre-check. */
function plainLiteral(p: string): string | null {
  return /^[^\\^$.*+?()[\]{}|]+$/.test(p) ? p : null;
}

export function toJsPattern(q: Pick<Query, 'pattern' | 'fixed_strings' | 'ignore_case' | 'multiline'>): JsPattern {
  const flags: Flags = { i: q.ignore_case, s: false };
  let source: string;
  let literal: string | null = null;
  if (q.fixed_strings) {
    if (!q.multiline && q.pattern.includes('\n')) invalid('The search string contains a newline; set multiline: true to search across lines.');
    source = escapeLiteral(q.pattern);
    literal = q.ignore_case ? null : q.pattern;
  } else {
    source = translate(q.pattern, flags, q.multiline);
    literal = flags.i ? null : plainLiteral(q.pattern);
  }
  let re: RegExp;
  try {
    re = new RegExp(source, `gu${flags.i ? 'i' : ''}`);
  } catch (e) {
    invalid(`The pattern is not a valid regular expression (${(e as Error).message.replace(/^Invalid regular expression: /, '')}); fix it or set fixed_strings: true.`);
  }
  return { re, literal };
}
