import { readFileSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { Harness, policyFromYaml, tempDir } from '../testing/helpers.js';

/** A harness whose policy allows every tool, so tests reach the executor without approval. */
export function allowAll(extraYaml = ''): { h: Harness; dir: string; done: () => void } {
  const { dir, cleanup } = tempDir('tg-edit-');
  const h = new Harness([dir], { policy: policyFromYaml(`rules:\n  - tool: "*"\n    decision: allow\n${extraYaml}`) });
  return { h, dir, done: () => { h.close(); cleanup(); } };
}

export function sha(buf: Buffer | string): string {
  return createHash('sha256').update(buf).digest('hex');
}

/** What read_file records after reading a file (until read_file itself is used in the test). */
export function markRead(h: Harness, abs: string): void {
  const buf = readFileSync(abs);
  h.session.recordRead(abs, { size: buf.length, mtime_ms: statSync(abs).mtimeMs, sha256: sha(buf) });
}
