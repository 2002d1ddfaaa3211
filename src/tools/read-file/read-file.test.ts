import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { Envelope } from '../../core/envelope.js';
import { runCall } from '../../core/pipeline.js';
import { Harness, policyFromYaml, tempDir } from '../../testing/helpers.js';
import { looksBinary } from './scan.js';

interface ReadData {
  path: string; content: string; encoding: string; offset: number; limit: number; lines_returned: number; total_lines: number;
  next_offset: number | null; truncated: boolean; lines_cut: number; line_ending?: string; size: number; mtime_ms: number; sha256: string; mime_type?: string;
}

function setup(spec: Record<string, string | Buffer>, opts: { policy?: string } = {}) {
  const t = tempDir();
  for (const [rel, content] of Object.entries(spec)) {
    mkdirSync(path.dirname(path.join(t.dir, rel)), { recursive: true });
    writeFileSync(path.join(t.dir, rel), content);
  }
  const h = new Harness([t.dir], opts.policy ? { policy: policyFromYaml(opts.policy) } : {});
  const read = async (args: Record<string, unknown>) => {
    const env = await h.call('read_file', args);
    assert.ok(h.rt.tools.get('read_file')!.envelope.safeParse(env).success, 'envelope matches the output schema');
    return env as Envelope & { data: ReadData };
  };
  return { dir: t.dir, h, read, done: () => { h.close(); t.cleanup(); } };
}

const sha = (b: string | Buffer) => createHash('sha256').update(b).digest('hex');

test('read_file: numbered lines, hash of the whole file, size, mtime, and the read is recorded', async () => {
  const text = 'first\nsecond\n\tthird\n';
  const s = setup({ 'src/a.ts': text });
  try {
    const env = await s.read({ path: 'src/a.ts' });
    assert.equal(env.ok, true);
    assert.equal(env.data.content, '     1\tfirst\n     2\tsecond\n     3\t\tthird');
    assert.equal(env.data.total_lines, 3);
    assert.equal(env.data.size, Buffer.byteLength(text));
    assert.equal(env.data.sha256, sha(text));
    assert.equal(env.data.mtime_ms, Math.floor(statSync(path.join(s.dir, 'src/a.ts')).mtimeMs));
    assert.equal(env.data.truncated, false);
    assert.equal(env.data.next_offset, null);
    assert.equal(env.data.path, 'src/a.ts');
    const rec = s.h.session.reads.get(path.join(s.dir, 'src/a.ts'));
    assert.deepEqual(rec, { size: env.data.size, mtime_ms: env.data.mtime_ms, sha256: env.data.sha256 });
    const abs = await s.read({ path: path.join(s.dir, 'src/a.ts') });
    assert.equal(abs.data.path, 'src/a.ts', 'absolute paths inside the workspace work and come back relative');
  } finally {
    s.done();
  }
});

test('read_file: accepts the old name file_path with a warning', async () => {
  const s = setup({ 'a.txt': 'x' });
  try {
    const env = await s.read({ file_path: 'a.txt' });
    assert.equal(env.ok, true);
    assert.match(env.warnings?.join(' ') ?? '', /file_path/);
  } finally {
    s.done();
  }
});

test('read_file: pages by line; the hash still covers the whole file; offset past the end is explained', async () => {
  const lines = Array.from({ length: 100 }, (_, i) => `line ${i + 1}`);
  const text = lines.join('\n');
  const s = setup({ 'big.txt': text });
  try {
    const env = await s.read({ path: 'big.txt', offset: 41, limit: 10 });
    assert.equal(env.data.content.split('\n')[0], '    41\tline 41');
    assert.equal(env.data.content.split('\n').length, 10);
    assert.equal(env.data.lines_returned, 10);
    assert.equal(env.data.next_offset, 51);
    assert.equal(env.data.truncated, true);
    assert.equal(env.data.total_lines, 100, 'a last line without a newline counts');
    assert.equal(env.data.sha256, sha(text));
    assert.equal(env.status, 'ok', 'stopping at the requested limit is not a partial result');
    const tail = await s.read({ path: 'big.txt', offset: 95 });
    assert.equal(tail.data.lines_returned, 6);
    assert.equal(tail.data.next_offset, null);
    const past = await s.read({ path: 'big.txt', offset: 500 });
    assert.equal(past.ok, true);
    assert.equal(past.data.content, '');
    assert.equal(past.data.total_lines, 100);
    assert.match(past.text, /past the end.*100 lines/);
    const bad = await s.read({ path: 'big.txt', offset: 0 });
    assert.equal(bad.error?.code, 'InvalidArguments');
  } finally {
    s.done();
  }
});

test('read_file: a page over the output limit is cut at a line, partial, and spilled whole', async () => {
  const line = 'x'.repeat(99);
  const text = Array.from({ length: 1500 }, () => line).join('\n') + '\n'; // ~150 KB
  const s = setup({ 'wide.txt': text });
  try {
    const env = await s.read({ path: 'wide.txt' });
    assert.equal(env.ok, true);
    assert.equal(env.status, 'partial');
    assert.ok(Buffer.byteLength(env.data.content) <= 51_200);
    const shown = env.data.content.split('\n');
    assert.equal(shown.length, env.data.lines_returned);
    assert.match(shown.at(-1)!, new RegExp(`^ *${env.data.lines_returned}\\t${line}$`), 'the last line shown is whole');
    assert.equal(env.data.next_offset, env.data.lines_returned + 1);
    assert.equal(env.data.sha256, sha(text), 'data.sha256 is the file');
    assert.ok(env.artifacts.storage_ref);
    const spilled = readFileSync(path.join(s.dir, env.artifacts.storage_ref!), 'utf8');
    assert.equal(spilled.split('\n').length, 1500);
    assert.equal(env.artifacts.sha256, sha(spilled));
    const next = await s.read({ path: 'wide.txt', offset: env.data.next_offset! });
    assert.match(next.data.content, new RegExp(`^ *${env.data.next_offset}\\t`));
  } finally {
    s.done();
  }
});

test('read_file: long lines are cut and counted; CRLF is shown without the CR', async () => {
  const s = setup({ 'min.js': 'a'.repeat(5000) + '\nshort\n', 'dos.txt': 'one\r\ntwo\r\n' });
  try {
    const env = await s.read({ path: 'min.js' });
    assert.equal(env.data.lines_cut, 1);
    assert.equal(env.data.truncated, true);
    const first = env.data.content.split('\n')[0]!;
    assert.ok(first.length < 2100);
    assert.match(first, /line cut at 2000 characters/);
    assert.equal(env.data.content.split('\n')[1], '     2\tshort');
    const dos = await s.read({ path: 'dos.txt' });
    assert.equal(dos.data.content, '     1\tone\n     2\ttwo');
    assert.equal(dos.data.line_ending, 'crlf');
  } finally {
    s.done();
  }
});

test('read_file: a large file is streamed (hash and line count of every byte) and paged from far in', async () => {
  const chunk = Array.from({ length: 1000 }, (_, i) => `row ${i} ${'y'.repeat(40)}`).join('\n') + '\n';
  const text = chunk.repeat(100); // 100k lines, ~4.8 MB
  const s = setup({ 'log.txt': text });
  try {
    const env = await s.read({ path: 'log.txt', offset: 99_998, limit: 5 });
    assert.equal(env.data.total_lines, 100_000);
    assert.equal(env.data.lines_returned, 3);
    assert.match(env.data.content, /^ 99998\trow 997 /);
    assert.equal(env.data.sha256, sha(text));
    assert.equal(env.data.size, Buffer.byteLength(text));
  } finally {
    s.done();
  }
});

test('read_file: binaries are refused as text and come back as base64 on request', async () => {
  const bin = Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x00, 0x00, 0xff, 0xfe, 0x10, 0x0a]);
  const latin1 = Buffer.from('caf\xe9 cr\xe8me br\xfbl\xe9e\n'.repeat(3) + 'plain ascii text '.repeat(20), 'latin1');
  const noise = Buffer.alloc(4000);
  for (let i = 0; i < noise.length; i++) noise[i] = 0x80 + ((i * 37) % 120);
  const s = setup({ 'a.out': bin, 'noise.dat': noise, 'old.txt': latin1 });
  try {
    const env = await s.read({ path: 'a.out' });
    assert.equal(env.ok, false);
    assert.equal(env.error?.code, 'BinaryFile');
    assert.match(env.error!.message, /base64/);
    assert.equal((await s.read({ path: 'noise.dat' })).error?.code, 'BinaryFile', 'invalid UTF-8 without NULs');
    const old = await s.read({ path: 'old.txt' });
    assert.equal(old.ok, true, 'a few Latin-1 bytes do not make a binary');
    const b64 = await s.read({ path: 'a.out', encoding: 'base64' });
    assert.equal(b64.ok, true);
    assert.equal(b64.data.encoding, 'base64');
    assert.deepEqual(Buffer.from(b64.data.content, 'base64'), bin);
    assert.equal(b64.data.sha256, sha(bin));
    assert.ok(s.h.session.reads.has(path.join(s.dir, 'a.out')));
  } finally {
    s.done();
  }
});

test('looksBinary: NUL or heavy invalid UTF-8, not stray bytes or U+FFFD in the file', () => {
  assert.equal(looksBinary(Buffer.from('hello\0world')), true);
  assert.equal(looksBinary(Buffer.from('plain text, ünïcödé, 日本語\n')), false);
  assert.equal(looksBinary(Buffer.from('\uFFFD'.repeat(50))), false);
  assert.equal(looksBinary(Buffer.from([0xc3, 0x28, 0xa0, 0xa1, 0xe2, 0x28, 0xa1, 0xf0, 0x28, 0x8c, 0xbc, 0xff, 0xfe])), true);
});

test('read_file: images come back as MCP image content, or as base64 when as_image is false', async () => {
  const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from([0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]), Buffer.alloc(24)]);
  const s = setup({ 'shot.dat': png });
  try {
    const out = await runCall(s.h.rt, s.h.roots, 'read_file', { path: 'shot.dat', encoding: 'base64' }, { signal: new AbortController().signal });
    assert.equal(out.envelope.ok, true);
    assert.deepEqual(out.content, [{ type: 'image', data: png.toString('base64'), mimeType: 'image/png' }], 'recognised by its bytes, not its name');
    assert.equal((out.envelope.data as ReadData).mime_type, 'image/png');
    assert.equal((out.envelope.data as ReadData).content, '');
    const raw = await s.read({ path: 'shot.dat', encoding: 'base64', as_image: false });
    assert.deepEqual(Buffer.from(raw.data.content, 'base64'), png);
    assert.equal((await s.read({ path: 'shot.dat' })).error?.code, 'BinaryFile');
  } finally {
    s.done();
  }
});

test('read_file: base64 is bounded by limits.max_file_bytes (FileTooLarge)', async () => {
  const s = setup({ 'blob.bin': Buffer.alloc(300, 7), 'small.bin': Buffer.alloc(50, 7) }, { policy: 'version: 1\nlimits:\n  max_file_bytes: 100\n' });
  try {
    const env = await s.read({ path: 'blob.bin', encoding: 'base64' });
    assert.equal(env.error?.code, 'FileTooLarge');
    assert.match(env.error!.message, /offset\/limit/);
    assert.equal((await s.read({ path: 'small.bin', encoding: 'base64' })).ok, true);
  } finally {
    s.done();
  }
});

test('read_file attacks: symlinks out, .., absolute, NUL, secrets, hard links, FIFOs', async () => {
  const out = tempDir('tg-out-');
  writeFileSync(path.join(out.dir, 'secret.txt'), 'OUTSIDE-CONTENT-42');
  const s = setup({ 'ok.txt': 'fine', '.env': 'SECRET=1', '.ssh/id_rsa': 'KEY', 'conf/tls.key': 'K', 'data.txt': 'shared' });
  symlinkSync(path.join(out.dir, 'secret.txt'), path.join(s.dir, 'link.txt'));
  symlinkSync(out.dir, path.join(s.dir, 'dirlink'));
  symlinkSync(path.join(s.dir, '.env'), path.join(s.dir, 'innocent.txt'));
  symlinkSync(path.join(s.dir, 'ok.txt'), path.join(s.dir, 'alias.txt'));
  try {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ path: 'link.txt' }, 'PathTraversalBlocked'],
      [{ path: 'dirlink/secret.txt' }, 'PathTraversalBlocked'],
      [{ path: '../' + path.basename(out.dir) + '/secret.txt' }, 'PathTraversalBlocked'],
      [{ path: path.join(out.dir, 'secret.txt') }, 'PathTraversalBlocked'],
      [{ path: 'ok.txt\0.png' }, 'PathTraversalBlocked'],
      [{ path: '.env' }, 'PathDenied'],
      [{ path: '.ssh/id_rsa' }, 'PathDenied'],
      [{ path: 'conf/tls.key' }, 'PathDenied'],
      [{ path: 'innocent.txt' }, 'PathDenied'],
      [{ path: '.env', encoding: 'base64' }, 'PathDenied'],
    ];
    for (const [args, code] of cases) {
      const env = await s.read(args);
      assert.equal(env.ok, false, JSON.stringify(args));
      assert.equal(env.error?.code, code, JSON.stringify(args));
      // Without the random ids: a ULID may spell KEY (one did, tc_01M85RWC7JJQDBKEYYYCHVPFC7).
      const { tool_call_id: _c, trace_id: _t, ...shown } = env;
      assert.doesNotMatch(JSON.stringify(shown), /OUTSIDE-CONTENT|SECRET=1|KEY/);
    }
    assert.equal((await s.read({ path: 'alias.txt' })).data.content, '     1\tfine', 'a link inside the workspace is fine');

    linkSync(path.join(s.dir, 'data.txt'), path.join(s.dir, 'data-link.txt'));
    const hard = await s.read({ path: 'data.txt' });
    assert.equal(hard.error?.code, 'PathDenied');
    assert.match(hard.error!.message, /hard link/);

    execFileSync('mkfifo', [path.join(s.dir, 'pipe')]);
    const fifo = await s.read({ path: 'pipe' });
    assert.equal(fifo.ok, false);
    assert.equal(fifo.error?.code, 'PathDenied');

    const dir = await s.read({ path: 'conf' });
    assert.equal(dir.error?.code, 'InvalidArguments');
    assert.match(dir.error!.message, /list_dir/);
    const missing = await s.read({ path: 'nope.txt' });
    assert.equal(missing.error?.code, 'NotFound');
    assert.match(missing.error!.message, /list_dir or glob/);
  } finally {
    s.done();
    out.cleanup();
  }
});

test('read_file: hard links are readable when the policy allows them', async () => {
  const s = setup({ 'data.txt': 'shared' }, { policy: 'version: 1\npaths:\n  allow_hardlinks: true\n' });
  linkSync(path.join(s.dir, 'data.txt'), path.join(s.dir, 'data-link.txt'));
  try {
    const env = await s.read({ path: 'data-link.txt' });
    assert.equal(env.ok, true);
    assert.equal(env.data.content, '     1\tshared');
  } finally {
    s.done();
  }
});

test('read_file: empty file', async () => {
  const s = setup({ 'empty.txt': '' });
  try {
    const env = await s.read({ path: 'empty.txt' });
    assert.equal(env.ok, true);
    assert.deepEqual([env.data.content, env.data.total_lines, env.data.size, env.data.next_offset], ['', 0, 0, null]);
    assert.equal(env.data.sha256, sha(''));
  } finally {
    s.done();
  }
});

test('read_file: a CRLF or a UTF-8 character split across read chunks is handled', async () => {
  const crlf = 'a'.repeat(65_535) + '\r\nb\r\n';
  const utf = 'é'.repeat(40_000) + '\nz\n'; // 2-byte chars: one straddles the 64 KB boundary
  const s = setup({ 'crlf.txt': crlf, 'utf.txt': utf });
  try {
    const env = await s.read({ path: 'crlf.txt', offset: 2 });
    assert.equal(env.data.content, '     2\tb');
    assert.equal(env.data.line_ending, 'crlf');
    const u = await s.read({ path: 'utf.txt', limit: 1 });
    assert.doesNotMatch(u.data.content, /\uFFFD/);
    assert.equal(u.data.total_lines, 2);
  } finally {
    s.done();
  }
});
