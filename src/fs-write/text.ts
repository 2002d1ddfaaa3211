import { ToolError } from '../core/errors.js';

export type Eol = 'lf' | 'crlf' | 'mixed' | 'none';

/** A text file as the edit tools see it: the characters, and how to put them back byte for byte. */
export interface TextFile {
  text: string;
  /** The file started with a UTF-8 byte order mark (kept on write). */
  bom: boolean;
  eol: Eol;
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function detectEol(text: string): Eol {
  let crlf = 0;
  let lf = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) {
    if (i > 0 && text.charCodeAt(i - 1) === 13) crlf++;
    else lf++;
    if (crlf > 0 && lf > 0) return 'mixed';
  }
  return crlf > 0 ? 'crlf' : lf > 0 ? 'lf' : 'none';
}

/** Decodes UTF-8 text; NUL bytes or invalid UTF-8 mean a binary file, which the edit tools refuse. */
export function decodeText(buf: Buffer, display: string): TextFile {
  const bom = buf.length >= 3 && buf.subarray(0, 3).equals(BOM);
  const body = bom ? buf.subarray(3) : buf;
  let text: string;
  try {
    if (body.includes(0)) throw new Error('NUL byte');
    text = decoder.decode(body);
  } catch {
    throw new ToolError('BinaryFile', `${display} is not UTF-8 text; the edit tools change text files only (write_file can replace it whole after a read).`,
      { details: { path: display } });
  }
  return { text, bom, eol: detectEol(text) };
}

/** Like decodeText, but null instead of an error (diffs of binary files). */
export function tryDecodeText(buf: Buffer): TextFile | null {
  try {
    return decodeText(buf, '');
  } catch {
    return null;
  }
}

export function encodeText(text: string, bom: boolean): Buffer {
  const body = Buffer.from(text, 'utf8');
  return bom ? Buffer.concat([BOM, body]) : body;
}

/** `\r\n` → `\n`; lone `\r` stays. */
export function toLf(text: string): string {
  return text.includes('\r\n') ? text.replace(/\r\n/g, '\n') : text;
}

/** `\n` → `\r\n` (the text must be LF-only). */
export function toCrlf(text: string): string {
  return text.replace(/\n/g, '\r\n');
}

/** 1-based line number of a character offset. */
export function lineAt(text: string, offset: number): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** 1-based line numbers of several ascending offsets, in one pass. */
export function linesAt(text: string, offsets: number[]): number[] {
  const out: number[] = [];
  let line = 1;
  let pos = 0;
  for (const off of offsets) {
    for (let i = text.indexOf('\n', pos); i >= 0 && i < off; i = text.indexOf('\n', i + 1)) { line++; pos = i + 1; }
    out.push(line);
  }
  return out;
}
