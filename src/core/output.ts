import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Limits, SpillRef } from './types.js';

export interface Limited {
  text: string;
  truncated: boolean;
  total_lines: number;
  total_bytes: number;
}

function cutLines(text: string, maxLines: number, maxBytes: number): string {
  let bytes = 0;
  let lines = 0;
  let start = 0;
  // The bytes kept so far are counted as lines are added (counting the whole kept text again
  // for every line made a 2,000-line cut cost ~8 ms).
  while (start <= text.length && lines < maxLines) {
    const nl = text.indexOf('\n', start);
    const end = nl < 0 ? text.length : nl + 1;
    const size = Buffer.byteLength(text.slice(start, end));
    if (bytes + size > maxBytes) {
      if (lines === 0) return Buffer.from(text.slice(start, end)).subarray(0, maxBytes).toString('utf8').replace(/\uFFFD+$/, '');
      break;
    }
    bytes += size;
    lines++;
    if (nl < 0) { start = end; break; }
    start = end;
  }
  return text.slice(0, start);
}

function countLines(text: string): number {
  if (text.length === 0) return 0;
  let n = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
  return text.endsWith('\n') ? n : n + 1;
}

/**
 * Cuts text to the output limits. `head` keeps the start; `head_tail` keeps the start and
 * the end (command output: the error is usually at the end) with a marker between.
 */
export function limitText(text: string, limits: Pick<Limits, 'output_bytes' | 'output_lines'>, mode: 'head' | 'head_tail' = 'head'): Limited {
  const total_bytes = Buffer.byteLength(text);
  const total_lines = countLines(text);
  if (total_bytes <= limits.output_bytes && total_lines <= limits.output_lines) {
    return { text, truncated: false, total_lines, total_bytes };
  }
  if (mode === 'head') {
    return { text: cutLines(text, limits.output_lines, limits.output_bytes), truncated: true, total_lines, total_bytes };
  }
  const half = { lines: Math.floor(limits.output_lines / 2), bytes: Math.floor(limits.output_bytes / 2) };
  const head = cutLines(text, half.lines, half.bytes);
  const reversed = text.split('\n').reverse().join('\n');
  const tail = cutLines(reversed, half.lines, half.bytes).split('\n').reverse().join('\n');
  const marker = `\n… [${total_lines} lines, ${total_bytes} bytes in all; middle cut — the full output is in storage_ref] …\n`;
  return { text: head + marker + tail, truncated: true, total_lines, total_bytes };
}

export function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Writes full output under <stateDir>/runs/<runId>/observations/ and names it for the envelope. */
export async function spillTo(stateDir: string, runId: string, callId: string, content: string | Buffer, ext: string, workspaceRoot: string | undefined): Promise<SpillRef> {
  const dir = path.join(stateDir, 'runs', runId, 'observations');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, `${callId}.${ext}`);
  await writeFile(file, content, { mode: 0o600 });
  return { storage_ref: storageRef(file, workspaceRoot), sha256: sha256(content) };
}

/** Workspace-relative when the file lies in the first root, absolute otherwise (SPEC §3). */
export function storageRef(file: string, workspaceRoot: string | undefined): string {
  if (workspaceRoot && (file === workspaceRoot || file.startsWith(workspaceRoot + path.sep))) {
    return path.relative(workspaceRoot, file).split(path.sep).join('/');
  }
  return file;
}
