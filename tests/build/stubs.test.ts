// The build's stand-ins (scripts/stubs) behave like what they replace, and the bundle uses them.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT } from '../../src/testing/helpers.js';
// @ts-expect-error: a plain .mjs build helper, no types
import * as stub from '../../scripts/stubs/iconv-lite.mjs';
// @ts-expect-error: a plain .mjs build helper, no types
import * as zodLocales from '../../scripts/stubs/zod-locales.mjs';

const require = createRequire(import.meta.url);
const iconv = require('iconv-lite') as { getDecoder(e: string): { write(b: Buffer): string; end(): string | undefined } };

const decodeIn = (d: { write(b: Buffer): string; end(): string | undefined }, chunks: Buffer[]) => chunks.map((c) => d.write(c)).join('') + (d.end() ?? '');

test('the iconv-lite stand-in decodes like iconv-lite, in chunks cut mid-character', () => {
  const text = 'héllo wörld — “quotes” € 日本語 🎉\n';
  const cases: Array<[string, Buffer]> = [
    ['utf-8', Buffer.from(text, 'utf8')],
    ['UTF-8', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, 'utf8')])], // BOM stripped by both
    ['utf8', Buffer.from([0x61, 0xff, 0xfe, 0x62])], // invalid bytes: U+FFFD in both
    ['utf-16le', Buffer.from(text, 'utf16le')],
    ['latin1', Buffer.from('héllo wörld', 'latin1')],
    ['windows-1252', Buffer.from([0x80, 0x93, 0x94, 0x61, 0xe9])],
    ['iso-8859-2', Buffer.from([0xa1, 0xb1, 0x61])],
    ['shift_jis', Buffer.from([0x93, 0xfa, 0x96, 0x7b])],
  ];
  for (const [enc, buf] of cases) {
    for (const cut of [1, 2, 3, 5]) {
      const chunks: Buffer[] = [];
      for (let i = 0; i < buf.length; i += cut) chunks.push(buf.subarray(i, i + cut));
      assert.equal(decodeIn(stub.getDecoder(enc), chunks), decodeIn(iconv.getDecoder(enc), chunks), `${enc}, chunks of ${cut}`);
    }
  }
});

test('an unknown charset fails with the message raw-body maps to 415 encoding.unsupported', () => {
  const re = /^Encoding not recognized: /; // raw-body's ICONV_ENCODING_MESSAGE_REGEXP
  const matches = (e: unknown) => re.test((e as Error).message);
  assert.throws(() => stub.getDecoder('no-such-charset'), matches);
  assert.throws(() => iconv.getDecoder('no-such-charset'), matches);
  assert.equal(stub.encodingExists('no-such-charset'), false);
  assert.equal(stub.encodingExists('utf-8'), true);
});

test('the zod locales stand-in keeps English, the one locale zod registers', async () => {
  const { en } = await import('zod/v4/locales');
  assert.equal(zodLocales.en, en);
});

test('the bundle carries the stand-ins, not iconv-lite\'s tables or zod\'s other languages', () => {
  const bundle = readFileSync(path.join(REPO_ROOT, 'dist', 'cli.js'), 'utf8');
  assert.ok(bundle.includes('Encoding not recognized'), 'the iconv-lite stand-in is in the bundle');
  assert.ok(!bundle.includes('node_modules/iconv-lite/'), 'iconv-lite itself is bundled');
  assert.ok(!bundle.includes('erhalten'), 'zod\'s German locale is bundled (its "erhalten")');
  assert.ok(bundle.includes('Invalid input'), 'zod\'s English messages are missing');
});
