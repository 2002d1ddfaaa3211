// limitText against a plain reference (the earlier cutLines, which counted the kept text again for
// every line): the same cut for random texts, limits, multi-byte characters and missing newlines.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { limitText } from './output.js';

function referenceCut(text: string, maxLines: number, maxBytes: number): string {
  let out = '';
  let lines = 0;
  let start = 0;
  while (start <= text.length && lines < maxLines) {
    const nl = text.indexOf('\n', start);
    const end = nl < 0 ? text.length : nl + 1;
    const piece = text.slice(start, end);
    if (Buffer.byteLength(out) + Buffer.byteLength(piece) > maxBytes) {
      if (lines === 0) out = Buffer.from(piece).subarray(0, maxBytes).toString('utf8').replace(/\uFFFD+$/, '');
      break;
    }
    out += piece;
    lines++;
    if (nl < 0) break;
    start = end;
  }
  return out;
}

test('limitText cuts exactly as the reference does (random texts and limits, both modes)', () => {
  let seed = 12345;
  const rnd = (n: number) => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % n; };
  const alphabet = ['a', 'b', ' ', '\n', '\n', 'é', '€', '😀'];
  for (let i = 0; i < 3000; i++) {
    const len = rnd(400);
    let text = '';
    for (let k = 0; k < len; k++) text += alphabet[rnd(alphabet.length)];
    const limits = { output_lines: 1 + rnd(30), output_bytes: 1 + rnd(300) };
    const got = limitText(text, limits);
    const over = Buffer.byteLength(text) > limits.output_bytes || got.total_lines > limits.output_lines;
    assert.equal(got.text, over ? referenceCut(text, limits.output_lines, limits.output_bytes) : text, JSON.stringify({ text, limits }));
    assert.ok(Buffer.byteLength(got.text) <= Math.max(limits.output_bytes, 0));
    if (over) {
      const both = limitText(text, limits, 'head_tail');
      assert.ok(both.text.startsWith(referenceCut(text, Math.floor(limits.output_lines / 2), Math.floor(limits.output_bytes / 2))));
    }
  }
});
