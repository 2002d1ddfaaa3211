import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Harness, policyFromYaml, tempDir } from '../../testing/helpers.js';

const allowAll = () => policyFromYaml('rules:\n  - tool: "*"\n    decision: allow\n');
const sha = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');

function setup() {
  const { dir, cleanup } = tempDir('tg-append-');
  const h = new Harness([dir], { policy: allowAll() });
  return { dir, h, file: (n: string) => path.join(dir, n), done: () => { h.close(); cleanup(); } };
}

test('write_file append: adds to an existing file without a prior read, creates a missing one', async () => {
  const s = setup();
  try {
    writeFileSync(s.file('log.txt'), 'one\n');
    const env = await s.h.call('write_file', { path: 'log.txt', content: 'two\n', append: true });
    assert.equal(env.ok, true, JSON.stringify(env.error));
    assert.equal(readFileSync(s.file('log.txt'), 'utf8'), 'one\ntwo\n');
    const d = env.data as { created: boolean; added_lines: number; removed_lines: number; sha256: string };
    assert.equal(d.created, false);
    assert.equal(d.added_lines, 1);
    assert.equal(d.removed_lines, 0);
    assert.equal(d.sha256, sha('one\ntwo\n'));
    const fresh = await s.h.call('write_file', { path: 'new.txt', content: 'first\n', append: true });
    assert.equal(fresh.ok, true, JSON.stringify(fresh.error));
    assert.equal(readFileSync(s.file('new.txt'), 'utf8'), 'first\n');
  } finally { s.done(); }
});

test('write_file append: the appended-to content stays unread, so a later overwrite still needs a read', async () => {
  const s = setup();
  try {
    writeFileSync(s.file('notes.txt'), 'secret plans\n');
    assert.equal((await s.h.call('write_file', { path: 'notes.txt', content: 'more\n', append: true })).ok, true);
    const over = await s.h.call('write_file', { path: 'notes.txt', content: 'clobbered\n' });
    assert.equal(over.error?.code, 'ReadRequired');
    assert.equal(readFileSync(s.file('notes.txt'), 'utf8'), 'secret plans\nmore\n');
  } finally { s.done(); }
});

test('write_file append: expected_sha256 is checked when given; CRLF files stay CRLF; binaries are refused', async () => {
  const s = setup();
  try {
    writeFileSync(s.file('a.txt'), 'a\n');
    const stale = await s.h.call('write_file', { path: 'a.txt', content: 'b\n', append: true, expected_sha256: sha('other') });
    assert.equal(stale.error?.code, 'StaleRead');
    assert.equal(readFileSync(s.file('a.txt'), 'utf8'), 'a\n');
    const ok = await s.h.call('write_file', { path: 'a.txt', content: 'b\n', append: true, expected_sha256: sha('a\n') });
    assert.equal(ok.ok, true, JSON.stringify(ok.error));
    assert.equal(readFileSync(s.file('a.txt'), 'utf8'), 'a\nb\n');

    writeFileSync(s.file('win.txt'), 'x\r\n');
    assert.equal((await s.h.call('write_file', { path: 'win.txt', content: 'y\n', append: true })).ok, true);
    assert.equal(readFileSync(s.file('win.txt'), 'utf8'), 'x\r\ny\r\n');

    writeFileSync(s.file('bin.dat'), Buffer.from([0, 1, 2, 0xff, 0xfe, 0]));
    const bin = await s.h.call('write_file', { path: 'bin.dat', content: 'z', append: true });
    assert.equal(bin.error?.code, 'InvalidArguments');
  } finally { s.done(); }
});

test('write_file append: concurrent appends all land (the path lock serialises them)', async () => {
  const s = setup();
  try {
    writeFileSync(s.file('c.txt'), '');
    const rs = await Promise.all(Array.from({ length: 10 }, (_, i) => s.h.call('write_file', { path: 'c.txt', content: `line ${i}\n`, append: true })));
    for (const r of rs) assert.equal(r.ok, true, JSON.stringify(r.error));
    const lines = readFileSync(s.file('c.txt'), 'utf8').trim().split('\n').sort();
    assert.deepEqual(lines, Array.from({ length: 10 }, (_, i) => `line ${i}`).sort());
  } finally { s.done(); }
});

test('write_file without append still replaces and still needs a read (control)', async () => {
  const s = setup();
  try {
    writeFileSync(s.file('r.txt'), 'old\n');
    assert.equal((await s.h.call('write_file', { path: 'r.txt', content: 'new\n' })).error?.code, 'ReadRequired');
  } finally { s.done(); }
});
