import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { tempDir } from '../testing/helpers.js';
import { OutputCapture } from './capture.js';

test('a file made on demand is only created when the output outgrows memory', async () => {
  const { dir, cleanup } = tempDir('tg-capture-');
  try {
    let made = 0;
    const open = async () => { made++; return path.join(dir, 'out.log'); };
    const small = new OutputCapture(10, 10, 100, open);
    small.push(Buffer.from('hello\n'));
    await small.ready();
    assert.deepEqual(small.finish().text, 'hello\n');
    assert.equal(made, 0, 'small output made a file');
    assert.equal(existsSync(path.join(dir, 'out.log')), false);
  } finally { cleanup(); }
});

test('chunks that arrive while the file is being made all reach it, in order', async () => {
  const { dir, cleanup } = tempDir('tg-capture-');
  try {
    const file = path.join(dir, 'out.log');
    let release!: () => void;
    const gate = new Promise<void>((r) => { release = r; });
    let made = 0;
    const cap = new OutputCapture(4, 4, 8, async () => { made++; await gate; return file; });
    const parts = ['aaaa', 'bbbb', 'cccc', 'dddd', 'eeee'];
    for (const p of parts.slice(0, 3)) cap.push(Buffer.from(p)); // the third outgrows memory: the file is asked for
    cap.push(Buffer.from(parts[3]!)); // held while the file is made
    assert.throws(() => cap.finish(), /before ready/);
    release();
    await cap.ready();
    cap.push(Buffer.from(parts[4]!));
    const r = cap.finish();
    assert.equal(made, 1);
    assert.equal(readFileSync(file, 'utf8'), parts.join(''));
    assert.equal(r.truncated, true);
    assert.equal(r.file, file);
    assert.equal(r.total_bytes, 20);
    assert.equal(r.sha256, createHash('sha256').update(parts.join('')).digest('hex'));
    assert.match(r.text, /^aaaa\n… \[20 bytes in all/);
    assert.match(r.text, /eeee$/);
  } finally { cleanup(); }
});
