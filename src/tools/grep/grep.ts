import { fstatSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defineTool, descriptionBeside, FILE_READER } from '../../core/define-tool.js';
import { ToolError } from '../../core/errors.js';
import { limitText } from '../../core/output.js';
import { lessUsed, TEXT_RESERVE } from '../../core/render.js';
import type { ResolvedPath, ToolContext } from '../../core/types.js';
import { openDir, openFileForRead } from '../../workspace/safe-open.js';
import type { Workspace } from '../../workspace/workspace.js';
import { builtinSearchDir } from './fallback.js';
import { builtinSearchFile } from './search-file.js';
import { toJsPattern, type JsPattern } from './regex.js';
import { itemChunks, keepFirst, pageOf } from './render.js';
import { locateRg, rgListFiles, rgSearch, RgUnavailable } from './rg.js';
import { decodeForSearch } from './search-text.js';
import { refuseCostlyGlobs } from '../../workspace/glob-cost.js';
import { comparePaths, DenyFilter, Selection } from './select.js';
import { grepWalkMax, ignoreFilesAboveRoot, sameInBothEngines } from './small.js';
import { searchSmallDir, searchSmallFile } from './small-search.js';
import { sortByMtime } from './sort.js';
import { BINARY_WINDOW, TYPE_GLOBS, typeGlobs, type EngineResult, type FileHit, type Query } from './types.js';
import { confirmContent, countListed, quietHits, verifyHits, type Known } from './verify.js';
import { dirOf, quietFolders, type FolderId } from '../glob/recheck.js';

const DEFAULT_HEAD_LIMIT = 100;
const MAX_HEAD_LIMIT = 2000;
/** Hits ripgrep reported that are all checked (hard links, moved directories) so totals are exact. */
const VERIFY_BUDGET = 20_000;
/** Like glob's walker: the time cap, not the entry count, is the real limit on a large tree. */
const DEFAULT_VISIT_CAP = 1_000_000;
const HAS_PROC_FD = process.platform === 'linux';

const input = z.strictObject({
  pattern: z.string().min(1).max(10_000).describe('Regular expression (ripgrep / Rust syntax), or the literal text when fixed_strings is true.'),
  path: z.string().default('.').describe('File or directory to search, relative to the workspace root. Default: the root.'),
  fixed_strings: z.boolean().default(false).describe('Treat pattern as literal text, not a regex.'),
  glob: z.union([z.string().min(1), z.array(z.string().min(1)).max(50)]).optional()
    .describe('Only files matching these globs, relative to path (e.g. "*.ts", "src/**/*.tsx"); a leading "!" excludes files and folders.'),
  type: z.string().min(1).max(32).optional().describe(`Only files of this type: ${Object.keys(TYPE_GLOBS).join(', ')}.`),
  ignore_case: z.boolean().default(false).describe('Case-insensitive match.'),
  multiline: z.boolean().default(false).describe('Let the pattern match across lines (\\n); "." still stops at a newline unless the pattern starts with (?s).'),
  context: z.number().int().min(0).max(20).default(0).describe('Lines of context shown before and after each match (output_mode content).'),
  output_mode: z.enum(['content', 'files_with_matches', 'count']).default('files_with_matches')
    .describe('content: matching lines; files_with_matches (default): paths of matching files; count: matches per file.'),
  head_limit: z.number().int().min(1).max(MAX_HEAD_LIMIT).optional().describe(`Return at most this many entries (lines, files or counts). Default ${DEFAULT_HEAD_LIMIT}.`),
  offset: z.number().int().min(0).default(0).describe('Skip this many entries first (paging: pass the previous offset + entries shown).'),
  hidden: z.boolean().default(false).describe('Also search hidden files and folders (names starting with "."). .git and .toolgate are never searched.'),
  sort: z.enum(['path', 'mtime']).default('path').describe('Order of files: "path" (default) or "mtime" (most recently modified first).'),
});

const matchItem = z.object({
  file: z.string(),
  line: z.number().int(),
  text: z.string(),
  before: z.array(z.string()).optional(),
  after: z.array(z.string()).optional(),
});

const output = z.object({
  output_mode: z.enum(['content', 'files_with_matches', 'count']),
  matches: z.array(matchItem).optional().describe('content mode: one entry per matching line (or merged lines for multiline), in path then line order.'),
  files: z.array(z.string()).optional().describe('files_with_matches mode: matching files in path order.'),
  counts: z.array(z.object({ file: z.string(), count: z.number().int() })).optional().describe('count mode: matching lines per file.'),
  total_files: z.number().int().describe('Files with matches found (a lower bound unless totals_exact).'),
  total_matches: z.number().int().optional().describe('Matching lines found (content and count modes; a lower bound unless totals_exact).'),
  totals_exact: z.boolean(),
  offset: z.number().int(),
  head_limit: z.number().int(),
  truncated: z.boolean().describe('More entries exist than are returned here.'),
  capped: z.enum(['time', 'visits']).nullable().describe('The search stopped early at the time or visit cap.'),
  fallback_used: z.boolean().describe('The built-in engine ran because ripgrep is not available.'),
  fallback_reason: z.string().nullable().describe('Why the built-in engine ran (e.g. "ripgrep is turned off (TOOLGATE_RG=off)", "ripgrep (rg) is not on PATH or does not run"), or null.'),
  engine: z.enum(['ripgrep', 'builtin']),
  notes: z.array(z.string()).optional(),
  skipped_by_policy: z.number().int().optional().describe('Files and folders left out because a policy rule asks before grep may read them.'),
});

type Args = z.output<typeof input>;
type Data = z.output<typeof output>;

function buildQuery(args: Args): Query {
  let tg: string[] = [];
  if (args.type !== undefined) {
    const g = typeGlobs(args.type);
    if (!g) throw new ToolError('InvalidArguments', `Unknown type "${args.type}"; use one of ${Object.keys(TYPE_GLOBS).join(', ')}, or a glob.`);
    tg = g;
  }
  const globs = args.glob === undefined ? [] : Array.isArray(args.glob) ? args.glob : [args.glob];
  refuseCostlyGlobs(globs);
  return {
    pattern: args.pattern, fixed_strings: args.fixed_strings, ignore_case: args.ignore_case, multiline: args.multiline,
    context: args.output_mode === 'content' ? args.context : 0, mode: args.output_mode, hidden: args.hidden, globs, typeGlobs: tg,
  };
}

/** Deny-list globs that mean the same relative to any search directory (rg gets them as exclusions). */
function rootFreeGlobs(patterns: string[]): string[] {
  return patterns.filter((p) => !p.startsWith('!') && (p.startsWith('**/') || !p.includes('/')));
}

const envNumber = (name: string): number | undefined => (Number.isFinite(Number(process.env[name])) && Number(process.env[name]) > 0 ? Number(process.env[name]) : undefined);

interface Ran {
  result: EngineResult;
  engine: 'ripgrep' | 'builtin';
  fallbackReason: string | null;
  /** Folders (relative to the search folder) that provably did not change while rg ran (quietFolders). */
  quietDirs?: ReadonlySet<string>;
  /** A hit's lstat made before the looks that found its folder quiet (quietHits), for verifyHits. */
  known?: Known;
  /** The folder rg searched (its pinned working folder): hits are checked there, not in whatever the path names later. */
  searched?: FolderId;
  /** The built-in engine ran, ripgrep present, because the folder or file is small (small.ts): not a fallback. */
  small?: boolean;
}

async function run(q: Query, rp: ResolvedPath, ws: Workspace, ctx: ToolContext, needed: number, deadline: number, deny: DenyFilter): Promise<Ran> {
  const setting = process.env.TOOLGATE_RG?.trim();
  const bin = await locateRg(process.env, ws.roots);
  let fallbackReason: string | null = bin ? null
    : setting && /^(off|0|false|no|none)$/i.test(setting) ? 'ripgrep is turned off (TOOLGATE_RG=off)' : 'ripgrep (rg) is not on PATH or does not run';
  const select = new Selection(q);
  const common = { q, select, deny, signal: ctx.signal, deadline, needed, collectCap: envNumber('TOOLGATE_GREP_COLLECT_CAP') };
  const allowHardlinks = ws.rules.allowHardlinks;
  // A small folder or file is searched here even with ripgrep present, when both engines read the pattern alike (small.ts).
  // Not under ask rules: skipped_by_policy then counts what rg would list (hidden, ignored and
  // unselected names, links and empty folders are not), which the built-in walk does not know.
  // Linux only: subfolders are entered through checked descriptors (/proc/self/fd; openPinnedDir).
  const walkMax = bin && HAS_PROC_FD && !ws.gate?.asks ? grepWalkMax() : 0;
  const small = walkMax > 0 && (rp.relToRoot === '' || !ignoreFilesAboveRoot(ws.roots[rp.rootIndex]!)) ? sameInBothEngines(q) : null;

  if (rp.kind === 'file') {
    const name = path.basename(rp.abs);
    // Globs and type still narrow an explicitly named file; hidden does not (it was named).
    if (!new Selection({ ...q, hidden: true }).fileSelectedHere(name, name)) {
      return { result: { hits: [], capped: null, complete: true, sortedPrefix: true, notes: [] }, engine: bin ? 'ripgrep' : 'builtin', fallbackReason };
    }
    const pat = bin ? null : toJsPattern(q);
    const opened = await openFileForRead(rp, ws);
    try {
      const here = small && await searchSmallFile(opened.fh, opened.stat.size, small, common);
      if (here) return { ...here, engine: 'builtin', small: true };
      if (bin) {
        const head = Buffer.alloc(Math.min(BINARY_WINDOW, opened.stat.size));
        const { bytesRead } = await opened.fh.read(head, 0, head.length, 0);
        if (decodeForSearch(head.subarray(0, bytesRead)) === null) {
          return { result: { hits: [], capped: null, complete: true, sortedPrefix: true, notes: ['The file is binary (it has a NUL byte near the start); it was not searched.'] }, engine: 'ripgrep', fallbackReason };
        }
        try {
          const target = HAS_PROC_FD ? `/proc/${process.pid}/fd/${opened.fh.fd}` : rp.abs;
          return { result: await rgSearch({ ...common, bin, denyGlobs: [], cwd: path.dirname(rp.abs), target, atWorkspaceRoot: true }), engine: 'ripgrep', fallbackReason };
        } catch (e) {
          if (!(e instanceof RgUnavailable)) throw e;
          fallbackReason = e.message;
        }
      }
      return { result: await builtinSearchFile(opened.fh, { ...common, pat: pat ?? toJsPattern(q) }), engine: 'builtin', fallbackReason };
    } finally {
      await opened.fh.close().catch(() => {});
    }
  }

  const pat = bin ? null : toJsPattern(q);
  const dir = await openDir(rp, ws);
  const root = { abs: rp.abs, path: dir.path, wsRoot: ws.roots[rp.rootIndex]!, relToRoot: rp.relToRoot };
  const visitCap = envNumber('TOOLGATE_GREP_VISIT_CAP') ?? DEFAULT_VISIT_CAP;
  try {
    const here = small && await searchSmallDir(root, small, walkMax, ws, { ...common, allowHardlinks, visitCap });
    if (here) return { ...here, engine: 'builtin', small: true };
    if (bin) {
      try {
        const cwd = HAS_PROC_FD ? `/proc/${process.pid}/fd/${dir.fh.fd}` : rp.abs;
        const denyGlobs = rootFreeGlobs(ws.rules.deny);
        // The search gets no deny exclusions: every hit is judged by the filter anyway, and matching
        // the globs against every path cost rg more than the few files they skip (the Linux tree,
        // 78,579 files: +25 ms of rg's 370). The listing below, run only for ask rules, keeps them.
        const started = Date.now();
        const result = await rgSearch({ ...common, bin, denyGlobs: [], cwd, target: '.', atWorkspaceRoot: rp.relToRoot === '' });
        // rg has exited and its working folder is still open: which hits' folders did not change while it ran.
        const { dev, ino } = fstatSync(dir.fh.fd);
        const quiet = quietFolders({ base: rp.abs === '/' ? '' : rp.abs, pinnedFd: dir.fh.fd, started });
        const { dirs: quietDirs, known } = quietHits(quiet, result.hits, VERIFY_BUDGET);
        if (ws.gate?.asks) {
          // rg reports matching files only: count what an ask rule leaves out by name, as the built-in walk does.
          const byName = new DenyFilter(ws, rp.relToRoot, rp.abs);
          const listed = await rgListFiles({ q, bin, denyGlobs, cwd, atWorkspaceRoot: rp.relToRoot === '', signal: ctx.signal });
          await countListed(listed.filter((rel) => select.fileSelected(rel)), rp.abs, { dev, ino }, (rel) => byName.fileDenied(rel));
          deny.askSkipped = byName.askSkipped;
        }
        return { result, engine: 'ripgrep', fallbackReason, quietDirs, known, searched: { dev, ino } };
      } catch (e) {
        if (!(e instanceof RgUnavailable)) throw e;
        fallbackReason = e.message;
      }
    }
    const result = await builtinSearchDir(root, { ...common, pat: pat ?? toJsPattern(q), allowHardlinks, visitCap });
    return { result, engine: 'builtin', fallbackReason };
  } finally {
    await dir.fh.close().catch(() => {});
  }
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

export const grepTool = defineTool({
  name: 'grep',
  version: '1.0.0',
  title: 'Search file contents',
  description: descriptionBeside(import.meta.url),
  input,
  output,
  ...FILE_READER,
  side_effects: 'none (reads files; may start ripgrep)',
  aliases: { include: 'glob', file_pattern: 'glob', case_insensitive: 'ignore_case', '-i': 'ignore_case', '-C': 'context', max_results: 'head_limit' },
  async plan(args, ctx) {
    buildQuery(args); // a bad type or a costly glob is refused before anything about the path is looked at
    const p = await ctx.workspace.resolve(args.path, 'search');
    return { targets: [{ kind: 'path', access: 'search', path: p }], summary: `search ${p.display} for ${JSON.stringify(args.pattern)}` };
  },
  inspect(args, plan) {
    const p = plan.targets[0]?.kind === 'path' ? plan.targets[0].path : null;
    if (!p?.exists) throw new ToolError('NotFound', `${args.path} does not exist. Check the path with list_dir or glob.`);
  },
  async execute(args, plan, ctx) {
    const target = plan.targets[0];
    if (!target || target.kind !== 'path') throw new ToolError('Internal', 'grep planned no path.');
    const rp = target.path;
    const ws = ctx.workspace;
    const q = buildQuery(args);
    const limit = args.head_limit ?? DEFAULT_HEAD_LIMIT;
    const offset = args.offset;
    const timeCap = envNumber('TOOLGATE_GREP_TIME_CAP_MS') ?? Math.min(30_000, Math.floor(ctx.limits.timeout_ms * 0.75));
    const needed = offset + limit + 1;

    const deny = new DenyFilter(ws, rp.relToRoot, rp.abs);
    const deadline = Date.now() + timeCap;
    const { result, engine, fallbackReason, quietDirs, known, searched, small } = await run(q, rp, ws, ctx, needed, deadline, deny);
    const notes = [...result.notes];
    let hits = result.hits.sort((a, b) => comparePaths(a.rel, b.rel));
    if (args.sort === 'mtime') {
      hits = await sortByMtime(hits, rp.abs, rp.kind === 'file', searched);
      if (!result.complete) notes.push('Sorted by mtime among the files found before the search stopped.');
    }
    let exact = result.complete;
    let overBudget = false;
    if (engine === 'ripgrep') {
      const v = await verifyHits(hits, rp.abs, {
        allowHardlinks: ws.rules.allowHardlinks, need: needed, budget: VERIFY_BUDGET, isFileRoot: rp.kind === 'file', searched, known,
        itemsOf: (h) => (q.mode === 'content' ? h.records.length : 1),
      });
      hits = v.hits;
      overBudget = !v.exact;
      exact = exact && v.exact;
      if (v.hardlinked) notes.push(`${v.hardlinked} matching file(s) with several hard links were left out (paths.allow_hardlinks is off).`);
      // Hits that changed place (v.moved) or content (below) are left out without a note: rg may have
      // read them through a folder swapped for a link to outside, and a count would tell that an
      // outside file matches the pattern.
      if (rp.kind === 'dir') {
        let pat: JsPattern | null = null;
        if (q.mode !== 'content') try { pat = toJsPattern(q); } catch { /* rg-only syntax */ }
        const check = { mode: q.mode, pat, multiline: q.multiline, allowHardlinks: ws.rules.allowHardlinks, signal: ctx.signal, deadline };
        // In a folder that provably did not change while rg ran (quietFolders) rg read the real file. Elsewhere (a
        // folder swapped for a link and back could feed rg an outside file) the file is read and searched again.
        const quietHit = (h: FileHit) => quietDirs?.has(dirOf(h.rel)) ?? false;
        const unsure = hits.filter((h) => !quietHit(h));
        if (unsure.length) {
          const c = await confirmContent(unsure, rp.abs, Number.POSITIVE_INFINITY, check), ok = new Set(c.hits);
          hits = hits.filter((h) => quietHit(h) || ok.has(h));
          if (c.expired) { result.capped ??= 'time'; exact = false; }
        }
      }
    }

    const base = rp.display;
    const name = (rel: string) => (rel === '' ? base : base === '.' ? rel : `${base}/${rel}`);
    const page = pageOf(hits, q.mode, offset, limit, name);
    let truncated = page.available > offset + page.shown || !result.complete;

    const fileWord = plural(hits.length, 'file');
    const atLeast = exact ? '' : 'at least ';
    let header: string;
    if (hits.length === 0) {
      header = `No matches for ${JSON.stringify(q.pattern)} in ${base === '.' ? 'the workspace' : base}.`;
    } else {
      const what = q.mode === 'files_with_matches' ? fileWord : `${plural(page.matchTotal, 'match', 'matches')} in ${fileWord}`;
      // Past the budget only the page was checked: say how far the count goes, not a misleading small total.
      header = overBudget ? `Found more than ${VERIFY_BUDGET} matching files` : `Found ${atLeast}${what}`;
      if (page.shown < page.available || offset > 0) header += page.shown ? ` (showing ${offset + 1}-${offset + page.shown})` : ` (none after offset ${offset})`;
      header += '.';
      if (truncated) header += ` Narrow with glob, type or path, or page on with offset ${offset + page.shown}.`;
    }
    if (result.capped === 'time') header += ` Stopped at the time cap (${Math.round(timeCap / 100) / 10} s): the answer is partial.`;
    if (result.capped === 'visits') header += ` Stopped at the visit cap (${result.visited ?? ''} entries): the answer is partial.`;
    if (engine === 'builtin' && fallbackReason && !small) header += ` Built-in search used: ${fallbackReason}.`;
    for (const n of notes) header += ` ${n}`;
    if (deny.askSkipped) header += ` ${plural(deny.askSkipped, 'file or folder', 'files or folders')} left out by a policy rule that asks first.`;

    // The text block shows data's entries (core/render.ts); keep as many as fit the output limits.
    const chunks = itemChunks(page);
    const full = chunks.length ? `${header}\n${chunks.join('')}` : header;
    // Less a reserve: the note added below and the storage_ref line count against the limits too.
    const reserve = { bytes: Math.min(TEXT_RESERVE.bytes, ctx.limits.output_bytes >> 2), lines: Math.min(TEXT_RESERVE.lines, ctx.limits.output_lines >> 2) };
    const limited = limitText(full, lessUsed(ctx.limits, reserve.bytes, reserve.lines), 'head');
    let text = header;
    let storage_ref: string | undefined;
    let sha256: string | undefined;
    if (limited.truncated) {
      const spilled = await ctx.spill(full);
      storage_ref = spilled.storage_ref;
      sha256 = spilled.sha256;
      let used = header.length + 1;
      let fit = 0;
      while (fit < chunks.length && used + chunks[fit]!.length <= limited.text.length) used += chunks[fit++]!.length;
      text += ` Only ${fit} of the ${page.shown} entries fit the output limit; all are in ${storage_ref}.`;
      keepFirst(page, fit);
      truncated = true;
    }

    const fallback_used = engine === 'builtin' && !small;
    const data: Data = {
      output_mode: q.mode,
      ...(page.matches ? { matches: page.matches } : {}),
      ...(page.files ? { files: page.files } : {}),
      ...(page.counts ? { counts: page.counts } : {}),
      total_files: hits.length,
      ...(q.mode !== 'files_with_matches' ? { total_matches: page.matchTotal } : {}),
      totals_exact: exact,
      offset,
      head_limit: limit,
      truncated,
      capped: result.capped,
      fallback_used,
      fallback_reason: engine === 'builtin' ? fallbackReason : null,
      engine,
      ...(notes.length ? { notes } : {}),
      skipped_by_policy: deny.askSkipped,
    };
    const stats: Record<string, number> = { matched: q.mode === 'files_with_matches' ? hits.length : page.matchTotal, files: hits.length };
    if (result.visited !== undefined) stats.visited = result.visited;
    // ripgrep's own count includes files the deny lists and rules leave out: not reported.
    if (result.searched !== undefined && engine === 'builtin') stats.searched = result.searched;
    return {
      data, text, stats, storage_ref, sha256,
      status: truncated || result.capped || fallback_used ? 'partial' : 'ok',
    };
  },
});
