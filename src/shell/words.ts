import type { CommandWord } from '../core/types.js';
import type { SyntaxNode } from './parser.js';

/** Unquoted characters that make bash change a word: globs, brace expansion (a tilde: see unquoteBare). */
const UNQUOTED_SPECIAL = /[*?[\]{}]/;

/**
 * Quote removal for an unquoted word: `\x` → `x`, backslash-newline vanishes; `literal` false if the word expands.
 * `~` expands only at the start of a word (`atStart`: this text begins the word) or after `=` / `:`
 * (in an assignment, and in a word that looks like one, `a=~/x`, `P=a:~/b`): `HEAD~2` is literal.
 */
function unquoteBare(raw: string, atStart = true): { text: string; literal: boolean } {
  let out = '';
  let literal = true;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === '\\') {
      const n = raw[i + 1];
      i++;
      if (n === undefined) break;
      if (n !== '\n') out += n;
      continue;
    }
    if (c === '$' || c === '`') literal = false;
    else if (UNQUOTED_SPECIAL.test(c)) literal = false;
    else if (c === '~' && (i === 0 ? atStart : raw[i - 1] === '=' || raw[i - 1] === ':')) literal = false;
    out += c;
  }
  return { text: out, literal };
}

/** Inside double quotes a backslash only escapes $ ` " \ and newline. */
function unquoteDouble(raw: string): string {
  let out = '';
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    const n = raw[i + 1];
    if (c === '\\' && n !== undefined && '$`"\\\n'.includes(n)) {
      if (n !== '\n') out += n;
      i++;
      continue;
    }
    out += c;
  }
  return out;
}

const SIMPLE_ESC: Record<string, string> = { a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', "'": "'", '"': '"', '?': '?' };

/** Decodes $'…' the way bash does; null when it holds something this decoder does not model. */
export function decodeAnsiC(body: string): string | null {
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') { out += c; continue; }
    const n = body[++i];
    if (n === undefined) return null;
    if (n in SIMPLE_ESC) { out += SIMPLE_ESC[n]; continue; }
    let m: RegExpMatchArray | null;
    const rest = body.slice(i);
    if ((m = rest.match(/^[0-7]{1,3}/))) { out += String.fromCharCode(parseInt(m[0], 8) & 0xff); i += m[0].length - 1; continue; }
    if ((m = rest.match(/^x([0-9a-fA-F]{1,2})/))) { out += String.fromCharCode(parseInt(m[1]!, 16)); i += m[0].length - 1; continue; }
    if ((m = rest.match(/^u([0-9a-fA-F]{1,4})/)) || (m = rest.match(/^U([0-9a-fA-F]{1,8})/))) {
      const cp = parseInt(m[1]!, 16);
      if (cp > 0x10ffff) return null;
      out += String.fromCodePoint(cp); i += m[0].length - 1; continue;
    }
    if (n === 'c') return null;
    out += '\\' + n;
  }
  // A NUL ends the string in bash; refuse rather than guess.
  return out.includes('\0') ? null : out;
}

/**
 * One shell word after quote removal. `literal` is false when bash would still change it
 * when it runs (parameter/command/arithmetic expansion, globs, braces, tilde).
 */
export function wordOf(node: SyntaxNode): CommandWord {
  switch (node.type) {
    case 'word':
    case 'number': {
      // Unquoted, a glob (or a brace list) may become several words: `test ?v*` ran `test -v 'xv[_]'`.
      const w = unquoteBare(node.text);
      return w.literal ? w : { ...w, split: true };
    }
    case 'variable_name':
      return { text: node.text, literal: true };
    case 'raw_string':
      return { text: node.text.slice(1, -1), literal: true };
    case 'ansi_c_string': {
      const d = decodeAnsiC(node.text.slice(2, -1));
      return d === null ? { text: node.text, literal: false } : { text: d, literal: true };
    }
    case 'string':
    case 'translated_string': {
      let text = '';
      let literal = true;
      let split = false;
      for (const c of node.namedChildren) {
        if (!c) continue;
        if (c.type === 'string_content') text += unquoteDouble(c.text);
        else { text += c.text; literal = false; split ||= /^\$(@|\{[^}]*\[@\]\})/.test(c.text) || /^\$\{!?[@]/.test(c.text); }
      }
      return split ? { text, literal, split } : { text, literal };
    }
    case 'concatenation': {
      let text = '';
      let literal = true;
      let split = false;
      for (const [k, c] of node.children.entries()) {
        if (!c) continue;
        // A `~` opening a later piece is no tilde prefix, unless the text before it ends in `=` or `:`.
        const bare = !c.isNamed || c.type === 'word' || c.type === 'number';
        const w: CommandWord = bare ? unquoteBare(c.text, k === 0 || /[=:]$/.test(text)) : wordOf(c);
        if (bare && c.isNamed && !w.literal) w.split = true;
        text += w.text;
        literal &&= w.literal;
        split ||= !!(w as CommandWord).split;
      }
      return split ? { text, literal, split } : { text, literal };
    }
    case 'variable_assignment': {
      const name = node.childForFieldName('name')?.text ?? '';
      const value = node.childForFieldName('value');
      const v = value ? wordOf(value) : { text: '', literal: true };
      const op = node.text.slice(name.length).startsWith('+=') ? '+=' : '=';
      return { text: `${name}${op}${v.text}`, literal: v.literal };
    }
    default:
      // Expansions, substitutions, anything else: known only when it runs (and, unquoted, split into words).
      return { text: node.text, literal: false, split: true };
  }
}
