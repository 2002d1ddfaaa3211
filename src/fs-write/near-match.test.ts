import assert from 'node:assert/strict';
import { test } from 'node:test';
import { explainNoMatch } from './near-match.js';

const FILE = 'function main() {\n    const msg = \u201chello\u201d;\n    return msg;\r\n}\n';

test('NoMatch near-matches: each kind names the line and what differs', () => {
  const rows: Array<[string, string, number]> = [
    ['\tconst msg = \u201chello\u201d;', 'whitespace', 2],
    ['FUNCTION main() {', 'case', 1],
    ['    const msg = "hello";', 'quotes', 2],
    ['    return msg;\n}', 'line_endings', 3],
    ['function main() {\n    const msg = \u201cbye\u201d;', 'partial', 2],
  ];
  for (const [old, kind, line] of rows) {
    const m = explainNoMatch(FILE, old);
    assert.equal(m.kind, kind, `${JSON.stringify(old)}: ${m.hint}`);
    assert.equal(m.line, line, `${JSON.stringify(old)}: ${m.hint}`);
    assert.ok(m.hint.length > 20);
  }
  assert.equal(explainNoMatch(FILE, 'zzzz qqqq').kind, 'none');
});

test('the whitespace hint says tabs vs spaces', () => {
  const m = explainNoMatch('if x:\n\treturn 1\n', 'if x:\n    return 1');
  assert.equal(m.kind, 'whitespace');
  assert.match(m.hint, /1 tab\(s\).*4 space\(s\)/);
});
