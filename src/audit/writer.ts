import { constants, mkdirSync, openSync, fstatSync, readSync, writeSync, fsyncSync, closeSync, ftruncateSync } from 'node:fs';
import path from 'node:path';
import { GENESIS, cutLineRecord, hashLine, type AuditRecord } from './record.js';

/** The last line of the first `size` bytes (trailing newlines ignored) and the byte offset it starts at. */
function lastLineAt(fd: number, size: number): { line: string; start: number } | null {
  if (size === 0) return null;
  let chunk = 64 * 1024;
  for (;;) {
    const start = Math.max(0, size - chunk);
    const buf = Buffer.alloc(size - start);
    readSync(fd, buf, 0, buf.length, start);
    let end = buf.length;
    while (end > 0 && buf[end - 1] === 0x0a) end--;
    // 0x0a never occurs inside a multi-byte UTF-8 character, so a byte search is safe.
    if (end === 0 && start === 0) return null;
    const nl = end === 0 ? -1 : buf.lastIndexOf(0x0a, end - 1);
    if (end > 0 && (nl >= 0 || start === 0)) return { line: buf.subarray(nl + 1, end).toString('utf8'), start: start + nl + 1 };
    chunk *= 4;
  }
}

function lastLineOf(fd: number, size: number): string | null {
  return lastLineAt(fd, size)?.line ?? null;
}

/** How long a half-written last line must stay unchanged before it is taken for a crash's. */
const SETTLE_MS = 50;
const SETTLE_STEP_MS = 5;
/** Give up waiting for another writer after this (it then counts as crashed mid-line). */
const SETTLE_MAX_MS = 2000;

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Appends one JSON line per call with a hash chain. Writes are synchronous appends to
 * an O_APPEND descriptor, done before the result is returned, so an acknowledged record
 * survives a crash of the server (fsync on request survives a crash of the machine).
 * If another process appended meanwhile (toolgate call beside a server), the chain
 * continues from the line actually last in the file.
 */
export class AuditWriter {
  private fd: number;
  private headFd: number;
  private headSize: number;
  private prev = GENESIS;
  private knownSize = 0;
  readonly headPath: string;

  constructor(readonly file: string, private readonly fsync = false) {
    mkdirSync(path.dirname(file), { recursive: true });
    this.fd = openSync(file, 'a+', 0o600);
    this.headPath = `${file}.head`;
    // Not O_APPEND: the head is overwritten at offset 0.
    this.headFd = openSync(this.headPath, constants.O_RDWR | constants.O_CREAT, 0o600);
    this.headSize = fstatSync(this.headFd).size;
    this.resync();
  }

  /**
   * The file's size once its last line is whole, or with `open` set when it still is not after
   * the file stopped growing for SETTLE_MS: a reader can see another process's long append half
   * done, and that is not a crash (ending that line would break the other writer's record).
   */
  private settledEnd(): { size: number; open: boolean } {
    const end = Buffer.alloc(1);
    let size = fstatSync(this.fd).size;
    let still = 0;
    for (let waited = 0; ; waited += SETTLE_STEP_MS) {
      if (size === 0) return { size, open: false };
      readSync(this.fd, end, 0, 1, size - 1);
      if (end[0] === 0x0a) return { size, open: false };
      if (still >= SETTLE_MS || waited >= SETTLE_MAX_MS) return { size, open: true };
      sleepSync(SETTLE_STEP_MS);
      const now = fstatSync(this.fd).size;
      still = now === size ? still + SETTLE_STEP_MS : 0;
      size = now;
    }
  }

  private resync(): void {
    const { size, open } = this.settledEnd();
    if (size > 0) {
      if (open) {
        // A SIGKILL in the middle of a long write leaves half a line, never acknowledged. End it
        // and chain a record to it that says so, in one write: the next record is not glued to
        // it, and verify can tell a line cut by a crash from an edited one.
        const cut = lastLineAt(this.fd, size) ?? { line: '', start: 0 };
        // The marker also names the hash the chain had before the cut line (a cut line rarely
        // holds its own prev_hash), so the record before it cannot be edited or removed unseen.
        const before = lastLineOf(this.fd, cut.start);
        const marker = JSON.stringify(cutLineRecord(cut.line, before === null ? GENESIS : hashLine(before)));
        const buf = Buffer.from(`\n${marker}\n`, 'utf8');
        for (let off = 0; off < buf.length;) off += writeSync(this.fd, buf, off, buf.length - off);
        if (this.fsync) fsyncSync(this.fd);
        this.knownSize = size + buf.length;
        this.prev = hashLine(marker);
        this.writeHead();
        return;
      }
    }
    const last = lastLineOf(this.fd, size);
    this.prev = last ? hashLine(last) : GENESIS;
    this.knownSize = size;
  }

  append(rec: Omit<AuditRecord, 'prev_hash'>): string {
    if (fstatSync(this.fd).size !== this.knownSize) this.resync();
    const line = JSON.stringify({ ...rec, prev_hash: this.prev });
    const buf = Buffer.from(line + '\n', 'utf8');
    // A write may take fewer bytes than it was given; the rest follows it (one writer, O_APPEND).
    for (let off = 0; off < buf.length;) off += writeSync(this.fd, buf, off, buf.length - off);
    if (this.fsync) fsyncSync(this.fd);
    this.knownSize += buf.length;
    this.prev = hashLine(line);
    this.writeHead();
    return this.prev;
  }

  /**
   * The head is rewritten in place: one fixed-width line (hash, size padded to 20 digits)
   * written at offset 0 with a single write — no temp file and rename on every call.
   */
  private writeHead(): void {
    const line = Buffer.from(`${this.prev} ${String(this.knownSize).padStart(20, '0')}\n`, 'utf8');
    writeSync(this.headFd, line, 0, line.length, 0);
    if (this.headSize > line.length) ftruncateSync(this.headFd, line.length);
    this.headSize = line.length;
    if (this.fsync) fsyncSync(this.headFd);
  }

  close(): void {
    for (const fd of [this.fd, this.headFd]) {
      try { closeSync(fd); } catch { /* already closed */ }
    }
  }
}
