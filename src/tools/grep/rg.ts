import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { ToolError } from '../../core/errors.js';
import { attachContext, cutLine, recordText } from './search-text.js';
import type { DenyFilter, Selection } from './select.js';
import { COLLECT_CAP, MAX_LINE_CHARS, type Cap, type EngineResult, type FileHit, type MatchRecord, type Query } from './types.js';
import { FIFO_REASON, watchFifoOpens } from './rg-watch.js';
import { spawnRg, startFailure } from './rg-spawn.js';
import { safePath } from '../../exec/env.js';

/** The ripgrep engine: `rg` streamed (JSON for content, NUL-separated names otherwise). */

/** Extra items the sorted run reads past what is needed, for files later dropped by verification. */
const SLACK = 16;

const found = new Map<string, Promise<string | null>>();

/**
 * Where rg is, or null: TOOLGATE_RG=off forces the built-in engine, TOOLGATE_RG=/path picks a
 * binary; otherwise PATH is searched once per distinct PATH value and workspace (no process is
 * spawned) — without the entries a command could plant an `rg` in (relative ones, which name the
 * searched folder or the server's, and any inside a workspace root: safePath, as for commands).
 * grep and glob run it outside any sandbox.
 */
export function locateRg(env: NodeJS.ProcessEnv = process.env, roots: readonly string[] = []): Promise<string | null> {
  const setting = env.TOOLGATE_RG?.trim();
  if (setting && /^(off|0|false|no|none)$/i.test(setting)) return Promise.resolve(null);
  const key = `${setting ?? ''}\0${env.PATH ?? ''}\0${roots.join('\0')}`;
  let p = found.get(key);
  if (!p) {
    const candidates = setting && path.isAbsolute(setting)
      ? [setting]
      : safePath(env.PATH, [...roots]).split(path.delimiter).filter(Boolean).map((d) => path.join(d, process.platform === 'win32' ? 'rg.exe' : 'rg'));
    p = (async () => {
      for (const c of candidates) {
        try {
          await access(c, constants.X_OK);
          return c;
        } catch { /* next */ }
      }
      return null;
    })();
    found.set(key, p);
  }
  return p;
}

/** Raised when rg cannot be started at all: the caller falls back to the built-in engine. */
export class RgUnavailable extends Error {}

export interface RgOptions {
  bin: string;
  q: Query;
  select: Selection;
  deny: DenyFilter;
  /** Deny-list globs safe to hand to rg as exclusions (speed only; results are filtered anyway). */
  denyGlobs: string[];
  /** Working directory for rg (the /proc fd link of the opened search directory on Linux). */
  cwd: string;
  /** What rg searches: '.' for a directory, the /proc fd link of an opened file. */
  target: string;
  /** The search directory is a workspace root: ignore files above it are not read. */
  atWorkspaceRoot: boolean;
  signal: AbortSignal;
  deadline: number;
  needed: number;
  /** Overrides the collection cap (tests). */
  collectCap?: number;
}

/** A positive glob ripgrep can pre-filter by file name without bypassing .gitignore: its last segment. */
function nameGlob(g: string): string | null {
  const last = g.endsWith('/') ? null : g.slice(g.lastIndexOf('/') + 1);
  if (!last || last.includes('**') || last.includes(':') || /[{][^}]*$/.test(g.slice(0, g.lastIndexOf('/') + 1))) return null;
  return last;
}

/** `maxCount`: content mode, matches read a file at most (the collection cap). */
export function rgArgs(o: Pick<RgOptions, 'q' | 'denyGlobs' | 'target' | 'atWorkspaceRoot'>, sorted: boolean, maxCount?: number): string[] {
  const { q } = o;
  const a = ['--no-config', '--no-require-git', '--no-ignore-global', '--no-messages', '--color=never'];
  if (o.atWorkspaceRoot) a.push('--no-ignore-parent');
  if (q.mode === 'content') {
    a.push('--json');
    if (q.context > 0) a.push(`--context=${q.context}`);
    // rg holds a file's whole JSON output while its threads search others: a 48 MB file of short
    // matching lines took rg 3 GB (a bigger one, the machine's memory). Past the cap nothing is used.
    if (maxCount !== undefined) a.push(`--max-count=${maxCount}`);
  } else if (q.mode === 'files_with_matches') a.push('--files-with-matches', '--null');
  else a.push('--count', '--null', '--with-filename');
  if (q.fixed_strings) a.push('--fixed-strings');
  if (q.ignore_case) a.push('--ignore-case');
  if (q.multiline) a.push('--multiline');
  a.push(...selectionArgs(o));
  if (sorted) a.push('--sort=path');
  a.push(`--regexp=${q.pattern}`, '--', o.target);
  return a;
}

/** The flags that choose which files rg opens (hidden, deny exclusions, the query's globs and type). */
function selectionArgs(o: Pick<RgOptions, 'q' | 'denyGlobs' | 'target'>): string[] {
  const { q } = o;
  const a: string[] = [];
  if (q.hidden) a.push('--hidden');
  // An explicitly named file was already checked against globs and type by the caller.
  if (o.target === '.') {
    // Without --hidden rg never reaches dot-names, so globs about them would only cost time.
    if (q.hidden) a.push('--glob=!.git', '--glob=!.toolgate');
    for (const d of o.denyGlobs) if (q.hidden || !/(^|\/)\./.test(d)) a.push(`--glob=!${d}`);
    // Positive -g globs would override .gitignore and hidden in rg; selection goes through a type instead.
    for (const g of q.globs) if (g.startsWith('!')) a.push(`--glob=${g}`);
    const positives = q.globs.filter((g) => !g.startsWith('!'));
    const pre = q.typeGlobs.length ? q.typeGlobs : positives.map(nameGlob);
    if (pre.length && pre.every((g): g is string => !!g)) {
      for (const g of pre) a.push(`--type-add=tgsel:${g}`);
      a.push('--type=tgsel');
    }
  }
  return a;
}

/**
 * Every file a search of `cwd` would open, by name only (rg --files with the same selection):
 * what an `ask` rule leaves out is counted from this list, so skipped_by_policy cannot tell
 * whether an asked file matches the pattern. A name that is not UTF-8 is left out (asName).
 */
export function rgListFiles(o: Pick<RgOptions, 'q' | 'denyGlobs' | 'atWorkspaceRoot' | 'signal'> & { bin: string; cwd: string }): Promise<string[]> {
  const a = ['--no-config', '--no-require-git', '--no-ignore-global', '--no-messages', '--files', '--null'];
  if (o.atWorkspaceRoot) a.push('--no-ignore-parent');
  a.push(...selectionArgs({ ...o, target: '.' }), '--', '.');
  return new Promise((resolve, reject) => {
    const child = spawnRg(o.bin, a, { cwd: o.cwd, stderr: false });
    const chunks: Buffer[] = [];
    const fifo = watchFifoOpens(() => child.pid, () => child.kill());
    const onAbort = () => child.kill();
    o.signal.addEventListener('abort', onAbort, { once: true });
    if (o.signal.aborted) onAbort();
    const finish = () => { fifo.stop(); o.signal.removeEventListener('abort', onAbort); };
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.on('error', (e) => { finish(); reject(new RgUnavailable(startFailure('ripgrep', e))); });
    child.on('close', () => {
      finish();
      if (o.signal.aborted) reject(new ToolError('Cancelled', 'The search was cancelled.'));
      else if (fifo.blocked) reject(new RgUnavailable(FIFO_REASON));
      else resolve(Buffer.concat(chunks).toString('latin1').split('\0').filter(Boolean).map(asName).filter((n): n is string => n !== null));
    });
  });
}

function stripDot(p: string): string {
  return p.startsWith('./') ? p.slice(2) : p === '.' ? '' : p;
}

/**
 * A name rg printed (read as latin1, byte for byte), as UTF-8 without its './'; null when its bytes
 * are not UTF-8: decoded lossily (U+FFFD) it would name another file, which the checks would judge.
 */
function asName(latin: string): string | null {
  const b = Buffer.from(latin, 'latin1');
  const s = b.toString('utf8');
  return Buffer.from(s, 'utf8').equals(b) ? stripDot(s) : null;
}

function jsonText(o: { text?: string; bytes?: string } | undefined): string {
  if (!o) return '';
  return o.text ?? Buffer.from(o.bytes ?? '', 'base64').toString('utf8');
}

interface RunOutcome {
  hits: FileHit[];
  items: number;
  capped: Cap;
  /** Stopped because `limit` items were collected. */
  full: boolean;
  searched?: number;
}

function runOnce(o: RgOptions, sorted: boolean, limit: number): Promise<RunOutcome> {
  const { q } = o;
  const isFile = o.target !== '.';
  return new Promise<RunOutcome>((resolve, reject) => {
    const child = spawnRg(o.bin, rgArgs(o, sorted, limit), { cwd: o.cwd, stderr: true });
    const hits: FileHit[] = [];
    let items = 0;
    let capped: Cap = null;
    let full = false;
    let stopped = false;
    let searched: number | undefined;
    let stderr = '';
    let rest = '';
    // Names and counts are read as bytes (latin1: one char a byte) and each name decoded on its own (asName).
    const decoder = new StringDecoder(q.mode === 'content' ? 'utf8' : 'latin1');
    // Content mode: the file being read, its records and context lines.
    let cur: { rel: string; keep: boolean; records: MatchRecord[]; ctx: Map<number, string> } | null = null;

    const kill = () => {
      if (stopped) return;
      stopped = true;
      child.kill();
    };
    const timer = setTimeout(() => { capped = 'time'; kill(); }, Math.max(0, o.deadline - Date.now()));
    const onAbort = () => kill();
    o.signal.addEventListener('abort', onAbort, { once: true });
    const fifo = watchFifoOpens(() => child.pid, kill);

    const keep = (rel: string) => isFile || (o.select.fileSelected(rel) && !o.deny.fileDenied(rel));
    const add = (hit: FileHit) => {
      hits.push(hit);
      items += q.mode === 'content' ? hit.records.length : 1;
      if (items >= limit) { full = true; kill(); }
    };
    const finishFile = () => {
      if (!cur) return;
      if (cur.keep && cur.records.length) {
        const ctx = cur.ctx;
        attachContext(cur.records, q.context, (l) => ctx.get(l));
        add({ rel: cur.rel, records: cur.records, count: cur.records.length });
      }
      cur = null;
    };
    const jsonLine = (line: string) => {
      const kind = line.startsWith('{"type":"match"') ? 'match' : line.startsWith('{"type":"context"') ? 'context'
        : line.startsWith('{"type":"end"') ? 'end' : line.startsWith('{"type":"summary"') ? 'summary' : '';
      if (kind === 'match' || kind === 'context') {
        const m = JSON.parse(line) as { data: { path: { text?: string; bytes?: string }; lines: { text?: string; bytes?: string }; line_number: number; submatches?: Array<{ start: number }> } };
        const rel = isFile ? '' : stripDot(jsonText(m.data.path));
        if (!cur || cur.rel !== rel) {
          finishFile();
          // A path that is not UTF-8 comes as "bytes": decoded it would name another file (U+FFFD), so it is left out.
          cur = { rel, keep: (isFile || m.data.path.text !== undefined) && keep(rel), records: [], ctx: new Map() };
        }
        if (!cur.keep) return;
        const raw = jsonText(m.data.lines);
        const n = m.data.line_number;
        if (kind === 'match') {
          let extra = 0;
          for (let i = raw.indexOf('\n'); i >= 0 && i < raw.length - 1; i = raw.indexOf('\n', i + 1)) extra++;
          // rg gives the match's start as a byte offset: as a character offset, to cut a long line around it.
          const byteAt = m.data.submatches?.[0]?.start ?? 0;
          const at = raw.length > MAX_LINE_CHARS ? Buffer.from(raw).subarray(0, byteAt).toString('utf8').length : byteAt;
          cur.records.push({ line: n, end: n + extra, text: recordText(raw, at), before: [], after: [] });
          // The cap counts inside a file too: one file of millions of matching lines held them all (3 GB) until its end.
          if (items + cur.records.length >= limit) finishFile();
        } else {
          const body = raw.endsWith('\n') ? raw.slice(0, -1) : raw;
          body.split('\n').forEach((t, i) => cur!.ctx.set(n + i, cutLine(t)));
        }
      } else if (kind === 'end') {
        finishFile();
      } else if (kind === 'summary') {
        const s = JSON.parse(line) as { data?: { stats?: { searches?: number } } };
        searched = s.data?.stats?.searches;
      }
    };
    const entry = (item: string) => {
      if (q.mode === 'content') return jsonLine(item);
      if (q.mode === 'files_with_matches') {
        const rel = isFile ? '' : asName(item);
        if (rel !== null && keep(rel)) add({ rel, records: [], count: 1 });
        return;
      }
      // Count: rg prints `path\0count\n`. A name may hold '\n' (never a NUL): split on the NUL, so an item
      // is "count\nnext path" (a name with a newline cannot lend its count to another file's name).
      if (pending === null) { pending = item; return; }
      const nl = item.indexOf('\n');
      const rel = isFile ? '' : asName(pending);
      const count = /^[0-9]+$/.test(nl < 0 ? item : item.slice(0, nl)) ? Number(nl < 0 ? item : item.slice(0, nl)) : 0;
      pending = nl < 0 ? null : item.slice(nl + 1);
      if (count > 0 && rel !== null && keep(rel)) add({ rel, records: [], count });
    };
    let pending: string | null = null;
    const sep = q.mode === 'content' ? '\n' : '\0';

    /** What the output handlers threw: a rejection of the search, never an exception in an event handler (that ends the process). */
    let failed: unknown;
    child.stdout.on('data', (chunk: Buffer) => {
      if (full || failed) return;
      try {
        const text = rest + decoder.write(chunk);
        let start = 0;
        for (let i = text.indexOf(sep); i >= 0; i = text.indexOf(sep, start)) {
          if (i > start) entry(text.slice(start, i));
          start = i + 1;
          if (full) break;
        }
        rest = full ? '' : text.slice(start);
      } catch (e) {
        failed = e;
        kill();
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => { if (stderr.length < 8192) stderr += chunk.toString('utf8'); });
    child.on('error', (e) => {
      clearTimeout(timer);
      fifo.stop();
      o.signal.removeEventListener('abort', onAbort);
      reject(new RgUnavailable(startFailure('ripgrep', e)));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      fifo.stop();
      o.signal.removeEventListener('abort', onAbort);
      if (o.signal.aborted) return reject(new ToolError('Cancelled', 'The search was cancelled.'));
      if (fifo.blocked) return reject(new RgUnavailable(FIFO_REASON));
      if (failed) return reject(failed);
      if (!full) {
        try {
          // Killed (the time cap): the last line may be cut anywhere — a half JSON line once threw here and ended the server.
          if (rest && !stopped) entry(rest);
          finishFile();
        } catch (e) {
          return reject(e);
        }
      }
      if (!stopped && code === 2 && hits.length === 0 && /regex parse error|error parsing glob|literal .* is not allowed|error:/i.test(stderr)) {
        const msg = stderr.trim().split('\n').filter((l) => l.trim()).slice(-4).join(' ').replace(/\s+/g, ' ').replace(/\.$/, '');
        return reject(new ToolError('InvalidArguments', `ripgrep refused the search: ${msg}. Fix the pattern or glob; set fixed_strings: true to search for the text literally.`));
      }
      resolve({ hits, items, capped, full, searched });
    });
  });
}

/**
 * Runs rg across all cores and collects every hit (sorting is done by the caller, cheaper than
 * rg's single-threaded --sort). When there are more hits than the collection cap, a second,
 * sorted run stops as soon as the requested page is complete, so the answer is still the
 * first hits in path order.
 */
export async function rgSearch(o: RgOptions): Promise<EngineResult> {
  const cap = Math.max(o.collectCap ?? COLLECT_CAP[o.q.mode], o.needed + SLACK);
  const first = await runOnce(o, false, cap);
  if (!first.full) {
    return { hits: first.hits, capped: first.capped, searched: first.searched, complete: !first.capped, sortedPrefix: !first.capped, notes: [] };
  }
  const second = await runOnce(o, true, o.needed + SLACK);
  return {
    hits: second.hits, capped: second.capped, complete: false, sortedPrefix: !second.capped,
    notes: [`More than ${first.items} matches: totals are not counted past that.`],
  };
}
