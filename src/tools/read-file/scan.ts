import { reclaimAfterLargeFile } from '../../core/reclaim.js';
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
 * Line scanner fed chunk by chunk: the hash and line count need every byte, but only the
 * lines in [offset, offset + limit) are kept, each at most maxLineChars long. Throws
 * BinaryFile when the first 8 KB look binary.
 */
class TextScanner {
  private readonly hash = createHash('sha256');
  private readonly first: number;
  private readonly last: number;
  private readonly maxLineBytes: number;
  private readonly lines: string[] = [];
  private linesCut = 0;
  private lineNo = 1;
  private parts: Buffer[] = [];
  private partBytes = 0;
  private overLong = false;
  private pendingBytes = 0; // bytes of the current line, kept or not
  private size = 0;
  private crlf = 0;
  private lf = 0;
  private lastByte = -1;
  private sniffed = false;
  private sniff: Buffer | null = null;

  constructor(private readonly opts: { offset: number; limit: number; maxLineChars: number; display: string }, private readonly copy: boolean) {
    this.first = opts.offset;
    this.last = opts.offset + opts.limit - 1;
    this.maxLineBytes = opts.maxLineChars * 4 + 4;
  }

  private keepPiece(piece: Buffer): void {
    if (this.lineNo < this.first || this.lineNo > this.last || this.overLong) return;
    const room = this.maxLineBytes - this.partBytes;
    if (piece.length > room) { this.overLong = true; piece = piece.subarray(0, room); }
    this.parts.push(this.copy ? Buffer.from(piece) : piece); // copy when the caller reuses its buffer
    this.partBytes += piece.length;
  }

  private endLine(endsWithCr: boolean): void {
    if (this.lineNo >= this.first && this.lineNo <= this.last) {
      let s = (this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts)).toString('utf8');
      if (endsWithCr && s.endsWith('\r')) s = s.slice(0, -1);
      if (this.overLong || s.length > this.opts.maxLineChars) {
        s = `${s.slice(0, this.opts.maxLineChars)} … [line cut at ${this.opts.maxLineChars} characters]`;
        this.linesCut++;
      }
      this.lines.push(s);
    }
    this.lineNo++;
    this.parts = [];
    this.partBytes = 0;
    this.overLong = false;
    this.pendingBytes = 0;
  }

  push(chunk: Buffer): void {
    this.hash.update(chunk);
    this.size += chunk.length;
    if (!this.sniffed) {
      this.sniff = this.sniff ? Buffer.concat([this.sniff, chunk]) : Buffer.from(chunk.subarray(0, SNIFF_BYTES));
      if (this.sniff.length >= SNIFF_BYTES) this.sniffed = true;
      if (this.sniffed && looksBinary(this.sniff.subarray(0, SNIFF_BYTES))) throw binaryError(this.opts.display);
    }
    let pos = 0;
    while (pos < chunk.length) {
      const nl = chunk.indexOf(10, pos);
      if (nl < 0) {
        this.keepPiece(chunk.subarray(pos));
        this.pendingBytes += chunk.length - pos;
        this.lastByte = chunk[chunk.length - 1]!;
        break;
      }
      const cr = nl > pos ? chunk[nl - 1] === 13 : this.pendingBytes > 0 && this.lastByte === 13;
      if (cr) this.crlf++; else this.lf++;
      this.keepPiece(chunk.subarray(pos, nl));
      this.endLine(cr);
      this.lastByte = 10;
      pos = nl + 1;
    }
  }

  finish(): TextScan {
    if (!this.sniffed && this.sniff && looksBinary(this.sniff)) throw binaryError(this.opts.display);
    if (this.pendingBytes > 0) this.endLine(false);
    const { crlf, lf } = this;
    return {
      size: this.size,
      sha256: this.hash.digest('hex'),
      total_lines: this.lineNo - 1,
      lines: this.lines,
      lines_cut: this.linesCut,
      line_ending: crlf && lf ? 'mixed' : crlf ? 'crlf' : lf ? 'lf' : 'none',
    };
  }
}

/** Reads the whole file once, in chunks, and scans it (see TextScanner). */
export async function scanText(fh: FileHandle, opts: { offset: number; limit: number; maxLineChars: number; signal: AbortSignal; display: string }): Promise<TextScan> {
  const scanner = new TextScanner(opts, true);
  const buf = Buffer.allocUnsafe(CHUNK);
  for (;;) {
    if (opts.signal.aborted) throw new ToolError('Cancelled', 'The read was cancelled.');
    const { bytesRead } = await fh.read(buf, 0, CHUNK, null);
    if (bytesRead === 0) break;
    scanner.push(buf.subarray(0, bytesRead));
  }
  return scanner.finish();
}

/**
 * Scans bytes already in memory (a small file read in one go): the same result as scanText,
 * from one decode of the whole buffer. That is the same text as decoding line by line: a
 * newline byte never belongs to a UTF-8 sequence, valid or not, so it ends a cut one there too;
 * and a long line cut after maxLineChars keeps the same first characters either way.
 */
export function scanBytes(bytes: Buffer, opts: { offset: number; limit: number; maxLineChars: number; display: string }): TextScan {
  if (looksBinary(bytes.subarray(0, SNIFF_BYTES))) throw binaryError(opts.display);
  const text = bytes.toString('utf8');
  const first = opts.offset;
  const last = opts.offset + opts.limit - 1;
  const max = opts.maxLineChars;
  const lines: string[] = [];
  let linesCut = 0;
  let crlf = 0;
  let lf = 0;
  let lineNo = 1;
  for (let pos = 0; pos < text.length; lineNo++) {
    const nl = text.indexOf('\n', pos);
    const end = nl < 0 ? text.length : nl;
    const cr = nl >= 0 && end > pos && text.charCodeAt(end - 1) === 13;
    if (nl >= 0) { if (cr) crlf++; else lf++; }
    if (lineNo >= first && lineNo <= last) {
      let line = text.slice(pos, cr ? end - 1 : end);
      if (line.length > max) {
        line = `${line.slice(0, max)} … [line cut at ${max} characters]`;
        linesCut++;
      }
      lines.push(line);
    }
    pos = nl < 0 ? text.length : nl + 1;
  }
  return {
    size: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    total_lines: lineNo - 1,
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
  reclaimAfterLargeFile(off);
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
