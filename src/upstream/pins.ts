import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync, openSync, fsyncSync, closeSync } from 'node:fs';
import path from 'node:path';
import { userStateDir } from '../user-state.js';

/** What of an upstream tool is pinned: everything that steers the model or the call. */
export interface PinnedFields {
  name: string;
  /** Shown as the tool's title, and as its description when it has none. */
  title?: string;
  description?: string;
  inputSchema?: unknown;
  outputSchema?: unknown;
  annotations?: unknown;
}

/** JSON with sorted keys, so the same tool always hashes the same. */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o).filter((k) => o[k] !== undefined).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
}

export function pinHash(t: PinnedFields): string {
  // title only when present: pins of tools without one keep their hash.
  const fields = { name: t.name, ...(t.title !== undefined ? { title: t.title } : {}), description: t.description ?? '', inputSchema: t.inputSchema ?? null, outputSchema: t.outputSchema ?? null, annotations: t.annotations ?? null };
  return createHash('sha256').update(canonicalJson(fields)).digest('hex');
}

export interface PinFile {
  version: 1;
  upstream: string;
  /** tool name (the upstream's own) -> sha256 */
  tools: Record<string, string>;
  updated_at: string;
}

export type PinState =
  | { kind: 'none' }
  | { kind: 'ok'; pins: PinFile }
  /** Unreadable or malformed: every tool of the upstream is refused until trusted again (fail closed). */
  | { kind: 'corrupt'; reason: string };

export function pinsDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(userStateDir(env), 'pins');
}

export function pinFile(upstream: string, env: NodeJS.ProcessEnv = process.env): string {
  return path.join(pinsDir(env), `${upstream}.json`);
}

export function readPins(upstream: string, env: NodeJS.ProcessEnv = process.env): PinState {
  let text: string;
  try {
    text = readFileSync(pinFile(upstream, env), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'none' };
    return { kind: 'corrupt', reason: `cannot read ${pinFile(upstream, env)}: ${(e as Error).message}` };
  }
  try {
    const p = JSON.parse(text) as PinFile;
    if (p?.version !== 1 || !p.tools || typeof p.tools !== 'object' || Array.isArray(p.tools)
      || !Object.values(p.tools).every((h) => typeof h === 'string' && /^[0-9a-f]{64}$/.test(h))) {
      throw new Error('not a toolgate pin file');
    }
    // Without a prototype: a tool named "__proto__" or "constructor" reads as what the file holds, nothing else.
    return { kind: 'ok', pins: { ...p, tools: Object.assign(Object.create(null) as Record<string, string>, p.tools) } };
  } catch (e) {
    return { kind: 'corrupt', reason: `${pinFile(upstream, env)} is corrupt (${(e as Error).message})` };
  }
}

/** Atomic (temp file, fsync, rename), 0600, in the user's state dir — outside every workspace. */
export function writePins(upstream: string, tools: Record<string, string>, env: NodeJS.ProcessEnv = process.env): void {
  const file = pinFile(upstream, env);
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const body: PinFile = { version: 1, upstream, tools: Object.fromEntries(Object.entries(tools).sort(([a], [b]) => a.localeCompare(b))), updated_at: new Date().toISOString() };
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(tmp, JSON.stringify(body, null, 2) + '\n', { mode: 0o600 });
  const fd = openSync(tmp, 'r');
  try { fsyncSync(fd); } finally { closeSync(fd); }
  renameSync(tmp, file);
}

export type PinVerdict = 'trusted' | 'changed' | 'new' | 'corrupt';

/**
 * Trust on first use, per upstream: with no pin file yet, every tool seen now is pinned (and
 * trusted). Afterwards a tool whose hash differs is `changed`, a tool not in the file is `new`
 * (a rename cannot slip through), and a corrupt file refuses everything.
 */
export function judgePins(upstream: string, hashes: Record<string, string>, env: NodeJS.ProcessEnv = process.env): { verdicts: Record<string, PinVerdict>; reason?: string } {
  const state = readPins(upstream, env);
  // fromEntries makes own properties: a tool named "__proto__" gets its verdict like any other.
  const all = (v: (k: string, h: string) => PinVerdict) => Object.fromEntries(Object.entries(hashes).map(([k, h]) => [k, v(k, h)])) as Record<string, PinVerdict>;
  if (state.kind === 'none') {
    writePins(upstream, hashes, env);
    return { verdicts: all(() => 'trusted') };
  }
  if (state.kind === 'corrupt') return { verdicts: all(() => 'corrupt'), reason: state.reason };
  const tools = state.pins.tools;
  return { verdicts: all((k, h) => (tools[k] === undefined ? 'new' : tools[k] === h ? 'trusted' : 'changed')) };
}

/** `toolgate upstream trust NAME [TOOL]`: pins the current hashes of all (or one) tool(s). */
export function trustPins(upstream: string, hashes: Record<string, string>, only?: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const state = readPins(upstream, env);
  const base: Record<string, string> = Object.assign(Object.create(null), state.kind === 'ok' ? state.pins.tools : {});
  const names = only ? [only] : Object.keys(hashes);
  const changed: string[] = [];
  for (const n of names) {
    const h = hashes[n];
    if (h === undefined) throw new Error(`upstream ${upstream} has no tool "${n}"; tools: ${Object.keys(hashes).join(', ') || '(none)'}`);
    if (base[n] !== h || state.kind !== 'ok') changed.push(n);
    base[n] = h;
  }
  // Trusting the whole upstream also forgets tools it no longer has.
  const next = only ? base : Object.fromEntries(Object.entries(base).filter(([k]) => k in hashes));
  writePins(upstream, next, env);
  return changed;
}

/** Read-only: is this exact tool pinned now? (No pin file → no: trust on first use happens only at connect.) */
export function isPinned(upstream: string, tool: string, hash: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const state = readPins(upstream, env);
  return state.kind === 'ok' && state.pins.tools[tool] === hash;
}
