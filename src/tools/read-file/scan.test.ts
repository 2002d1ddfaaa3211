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
    const windows = [{ offset: 1, limit: 2000 }, { offset: 3, limit: 2 }, { offset: 19_990, limit: 50 }];
    for (const [i, bytes] of cases.entries()) {
      const file = path.join(t.dir, `f${i}`);
      writeFileSync(file, bytes);
      for (const w of windows) {
        const o = { ...w, maxLineChars: 2000, display: `f${i}` };
        const fh = await open(file);
        try {
          const chunked = await scanText(fh, { ...o, signal: new AbortController().signal });
          assert.deepEqual(scanBytes(bytes, o), chunked, `case ${i} window ${JSON.stringify(w)}`);
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
