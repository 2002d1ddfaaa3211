import type { CommandWord } from '../core/types.js';
import type { SyntaxNode } from './parser.js';
import { wordOf } from './words.js';

export interface Redirect {
  /** The operator as written: >, >>, <, &>, >|, <> … */
  op: string;
  target: CommandWord;
}

/** One simple command as found in the tree, before wrappers are unwrapped. */
export interface RawCommand {
  /** Assignments written before the command (`FOO=1 cmd`): they change what the command does. */
  assigns: CommandWord[];
  words: CommandWord[];
  redirects: Redirect[];
  text: string;
  deny_reason?: string;
}

/** Node types whose children are walked without judging the node itself. */
const STRUCTURE = new Set([
  'program', 'list', 'pipeline', 'subshell', 'compound_statement', 'do_group', 'while_statement',
  'if_statement', 'elif_clause', 'else_clause', 'case_statement', 'case_item', 'negated_command',
  'function_definition', 'redirected_statement', 'test_command', 'command_substitution',
  'process_substitution', 'arithmetic_expansion', 'binary_expression', 'unary_expression',
  'postfix_expression', 'ternary_expression', 'parenthesized_expression', 'string', 'raw_string',
  'ansi_c_string', 'translated_string', 'concatenation', 'word', 'number', 'simple_expansion',
  'expansion', 'variable_name', 'special_variable_name', 'subscript', 'array', 'heredoc_body',
  'heredoc_content', 'heredoc_start', 'heredoc_end', 'heredoc_redirect', 'herestring_redirect',
  'file_redirect', 'file_descriptor', 'string_content', 'test_operator', 'regex', 'extglob_pattern',
  'brace_expression', 'comment', 'command_name', 'c_style_for_statement', 'for_statement',
  'variable_assignment', 'variable_assignments', 'declaration_command', 'unset_command', 'command',
]);

/** Words bash reads as syntax: as a command name here they mean the grammar misread the line. */
const RESERVED = new Set(['!', '{', '}', '[[', ']]', 'case', 'coproc', 'do', 'done', 'elif', 'else', 'esac', 'fi', 'for', 'function', 'if', 'in', 'select', 'then', 'until', 'while']);

const REDIRECT_TYPES = new Set(['file_redirect', 'heredoc_redirect', 'herestring_redirect']);

function redirectOf(node: SyntaxNode): Redirect | null {
  if (node.type !== 'file_redirect') return null;
  const dest = node.childForFieldName('destination');
  const op = node.children.find((c) => c && !c.isNamed)?.type ?? '>';
  if (!dest) return null;
  const target = wordOf(dest);
  // `2>&1`, `>&-`: duplicating a descriptor writes no file.
  if ((op === '>&' || op === '<&' || op === '>&-' || op === '<&-') && /^(\d+|-)$/.test(target.text)) return null;
  return { op, target };
}

function rawOf(node: SyntaxNode, redirects: Redirect[]): RawCommand {
  const cmd: RawCommand = { assigns: [], words: [], redirects: [...redirects], text: node.text };
  for (let i = 0; i < node.childCount; i++) {
    const c = node.child(i);
    if (!c) continue;
    const field = node.fieldNameForChild(i);
    if (c.type === 'variable_assignment') cmd.assigns.push(wordOf(c));
    else if (REDIRECT_TYPES.has(c.type)) { const r = redirectOf(c); if (r) cmd.redirects.push(r); }
    else if (c.type === 'command_name') cmd.words.push(wordOf(c.namedChildren[0] ?? c));
    else if (field === 'argument' || c.isNamed) cmd.words.push(wordOf(c));
  }
  const name = cmd.words[0];
  if (name && name.literal && RESERVED.has(name.text)) {
    cmd.deny_reason = `"${name.text}" where a command should be: the line cannot be read safely`;
  }
  return cmd;
}

/**
 * Every simple command in the tree, wherever it sits (pipelines, lists, subshells, groups,
 * loops, functions, substitutions, heredocs, redirect targets). Unknown node types, ERROR and
 * MISSING nodes become parts with a deny_reason: what the walker cannot model is refused.
 */
export function collectCommands(root: SyntaxNode): RawCommand[] {
  const out: RawCommand[] = [];
  const deny = (node: SyntaxNode, why: string) =>
    out.push({ assigns: [], words: [{ text: node.text.slice(0, 200), literal: false }], redirects: [], text: node.text.slice(0, 200), deny_reason: why });

  const visit = (node: SyntaxNode, pendingRedirects: Redirect[]): void => {
    if (node.isMissing) { deny(node, `the command is incomplete (missing "${node.type}")`); return; }
    if (!node.isNamed) return;
    if (node.type === 'ERROR') { deny(node, 'the command does not parse as bash'); return; }
    if (!STRUCTURE.has(node.type)) { deny(node, `bash construct "${node.type}" is not modelled by the command policy`); return; }
    // The grammar ends $'…' at the wrong quote after an escaped backslash ($'\\\\'; cmd #'): check it ourselves.
    if (node.type === 'ansi_c_string' && ansiCEnd(node.text) !== node.text.length) {
      deny(node, 'a $\'…\' string the parser misread');
      return;
    }
    // An unquoted newline ends a command in bash; a word holding one means the grammar glued two commands.
    if ((node.type === 'word' || node.type === 'number') && hasBareNewline(node.text)) {
      deny(node, 'a newline the parser read as part of a word');
      return;
    }
    // The grammar leaves some substitutions as plain text (backticks inside ${…}); bash runs them.
    if (((TEXT_LEAVES.has(node.type) && node.childCount === 0) || node.type === 'heredoc_body') && hasHiddenSubstitution(ownText(node)) && !inQuotedHeredoc(node)) {
      deny(node, 'a command substitution the parser did not model');
      return;
    }
    switch (node.type) {
      case 'redirected_statement': {
        const reds: Redirect[] = [];
        for (const c of node.children) if (c && REDIRECT_TYPES.has(c.type)) { const r = redirectOf(c); if (r) reds.push(r); }
        const body = node.childForFieldName('body');
        // Redirects on a compound statement apply to everything in it: judge them once, as their own part.
        if (!body || body.type !== 'command') out.push({ assigns: [], words: [], redirects: reds, text: node.text });
        for (const c of node.children) if (c) visit(c, body && c.id === body.id && body.type === 'command' ? reds : []);
        return;
      }
      case 'command':
        out.push(rawOf(node, pendingRedirects));
        break;
      case 'variable_assignment':
        // Standalone (not the prefix of a command): it changes PATH, IFS… for what follows.
        if (node.parent?.type !== 'command') out.push({ assigns: [], words: [wordOf(node)], redirects: [], text: node.text });
        break;
      case 'declaration_command':
      case 'unset_command':
        out.push({ assigns: [], words: node.children.filter((c): c is SyntaxNode => !!c).map((c) => c.isNamed ? wordOf(c) : { text: c.type, literal: true }), redirects: [], text: node.text });
        break;
      case 'test_command':
      case 'arithmetic_expansion':
        // `[[ -v 'a[$(cmd)]' ]]`: bash evaluates subscripts of names, running code held in quoted text.
        if (node.descendantsOfType(['raw_string', 'string_content', 'ansi_c_string']).some((d) => d && /\$\(|`/.test(d.text))) {
          out.push({ assigns: [], words: [{ text: `${node.text.slice(0, 200)} (quoted code in a test or arithmetic)`, literal: false }], redirects: [], text: node.text });
        }
        break;
      case 'for_statement': {
        // A loop variable holding `$(…)` or backticks can run code when used in arithmetic.
        const values = node.childrenForFieldName('value').filter((v): v is SyntaxNode => !!v).map(wordOf);
        if (values.some((v) => /[$`]/.test(v.text))) {
          out.push({ assigns: [], words: [{ text: `for ${node.childForFieldName('variable')?.text ?? ''} in …`, literal: false }], redirects: [], text: node.text });
        }
        break;
      }
    }
    for (const c of node.children) if (c) visit(c, []);
  };
  visit(root, []);
  for (const pos of joiningContinuations(root.text)) {
    let n: SyntaxNode | null = root.descendantForIndex(pos);
    let quoted = false;
    for (; n; n = n.parent) if (n.type === 'raw_string' || n.type === 'heredoc_body' || n.type === 'comment' || n.type === 'ansi_c_string' || n.type === 'string') { quoted = true; break; }
    if (!quoted) deny(root, 'a backslash next to a newline that the parser and bash read differently');
  }
  return out;
}

const TEXT_LEAVES = new Set(['word', 'regex', 'string_content', 'heredoc_content', 'extglob_pattern']);

function hasBareNewline(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\\') { i++; continue; }
    if (text[i] === '\n') return true;
  }
  return false;
}

/** Where bash ends a $'…' string that starts at 0: after the first quote not escaped by a backslash. */
function ansiCEnd(text: string): number {
  for (let i = 2; i < text.length; i++) {
    if (text[i] === '\\') { i++; continue; }
    if (text[i] === "'") return i + 1;
  }
  return -1;
}

/** A node's text with its named children blanked out: what the grammar left as plain text. */
function ownText(node: SyntaxNode): string {
  if (node.childCount === 0) return node.text;
  const chars = node.text.split('');
  const base = node.startIndex;
  for (const c of node.namedChildren) {
    if (!c || c.type === 'heredoc_content') continue;
    for (let i = c.startIndex - base; i < c.endIndex - base && i < chars.length; i++) chars[i] = ' ';
  }
  return chars.join('');
}

/** An unescaped backtick or `$(` left in text the grammar took as literal. */
function hasHiddenSubstitution(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\') { i++; continue; }
    if (c === '`' || (c === '$' && text[i + 1] === '(')) return true;
  }
  return false;
}

/** Heredoc bodies under a quoted delimiter (<<'EOF') are not expanded by bash. */
function inQuotedHeredoc(node: SyntaxNode): boolean {
  for (let n: SyntaxNode | null = node; n; n = n.parent) {
    if (n.type === 'heredoc_redirect') {
      const start = n.children.find((c) => c?.type === 'heredoc_start');
      return !!start && /['"\\]/.test(start.text);
    }
  }
  return false;
}

/** Positions of backslash-newlines with a non-blank character on both sides (they glue words). */
function joiningContinuations(text: string): number[] {
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== '\\') continue;
    // bash: backslash-CR is an escaped CR and the newline after it ends the command; the grammar reads a continuation.
    if (text[i + 1] === '\r' && text[i + 2] === '\n') { out.push(i); i += 2; continue; }
    const nl = text[i + 1] === '\n' ? i + 1 : -1;
    if (nl < 0) {
      if (text[i - 1] === '\n') out.push(i);
      i++;
      continue;
    }
    const before = text[i - 1];
    const after = text[nl + 1];
    if (before !== undefined && !/\s/.test(before) && after !== undefined && !/\s/.test(after)) out.push(i);
    // At the start of a line the grammar joins it to the line before; bash does not.
    else if (before === '\n') out.push(i);
    i = nl;
  }
  return out;
}
