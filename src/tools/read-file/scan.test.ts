import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { tempDir } from '../../testing/helpers.js';
import { scanBytes, scanText } from './scan.js';

/** The in-memory scan (small-file fast path) and the chunked scan (big files) must agree exactly. */
test('scanBytes and scanText return the same scan for the same bytes', async () => {
  const t = tempDir('tg-scan-');
  try {
    const cases: Buffer[] = [
      Buffer.from(''),
      Buffer.from('one line, no newline'),
      Buffer.from('a\r\nb\nc\r\n'),
      Buffer.from(`${'x'.repeat(70_000)}\nshort\n${'y'.repeat(5000)}\r\nlast`),
      Buffer.from(Array.from({ length: 20_000 }, (_, i) => `line ${i}`).join('\n') + '\n'),
      Buffer.concat([Buffer.from('ok\n'.repeat(30_000)), Buffer.from('\r'), Buffer.from('\nend\n')]),
    ];
    // Random bytes biased to the edges: newlines and CRs, multi-byte characters, invalid and
    // cut UTF-8 sequences, lines just under, at and over the cut (maxLineChars 40 below).
    const edge = ['\n', '\r', '\r\n', 'é', '€', '😀', '\u2028', 'a', 'b '];
    const invalid = [[0xc3], [0xe2, 0x82], [0xf0, 0x9f, 0x98], [0xff], [0x80], [0xed, 0xa0, 0x80]];
    let seed = 7;
    const rnd = (n: number) => { seed = (seed * 1103515245 + 12345) >>> 0; return seed % n; };
    for (let k = 0; k < 60; k++) {
      const parts: Buffer[] = [];
      for (let j = rnd(400); j > 0; j--) {
        const r = rnd(10);
        if (r < 7) parts.push(Buffer.from(edge[rnd(edge.length)]!.repeat(1 + rnd(r === 0 ? 60 : 3))));
        else if (r < 9) parts.push(Buffer.from(invalid[rnd(invalid.length)]!));
        else parts.push(Buffer.from('x'.repeat(38 + rnd(6))));
      }
      cases.push(Buffer.concat(parts));
    }
    const windows = [{ offset: 1, limit: 2000 }, { offset: 3, limit: 2 }, { offset: 19_990, limit: 50 }];
    for (const [i, bytes] of cases.entries()) {
      const file = path.join(t.dir, `f${i}`);
      writeFileSync(file, bytes);
      for (const w of windows) for (const maxLineChars of [2000, 40]) {
        const o = { ...w, maxLineChars, display: `f${i}` };
        const fh = await open(file);
        try {
          const chunked = await scanText(fh, { ...o, signal: new AbortController().signal }).catch((e: Error) => e);
          if (chunked instanceof Error) assert.throws(() => scanBytes(bytes, o), /looks binary/, `case ${i}`);
          else assert.deepEqual(scanBytes(bytes, o), chunked, `case ${i} window ${JSON.stringify(w)} cut ${maxLineChars}`);
        } finally {
          await fh.close();
        }
      }
    }
    assert.throws(() => scanBytes(Buffer.from('a\0b'), { offset: 1, limit: 10, maxLineChars: 2000, display: 'bin' }), /looks binary/);
  } finally {
    t.cleanup();
  }
});
