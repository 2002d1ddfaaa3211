import { createHash, type Hash } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';

export interface CaptureResult {
  /** Head and tail of the output, with a marker where the middle was cut. */
  text: string;
  truncated: boolean;
  total_bytes: number;
  /** Set when the whole output went to a file. */
  file?: string;
  sha256?: string;
}

/**
 * Bounded capture of a command's output: the first `head` and the last `tail` bytes stay in
 * memory; everything also goes to a file (opened on first need) so nothing is lost. Writes
 * are synchronous so a fast producer cannot pile up buffers. The file may be given as a
 * function that creates it (a spill): it is then only made when the output outgrows memory,
 * and chunks are held until it exists — call ready() before finish().
 */
export class OutputCapture {
  private readonly headBuf: Buffer[] = [];
  private headLen = 0;
  private tailBuf: Buffer[] = [];
  private tailLen = 0;
  private total = 0;
  private fd: number | null = null;
  private readonly hash: Hash = createHash('sha256');
  /** Until this many bytes, output is also kept whole in memory (no file needed). */
  private readonly whole: Buffer[] = [];
  private wholeLen = 0;

  private opening: Promise<void> | null = null;

  constructor(private readonly head: number, private readonly tail: number, private readonly memCap: number, private readonly spillFile: string | (() => Promise<string>)) {}

  private file?: string;

  /** Opens the file and writes what is held in memory into it. */
  private openFile(file: string): void {
    this.file = file;
    this.fd = openSync(file, 'a', 0o600);
    for (const b of this.whole) writeSync(this.fd, b);
    this.whole.length = 0;
    this.wholeLen = 0;
  }

  /** Resolves once a file being created on demand is open (and holds everything so far). */
  async ready(): Promise<void> {
    await this.opening;
  }

  get bytes(): number { return this.total; }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    this.hash.update(chunk);
    if (this.fd === null && (this.wholeLen + chunk.length <= this.memCap || this.opening)) {
      // In memory: small output, or held while the file is being created.
      this.whole.push(chunk);
      this.wholeLen += chunk.length;
    } else if (this.fd === null && typeof this.spillFile === 'function') {
      this.whole.push(chunk);
      this.wholeLen += chunk.length;
      this.opening = this.spillFile().then((f) => this.openFile(f));
      this.opening.catch(() => {}); // reported by ready()
    } else {
      if (this.fd === null) this.openFile(this.spillFile as string);
      writeSync(this.fd!, chunk);
    }
    if (this.headLen < this.head) {
      const take = chunk.subarray(0, this.head - this.headLen);
      this.headBuf.push(take);
      this.headLen += take.length;
    }
    this.tailBuf.push(chunk);
    this.tailLen += chunk.length;
    if (this.tailLen > this.tail * 2) this.compactTail();
  }

  private compactTail(): void {
    const all = Buffer.concat(this.tailBuf);
    const keep = all.subarray(Math.max(0, all.length - this.tail));
    this.tailBuf = [Buffer.from(keep)];
    this.tailLen = keep.length;
  }

  /** The whole output when it fit in memory (for a caller that spills it itself). */
  wholeOutput(): Buffer | null {
    return this.fd === null ? Buffer.concat(this.whole) : null;
  }

  finish(): CaptureResult {
    if (this.fd !== null) { closeSync(this.fd); this.fd = null; }
    if (this.opening && !this.file) throw new Error('OutputCapture.finish() before ready(): the output file is still being created');
    const sha256 = this.hash.digest('hex');
    if (!this.file) {
      return { text: Buffer.concat(this.whole).toString('utf8'), truncated: false, total_bytes: this.total, sha256 };
    }
    this.compactTail();
    const head = Buffer.concat(this.headBuf).toString('utf8').replace(/\uFFFD+$/, '');
    const tail = Buffer.concat(this.tailBuf).toString('utf8').replace(/^\uFFFD+/, '');
    const marker = `\n… [${this.total} bytes in all; middle cut — the full output is in storage_ref] …\n`;
    return { text: head + marker + tail, truncated: true, total_bytes: this.total, file: this.file, sha256 };
  }
}
