import type { SyntaxNode } from './parser.js';

/** Here-document delimiters bash and the grammar read alike: WORD, 'WORD', "WORD", \\WORD. */
export const PLAIN_DELIMITER = /^([A-Za-z0-9_-]+|'[A-Za-z0-9_-]+'|"[A-Za-z0-9_-]+"|\\[A-Za-z0-9_-]+)$/;

/**
 * Where the grammar and bash would end a here-document differently, why; else null. bash ends it
 * at the first line that is exactly the delimiter (after leading tabs, with <<-); the grammar also
 * takes "EOF ", "EOF\r", " EOF" or "  EOF" under <<-, and a delimiter joined to the line above by
 * a backslash-newline in an unquoted body. What it then judged as the next commands, bash reads as
 * body text, and runs the $(…) in it (cat <<EOF, x, "EOF ", echo '$(touch P)': touch ran).
 */
export function heredocMismatch(node: SyntaxNode, src: string): string | null {
  let start: SyntaxNode | null = null;
  let end: SyntaxNode | null = null;
  let body: SyntaxNode | null = null;
  let stripTabs = false;
  for (let i = 0; i < node.childCount; i++) {
    const c = node.child(i)!;
    if (c.type === 'heredoc_start') start = c;
    else if (c.type === 'heredoc_end') end = c;
    else if (c.type === 'heredoc_body') body = c;
    else if (c.type === '<<-') stripTabs = true;
  }
  // Malformed (ERROR/MISSING nodes) or an unusual delimiter: refused where those are judged.
  if (!start || !PLAIN_DELIMITER.test(start.text)) return null;
  if (!end) return 'a here-document without its end line: bash would read what follows as its text';
  const quoted = /^['"\\]/.test(start.text);
  const delim = start.text.replace(/^['"\\]/, '').replace(/['"]$/, '');
  const lineStart = src.lastIndexOf('\n', end.startIndex - 1) + 1;
  let lineEnd = src.indexOf('\n', end.endIndex);
  if (lineEnd < 0) lineEnd = src.length;
  const line = src.slice(lineStart, lineEnd);
  const bare = stripTabs ? line.replace(/^\t+/, '') : line;
  if (bare !== delim || end.endIndex !== lineEnd) {
    return `a here-document end line bash would not take for its end (${JSON.stringify(line.slice(0, 40))}): the end must be ${stripTabs ? 'tabs and ' : ''}"${delim}" alone on its line`;
  }
  const bodyText = src.slice(body ? body.startIndex : lineStart, lineStart);
  if (!quoted && /(^|[^\\])(\\\\)*\\\r?\n/.test(bodyText)) return 'a backslash-newline in an unquoted here-document (bash joins the lines, and may end the text elsewhere)';
  for (const l of bodyText.split('\n').slice(0, -1)) {
    if ((stripTabs ? l.replace(/^\t+/, '') : l) === delim) return `a here-document line bash would take for its end ("${delim}") before the parser's`;
  }
  return null;
}

/** Heredoc bodies under a quoted delimiter (<<'EOF') are not expanded by bash. */
export function inQuotedHeredoc(node: SyntaxNode): boolean {
  for (let n: SyntaxNode | null = node; n; n = n.parent) {
    if (n.type === 'heredoc_redirect') {
      const start = n.children.find((c) => c?.type === 'heredoc_start');
      return !!start && /['"\\]/.test(start.text);
    }
  }
  return false;
}
