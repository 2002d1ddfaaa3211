import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { ToolError } from '../../core/errors.js';

/** Bytes looked at to tell text from binary. */
export const SNIFF_BYTES = 8192;
const CHUNK = 64 * 1024;

export interface TextScan {
  /** Bytes actually read (the file's size unless it changed while being read). */
  size: number;
  sha256: string;
  total_lines: number;
  /** The requested lines, line endings removed, each cut to maxLineChars. */
  lines: string[];
  /** How many of `lines` were cut. */
  lines_cut: number;
  line_ending: 'lf' | 'crlf' | 'mixed' | 'none';
}

/**
 * A NUL byte in the sample, or many bytes that are not UTF-8, means binary. A few stray
 * Latin-1 bytes in a text file do not: those lines show U+FFFD instead.
 */
export function looksBinary(sample: Buffer): boolean {
  if (sample.includes(0)) return true;
  if (sample.length === 0) return false;
  const decoded = sample.toString('utf8');
  let bad = 0;
  for (let i = decoded.indexOf('\uFFFD'); i >= 0; i = decoded.indexOf('\uFFFD', i + 1)) bad++;
  if (bad === 0) return false;
  let genuine = 0; // U+FFFD written in the file itself (EF BF BD)
  for (let i = sample.indexOf('\uFFFD'); i >= 0; i = sample.indexOf('\uFFFD', i + 3)) genuine++;
  // A multi-byte character cut at the end of the sample is not evidence.
  return (bad - genuine) > 4 && (bad - genuine) * 20 > sample.length;
}

/**
 * Reads the whole file once, in chunks: the hash and line count need every byte, but only
 * the lines in [offset, offset + limit) are kept, each at most maxLineChars long.
 * Throws BinaryFile when the first 8 KB look binary.
 */
export async function scanText(fh: FileHandle, opts: { offset: number; limit: number; maxLineChars: number; signal: AbortSignal; display: string }): Promise<TextScan> {
  const hash = createHash('sha256');
  const buf = Buffer.allocUnsafe(CHUNK);
  const first = opts.offset;
  const last = opts.offset + opts.limit - 1;
  const maxLineBytes = opts.maxLineChars * 4 + 4;
  const lines: string[] = [];
  let linesCut = 0;
  let lineNo = 1;
  let parts: Buffer[] = [];
  let partBytes = 0;
  let overLong = false;
  let pendingBytes = 0; // bytes of the current line, kept or not
  let size = 0;
  let crlf = 0;
  let lf = 0;
  let lastByte = -1;
  let sniffed = false;

  const keepPiece = (piece: Buffer) => {
    if (lineNo < first || lineNo > last || overLong) return;
    const room = maxLineBytes - partBytes;
    if (piece.length > room) { overLong = true; piece = piece.subarray(0, room); }
    parts.push(Buffer.from(piece)); // copy: buf is reused
    partBytes += piece.length;
  };
  const endLine = (endsWithCr: boolean) => {
    if (lineNo >= first && lineNo <= last) {
      let s = (parts.length === 1 ? parts[0]! : Buffer.concat(parts)).toString('utf8');
      if (endsWithCr && s.endsWith('\r')) s = s.slice(0, -1);
      if (overLong || s.length > opts.maxLineChars) {
        s = `${s.slice(0, opts.maxLineChars)} … [line cut at ${opts.maxLineChars} characters]`;
        linesCut++;
      }
      lines.push(s);
    }
    lineNo++;
    parts = [];
    partBytes = 0;
    overLong = false;
    pendingBytes = 0;
  };

  let sniff: Buffer | null = null;
  for (;;) {
    if (opts.signal.aborted) throw new ToolError('Cancelled', 'The read was cancelled.');
    const { bytesRead } = await fh.read(buf, 0, CHUNK, null);
    if (bytesRead === 0) break;
    const chunk = buf.subarray(0, bytesRead);
    hash.update(chunk);
    size += bytesRead;
    if (!sniffed) {
      sniff = sniff ? Buffer.concat([sniff, chunk]) : Buffer.from(chunk.subarray(0, SNIFF_BYTES));
      if (sniff.length >= SNIFF_BYTES) sniffed = true;
      if (sniffed && looksBinary(sniff.subarray(0, SNIFF_BYTES))) throw binaryError(opts.display);
    }
    let pos = 0;
    while (pos < chunk.length) {
      const nl = chunk.indexOf(10, pos);
      if (nl < 0) {
        keepPiece(chunk.subarray(pos));
        pendingBytes += chunk.length - pos;
        lastByte = chunk[chunk.length - 1]!;
        break;
      }
      const cr = nl > pos ? chunk[nl - 1] === 13 : pendingBytes > 0 && lastByte === 13;
      if (cr) crlf++; else lf++;
      keepPiece(chunk.subarray(pos, nl));
      endLine(cr);
      lastByte = 10;
      pos = nl + 1;
    }
  }
  if (!sniffed && sniff && looksBinary(sniff)) throw binaryError(opts.display);
  const trailing = pendingBytes > 0;
  if (trailing) endLine(false);
  const total = lineNo - 1;
  return {
    size,
    sha256: hash.digest('hex'),
    total_lines: total,
    lines,
    lines_cut: linesCut,
    line_ending: crlf && lf ? 'mixed' : crlf ? 'crlf' : lf ? 'lf' : 'none',
  };
}

export function binaryError(display: string): ToolError {
  return new ToolError('BinaryFile', `${display} looks binary (NUL bytes or invalid UTF-8 near the start); read it with encoding "base64" if you need the bytes.`);
}

/** Reads the whole file (the caller has checked its size). */
export async function readAll(fh: FileHandle, size: number, signal: AbortSignal): Promise<Buffer> {
  const out = Buffer.allocUnsafe(size);
  let off = 0;
  while (off < size) {
    if (signal.aborted) throw new ToolError('Cancelled', 'The read was cancelled.');
    const { bytesRead } = await fh.read(out, off, Math.min(CHUNK * 16, size - off), null);
    if (bytesRead === 0) break;
    off += bytesRead;
  }
  return out.subarray(0, off);
}

/** Lines in a buffer, counted as read_file counts them (a last line without a newline counts). */
export function countLines(b: Buffer): number {
  let n = 0;
  for (let i = b.indexOf(10); i >= 0; i = b.indexOf(10, i + 1)) n++;
  return b.length > 0 && b[b.length - 1] !== 10 ? n + 1 : n;
}

const IMAGE_MAGIC: Array<{ mime: string; test(b: Buffer): boolean }> = [
  { mime: 'image/png', test: (b) => b.length >= 8 && b.readUInt32BE(0) === 0x89504e47 && b.readUInt32BE(4) === 0x0d0a1a0a },
  { mime: 'image/jpeg', test: (b) => b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  { mime: 'image/gif', test: (b) => b.length >= 6 && (b.toString('latin1', 0, 6) === 'GIF87a' || b.toString('latin1', 0, 6) === 'GIF89a') },
  { mime: 'image/webp', test: (b) => b.length >= 12 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP' },
];

/** The image type named by the file's first bytes (never by its extension), or null. */
export function imageMime(b: Buffer): string | null {
  return IMAGE_MAGIC.find((m) => m.test(b))?.mime ?? null;
}
