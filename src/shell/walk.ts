import { heredocMismatch, inQuotedHeredoc, PLAIN_DELIMITER } from './heredoc.js';
import type { CommandWord } from '../core/types.js';
import type { SyntaxNode } from './parser.js';
import { wordOf } from './words.js';
import { LOOP_CODE_VAR, namedDescriptor } from './names.js';
import { isInteger, testRisk } from './test-risk.js';

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
  /** Paths a `[ … ]`/`[[ … ]]` test or a `for … in` glob looks at (existence, names): judged as listings. */
  looked?: CommandWord[];
  /** Not a command: a stand-in for a construct no command rule may allow by prefix (judged by the policy as written). */
  marker?: boolean;
}

/** `[ -e F ]`, `[[ A -nt B ]]`: operators that look at a file. */
const FILE_TEST_OP = /^-([abcdefghkprsuwxGLNOS]|nt|ot|ef)$/;

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

function rawOf(node: SyntaxNode): RawCommand {
  const cmd: RawCommand = { assigns: [], words: [], redirects: [], text: node.text };
  for (let i = 0; i < node.childCount; i++) {
    const c = node.child(i);
    if (!c) continue;
    const field = node.fieldNameForChild(i);
    if (c.type === 'variable_assignment') cmd.assigns.push(wordOf(c));
    else if (REDIRECT_TYPES.has(c.type)) continue;
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

  const src = root.text;
  const visit = (node: SyntaxNode, level: number): void => {
    if (level > MAX_NESTING) { deny(node, `the command is nested more than ${MAX_NESTING} levels deep`); return; }
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
    if ((node.type === 'heredoc_redirect' || node.type === 'herestring_redirect') && namedDescriptor(node)) {
      deny(node, 'a {NAME} before a redirection: bash stores the descriptor number in that variable, evaluating a subscript in it (which can run code)');
      return;
    }
    switch (node.type) {
      case 'command':
        out.push(rawOf(node));
        break;
      case 'file_redirect': {
        // Every redirect is judged where it stands, whatever holds it (a command, a compound
        // statement, a function definition, a heredoc line): the grammar nests them in odd places.
        const dests = node.childrenForFieldName('destination').filter((d): d is SyntaxNode => !!d);
        if (dests.length > 1) {
          deny(node, 'words after a redirect target (`cmd >f arg`): bash passes them to the command; put redirects at the end');
          return;
        }
        if (namedDescriptor(node)) { deny(node, 'a {NAME} before a redirection: bash stores the descriptor number in that variable, evaluating a subscript in it (which can run code)'); return; }
        const r = redirectOf(node);
        if (r) out.push({ assigns: [], words: [], redirects: [r], text: node.text });
        break;
      }
      case 'heredoc_redirect': {
        const why = heredocMismatch(node, src);
        if (why) { deny(node, why); return; }
        break;
      }
      case 'heredoc_start':
        // bash and the grammar only agree on plain delimiters: WORD, 'WORD', "WORD", \WORD.
        if (!PLAIN_DELIMITER.test(node.text)) {
          deny(node, 'a heredoc delimiter other than WORD, \'WORD\', "WORD" or \\WORD: the parser and bash may end it differently');
          return;
        }
        break;
      case 'function_definition':
        deny(node, 'function definitions are not allowed in a command line (a function can shadow an allowed command)');
        break;
      case 'c_style_for_statement':
        deny(node, 'C-style for loops evaluate arithmetic on variables, which can run code held in their values; use `for x in 1 2 3`');
        break;
      case 'compound_statement':
        if (node.child(0)?.type === '((' && !arithmeticSafe(node, 1)) deny(node, ARITH_REASON);
        break;
      case 'expansion': {
        const why = expansionRisk(node);
        if (why) deny(node, why);
        break;
      }
      case 'variable_assignment':
        // Standalone (not the prefix of a command): it changes PATH, IFS… for what follows.
        if (node.parent?.type !== 'command') out.push({ assigns: [], words: [wordOf(node)], redirects: [], text: node.text });
        break;
      case 'declaration_command':
      case 'unset_command':
        out.push({ assigns: [], words: node.children.filter((c): c is SyntaxNode => !!c).map((c) => c.isNamed ? wordOf(c) : { text: c.type, literal: true }), redirects: [], text: node.text });
        break;
      case 'arithmetic_expansion':
        if (!arithmeticSafe(node, 1)) deny(node, ARITH_REASON);
        break;
      case 'test_command': {
        const why = testRisk(node);
        if (why) deny(node, why);
        const looked: CommandWord[] = [];
        // `-a` is "exists" only inside `[[ ]]`; in `[ ]` it is also "and".
        const dbl = node.child(0)?.type === '[[';
        for (const op of node.descendantsOfType('test_operator')) {
          if (!op || !FILE_TEST_OP.test(op.text) || (op.text === '-a' && !dbl)) continue;
          for (const k of op.parent?.namedChildren ?? []) if (k && k.id !== op.id && k.type !== 'test_operator' && !k.type.endsWith('_expression')) looked.push(wordOf(k));
        }
        if (looked.length) out.push({ assigns: [], words: [], redirects: [], text: node.text, looked });
        // `[[ -v 'a[$(cmd)]' ]]`: bash evaluates subscripts of names, running code held in quoted text.
        if (node.descendantsOfType(['raw_string', 'string_content', 'ansi_c_string']).some((d) => d && /\$\(|`/.test(d.type === 'ansi_c_string' ? wordOf(d).text : d.text))) {
          out.push({ assigns: [], words: [{ text: `${node.text.slice(0, 200)} (quoted code in a test or arithmetic)`, literal: false }], redirects: [], text: node.text, marker: true });
        }
        break;
      }
      case 'for_statement': {
        // `for PATH in …`, `for CDPATH in …`: a loop variable is assigned like any other.
        const loopVar = node.childForFieldName('variable')?.text ?? '';
        if (LOOP_CODE_VAR.test(loopVar)) { deny(node, `${loopVar} holds code bash runs later, or changes what a command name or a cd means: not allowed as a loop variable`); return; }
        // A loop variable holding `$(…)` or backticks can run code when used in arithmetic.
        const values = node.childrenForFieldName('value').filter((v): v is SyntaxNode => !!v).map(wordOf);
        const globs = values.filter((v) => !v.literal && /[*?[]/.test(v.text));
        if (globs.length) out.push({ assigns: [], words: [], redirects: [], text: node.text, looked: globs });
        if (values.some((v) => /[$`]/.test(v.text))) {
          out.push({ assigns: [], words: [{ text: `for ${node.childForFieldName('variable')?.text ?? ''} in …`, literal: false }], redirects: [], text: node.text, marker: true });
        }
        break;
      }
    }
    for (const c of node.children) if (c) visit(c, level + 1);
  };
  visit(root, 0);
  for (const pos of joiningContinuations(root.text)) {
    let n: SyntaxNode | null = root.descendantForIndex(pos);
    let quoted = false;
    for (; n; n = n.parent) if (n.type === 'raw_string' || n.type === 'heredoc_body' || n.type === 'comment' || n.type === 'ansi_c_string' || n.type === 'string') { quoted = true; break; }
    if (!quoted) deny(root, 'a backslash next to a newline that the parser and bash read differently');
  }
  return out;
}

/** Syntax nodes deeper than this are refused (a deep tree would exhaust the stack). */
const MAX_NESTING = 1000;

const ARITH_REASON = 'arithmetic on anything but literal integers: bash evaluates variable values and array subscripts in it, which can run code (`a[$(cmd)]`)';
const ARITH_NODES = new Set(['binary_expression', 'unary_expression', 'parenthesized_expression', 'ternary_expression']);

/**
 * True when every operand of the arithmetic node (children from `from` on) is a literal
 * integer. Names are refused too: bash evaluates a variable's value as an expression, and
 * values come from places an allowed command can set (`$_`, BASH_REMATCH, `${x:=…}`, read).
 */
function arithmeticSafe(node: SyntaxNode, from: number): boolean {
  // Nested past MAX_NESTING: refused as unsafe here, not by a stack overflow.
  const ok = (n: SyntaxNode, depth = 0): boolean => {
    if (depth > MAX_NESTING) return false;
    if (!n.isNamed) return !['=', '+=', '-=', '*=', '/=', '%=', '<<=', '>>=', '&=', '^=', '|=', '++', '--', ','].includes(n.type);
    if (n.type === 'number') return isInteger(n.text);
    if (n.type === 'comment') return true;
    if (!ARITH_NODES.has(n.type)) return false;
    return n.children.every((c) => !c || ok(c, depth + 1));
  };
  for (let i = from; i < node.childCount; i++) {
    const c = node.child(i);
    if (!c) continue;
    if (!c.isNamed) { if (['))', ']', ')', '$((', '$[', '(('].includes(c.type)) continue; if (!ok(c)) return false; continue; }
    if (!ok(c)) return false;
  }
  return true;
}

/** `${…}` forms that evaluate arithmetic, follow a name held in a value, run prompt expansion or assign. */
function expansionRisk(node: SyntaxNode): string | null {
  const kids = node.children.filter((c): c is SyntaxNode => !!c);
  for (let i = 0; i < kids.length; i++) {
    const c = kids[i]!;
    if (c.type === '!' && i === 1) return '${!…} reads a variable named by a value, whose subscript bash evaluates (it can run code)';
    if (c.type === '@') return '${…@op} transformations (@P runs prompt expansion, which can run code) are not allowed';
    if (c.type === '=' || c.type === ':=') return '${x:=…} assigns a variable inside an expansion; write the assignment as its own command';
    if (c.type === 'subscript') {
      const idx = c.namedChildren.filter((k): k is SyntaxNode => !!k).slice(1);
      const t = idx.map((k) => k.text).join('');
      if (!(idx.length === 1 && (t === '@' || t === '*' || isInteger(t)))) return `the array subscript in ${node.text.slice(0, 80)} is evaluated as arithmetic, which can run code; use a literal integer`;
    }
    if (c.type === ':' && !c.isNamed) {
      // ${x:offset:length}: both are arithmetic.
      for (const k of kids.slice(i + 1)) {
        if (!k.isNamed) { if (k.type === ':' || k.type === '}') continue; return `the offset in ${node.text.slice(0, 80)} is evaluated as arithmetic`; }
        if (!((k.type === 'number' && isInteger(k.text)) || (k.type === 'unary_expression' && arithmeticSafe(k, 0)))) return `the offset in ${node.text.slice(0, 80)} is evaluated as arithmetic, which can run code; use literal integers`;
      }
      break;
    }
  }
  return null;
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
