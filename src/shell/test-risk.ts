import type { SyntaxNode } from './parser.js';
import { wordOf } from './words.js';

export const isInteger = (t: string) => /^-?([0-9]+|0[xX][0-9a-fA-F]+)$/.test(t);

const ARITH_TEST = new Set(['-eq', '-ne', '-lt', '-le', '-gt', '-ge']);

/** `[[ … ]]` forms that evaluate a value as arithmetic or as a variable name (with a subscript). */
export function testRisk(node: SyntaxNode): string | null {
  // `[ a -eq b ]` (the builtin) wants integers and evaluates nothing; `[[ ]]` evaluates arithmetic.
  const double = node.child(0)?.type === '[[';
  // `[ "$@" ]`, `[ $o ]`: one word bash splits may hold both -v and a name with a subscript.
  if (!double && (node.descendantsOfType(['simple_expansion', 'expansion', 'command_substitution']).some((e) => !!e && splits(e, node))
    || node.descendantsOfType(['word', 'concatenation']).some((w) => !!w && w.parent?.type !== 'string' && !!wordOf(w).split))) {
    return '[ … ] with an expansion bash may split into several words (it may be -v NAME, whose subscript bash evaluates): quote it as "$x"';
  }
  // An operator the grammar left as a plain word: refuse rather than guess how bash reads it.
  const risky = double ? /^-(eq|ne|lt|le|gt|ge|v|R)$/ : /^-(v|R)$/;
  if (node.descendantsOfType('word').some((w) => !!w && risky.test(w.text))) return `a test with an operator the parser read as a word`;
  for (const op of node.descendantsOfType('test_operator')) {
    if (!op) continue;
    const sibs = (op.parent?.namedChildren ?? []).filter((k): k is SyntaxNode => !!k && k.id !== op.id);
    if (ARITH_TEST.has(op.text) && double) {
      if (!sibs.every((k) => { const w = wordOf(k); return w.literal && isInteger(w.text); })) {
        return `[[ … ${op.text} … ]] evaluates its operands as arithmetic, which can run code; compare literal integers only`;
      }
    } else if (op.text === '-v' || op.text === '-R') {
      if (!sibs.every((k) => { const w = wordOf(k); return w.literal && /^[A-Za-z_][A-Za-z0-9_]*$/.test(w.text); })) {
        return `[[ ${op.text} … ]] with anything but a plain variable name evaluates a subscript, which can run code`;
      }
    }
  }
  return null;
}

/** An expansion bash splits into words inside `top`: unquoted, or `"$@"` / `"${a[@]}"`. */
function splits(e: SyntaxNode, top: SyntaxNode): boolean {
  for (let n = e.parent; n && n.id !== top.id; n = n.parent) if (n.type === 'string') return /^\$(@|\{!?[^}]*\[@\]\}|\{@)/.test(e.text);
  return true;
}

