import { ToolError } from '../core/errors.js';
import type { ReadRecord, Session } from '../core/session.js';
import type { ResolvedPath } from '../core/types.js';
import type { Current } from './current.js';

/** `expected_sha256` as given: hex, any case, optionally "sha256:"-prefixed. */
export function normaliseSha(s: string | undefined): string | undefined {
  if (s === undefined) return undefined;
  return s.trim().toLowerCase().replace(/^sha256:/, '');
}

/**
 * Read-before-write: an existing file must have been read in this session (or the caller
 * names the content it expects with expected_sha256) and must be unchanged since. Content
 * decides: a touched file with the same bytes is not stale.
 */
export function checkFresh(rp: ResolvedPath, current: Current | null, session: Session, expectedSha?: string): void {
  const expected = normaliseSha(expectedSha);
  if (!current) {
    // A new file needs no read — but expected_sha256 names content that is not there: refuse rather than create.
    if (expected !== undefined) throw expectedButMissing(rp, expected);
    return;
  }
  if (expected !== undefined) {
    if (expected !== current.sha256) {
      throw new ToolError('StaleRead', `${rp.display} does not have the expected_sha256 given (it is ${current.sha256.slice(0, 12)}…); read it again with read_file and redo the change on what it holds now.`,
        { details: { path: rp.display, changed: ['sha256'], expected_sha256: expected, sha256: current.sha256, size: current.stat.size, mtime_ms: current.stat.mtimeMs } });
    }
    return;
  }
  const rec = session.reads.get(rp.abs);
  if (!rec) throw readRequired(rp);
  if (rec.sha256 !== current.sha256) {
    const changed = whatChanged(rec, current);
    throw new ToolError('StaleRead', `${rp.display} changed since it was last read (${changed.join(', ')} differ); read it again with read_file and redo the change on what it holds now.`,
      { details: { path: rp.display, changed, read: rec, now: { size: current.buf.length, mtime_ms: current.stat.mtimeMs, sha256: current.sha256 } } });
  }
}

export function expectedButMissing(rp: ResolvedPath, expected: string): ToolError {
  return new ToolError('StaleRead', `${rp.display} does not exist, but expected_sha256 says it should have content; it was deleted or moved since it was read. Nothing was written. Check with list_dir, or drop expected_sha256 to create it.`,
    { details: { path: rp.display, changed: ['deleted'], expected_sha256: expected } });
}

export function readRequired(rp: ResolvedPath): ToolError {
  return new ToolError('ReadRequired', `${rp.display} exists and has not been read in this session; read it with read_file first (or pass expected_sha256), then make the change.`,
    { details: { path: rp.display } });
}

function whatChanged(rec: ReadRecord, current: Current): string[] {
  const out: string[] = [];
  if (rec.size !== current.buf.length) out.push('size');
  if (rec.mtime_ms !== current.stat.mtimeMs) out.push('mtime');
  out.push('sha256');
  return out;
}

/** After a write, the session knows the new content: a second edit works without a new read. */
export function recordWritten(session: Session, abs: string, rec: ReadRecord): void {
  session.recordRead(abs, rec);
}

/**
 * The args a `toolgate call --approve` replay needs: a fresh CLI session has read nothing, so
 * the replay carries the hash of what this session read (the change applies only to that content).
 */
export function replayArgs<A extends { expected_sha256?: string }>(args: A, rp: ResolvedPath, session: Session): A | undefined {
  if (args.expected_sha256 !== undefined || !rp.exists) return undefined;
  const rec = session.reads.get(rp.abs);
  return rec ? { ...args, expected_sha256: rec.sha256 } : undefined;
}
