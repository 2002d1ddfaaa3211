import { z } from 'zod';
import { defineTool, descriptionBeside, FILE_READER } from '../../core/define-tool.js';
import { ToolError } from '../../core/errors.js';
import { filesWithin, lessUsed, TEXT_RESERVE } from '../../core/render.js';
import type { PlanTarget, ResolvedPath, ToolContext, ToolResult } from '../../core/types.js';
import { locateRg, RgUnavailable } from '../grep/rg.js';
import { RG_IGNORE_FILES } from '../walk/ignore-stack.js';
import { DEFAULT_TIME_LIMIT_MS, walk, type StopReason } from '../walk/walk.js';
import { compilePattern } from './pattern.js';
import { rgGlob } from './rg-engine.js';

/**
 * Entries the built-in walker (used without ripgrep) looks at before it stops. A 200k-file tree
 * holds ~210k entries; at ~150k entries/s the 10 s time cap is the real bound past this.
 */
export const GLOB_MAX_VISITS = 1_000_000;

/**
 * Entries up to which glob walks a folder itself even when ripgrep is present (TOOLGATE_GLOB_WALK_MAX;
 * 0: always ripgrep). Where the two cross, measured in-process and interleaved (bench/glob-ab.ts,
 * 25 reps): 1,044 entries, walker 5.7 ms / rg engine 6.0 ms (server CPU 6.1 / 3.4 ms); ~100
 * entries, 1.4 / 4.8 ms.
 */
export const DEFAULT_SMALL_TREE_WALK_MAX = 1000;

/** Which engine lists a folder too big to walk directly (TOOLGATE_GLOB_ENGINE; default index). */
export type GlobEngineChoice = 'index' | 'ripgrep' | 'walker';

export function globEngineSetting(env: NodeJS.ProcessEnv = process.env): GlobEngineChoice {
  const v = env.TOOLGATE_GLOB_ENGINE?.trim().toLowerCase();
  return v === 'ripgrep' || v === 'rg' ? 'ripgrep' : v === 'walker' || v === 'builtin' ? 'walker' : 'index';
}

export function smallTreeWalkMax(env: NodeJS.ProcessEnv = process.env): number {
  const v = env.TOOLGATE_GLOB_WALK_MAX?.trim();
  if (!v) return DEFAULT_SMALL_TREE_WALK_MAX;
  const n = Number(v);
  return Number.isInteger(n) && n >= 0 ? n : DEFAULT_SMALL_TREE_WALK_MAX;
}

const input = z.strictObject({
  pattern: z.string().min(1).max(1000).describe('Glob relative to path: "*" stays in one folder, "**" crosses folders, {a,b} and [abc] work. Example: "src/**/*.ts".'),
  path: z.string().default('.').describe('Folder to search from, relative to the workspace root (default: the root).'),
  limit: z.number().int().min(1).max(10_000).default(1000).describe('Most paths to return (default 1000).'),
  hidden: z.boolean().default(false).describe('Also match names starting with a dot (a pattern that names one, like ".github/**", matches it anyway).'),
  gitignore: z.boolean().default(true).describe('Skip what .gitignore / .ignore files exclude (default true).'),
});

const output = z.object({
  pattern: z.string(),
  path: z.string().describe('The folder searched, workspace-relative.'),
  files: z.array(z.string()).describe('Matching files (and symlinks), workspace-relative, sorted.'),
  count: z.number().describe('How many paths are in files.'),
  total: z.number().describe('How many matched in all (at least; more may exist when the walk stopped early).'),
  truncated: z.boolean().describe('True when files holds fewer than total, or the walk stopped early.'),
  stopped: z.enum(['visit_cap', 'time_cap']).nullable().describe('Why the walk stopped before covering the tree, or null.'),
  skipped_by_policy: z.number().int().optional().describe('Entries left out because a policy rule asks before glob may touch them.'),
  engine: z.enum(['index', 'ripgrep', 'builtin']).describe('Which engine listed the files: index (each folder\'s entries remembered, re-checked by one look at the folder), ripgrep (rg --files) or the built-in walker.'),
  fallback_reason: z.string().nullable().describe('Why the built-in walker ran instead of ripgrep (e.g. "ripgrep is turned off (TOOLGATE_RG=off)", or "the folder is small …": a small folder is walked directly), or null.'),
});

export type GlobPlan = { targets: PlanTarget[]; summary: string; start: ResolvedPath | null; root: ResolvedPath; base: string };

/** Files by name pattern; walks only folders that can hold a match. */
export const globTool = defineTool({
  name: 'glob',
  version: '1.0.0',
  title: 'Find files by name pattern',
  description: descriptionBeside(import.meta.url),
  input,
  output,
  ...FILE_READER,
  side_effects: 'none',
  // Cursor's glob_file_search(glob_pattern, target_directory).
  aliases: { glob_pattern: 'pattern', target_directory: 'path' },
  async plan(args, ctx) {
    const compiled = compilePattern(args.pattern, { hidden: args.hidden });
    const root = await ctx.workspace.resolve(args.path, 'search');
    if (!root.exists) throw new ToolError('NotFound', `${args.path} does not exist; check the folder with list_dir or glob from the workspace root.`);
    if (root.kind !== 'dir') throw new ToolError('InvalidArguments', `${root.display} is a file, not a folder; set path to a folder (or read the file with read_file).`);
    const targets: PlanTarget[] = [{ kind: 'path', access: 'search', path: root }];
    let start: ResolvedPath | null = root;
    if (compiled.base) {
      const lexical = `${root.abs}/${compiled.base}`;
      try {
        start = await ctx.workspace.resolve(lexical, 'search', { named: compiled.base });
      } catch (e) {
        // A link on the way to the base would be followed by resolve; a walk never follows links, so nothing matches there.
        if (!(e instanceof ToolError) || e.code !== 'PathTraversalBlocked') throw e;
        start = null;
      }
      if (start && (!start.exists || start.kind !== 'dir' || start.abs !== lexical)) start = null;
      if (start) targets.push({ kind: 'path', access: 'search', path: start });
    }
    return { targets, summary: `find ${compiled.pattern} under ${root.display}`, start, root, base: compiled.base } satisfies GlobPlan;
  },
  execute: (args, plan, ctx) => globFiles(args, plan as GlobPlan, ctx),
});

export interface GlobCaps {
  maxVisits: number;
  timeLimitMs: number;
  /** Forces an engine (tests compare them); default: TOOLGATE_GLOB_ENGINE (index). */
  engine?: 'auto' | 'builtin' | 'ripgrep' | 'index';
}

/** The search and the result, with the caps as parameters (tests lower them). */
export async function globFiles(args: z.output<typeof input>, plan: GlobPlan, ctx: ToolContext, caps: GlobCaps = { maxVisits: GLOB_MAX_VISITS, timeLimitMs: DEFAULT_TIME_LIMIT_MS }): Promise<ToolResult<z.infer<typeof output>>> {
  const { start, root, base } = plan;
  const compiled = compilePattern(args.pattern, { hidden: args.hidden });
  let matches: string[] = [];
  let stopped: StopReason | null = null;
  let visited = 0;
  let policySkipped = 0;
  let quiet = 0;
  let smallFolder = false;
  const setting = process.env.TOOLGATE_RG?.trim();
  const choice: GlobEngineChoice = caps.engine === 'builtin' ? 'walker' : caps.engine === 'ripgrep' || caps.engine === 'index' ? caps.engine : globEngineSetting();
  const bin = choice === 'ripgrep' ? await locateRg(process.env, ctx.workspace.roots) : null;
  let engine: 'index' | 'ripgrep' | 'builtin' = choice === 'index' ? 'index' : bin ? 'ripgrep' : 'builtin';
  let fallbackReason: string | null = engine !== 'builtin' ? null
    : caps.engine === 'builtin' ? 'the built-in walker was asked for' : choice === 'walker' ? 'the built-in walker was asked for (TOOLGATE_GLOB_ENGINE=walker)' : setting && /^(off|0|false|no|none)$/i.test(setting) ? 'ripgrep is turned off (TOOLGATE_RG=off)' : 'ripgrep (rg) is not on PATH or does not run';
  if (start) {
    const prefix = base ? `${base}/` : '';
    const hidden = args.hidden || compiled.mentionsDot;
    const sizes = ctx.workspace.treeSizes;
    const runWalk = async (maxVisits: number) => {
      const found: string[] = [];
      const r = await walk({
        workspace: ctx.workspace,
        start,
        hidden,
        gitignore: args.gitignore,
        ignoreFiles: RG_IGNORE_FILES,
        named: root.relToRoot,
        signal: ctx.signal,
        maxVisits,
        timeLimitMs: caps.timeLimitMs,
        descend: (e) => compiled.canContain(e.rel.split('/')),
        onEntry: (e) => {
          if (e.type !== 'dir' && e.type !== 'other' && compiled.match(prefix + e.rel)) found.push(ctx.workspace.display(e.abs));
        },
        onProgress: (n) => ctx.progress(`glob: ${n} entries visited, ${found.length} matches`),
      });
      if (r.stopped === 'aborted') throw new ToolError('Cancelled', 'The glob was cancelled.');
      return { r, found };
    };
    const useWalk = ({ r, found }: Awaited<ReturnType<typeof runWalk>>) => {
      matches = found;
      stopped = r.stopped === 'stopped' ? null : r.stopped;
      visited = r.visited;
      policySkipped = r.skipped.policy;
    };
    let ran = false;
    // A small folder is walked here (starting rg and find costs more than walking it); the
    // walker's budget tells a small folder from a big one, remembered per folder (TreeSizes).
    const walkMax = Math.min(smallTreeWalkMax(), caps.maxVisits);
    if (engine !== 'builtin' && walkMax > 0 && !sizes.over(start.abs, walkMax)) {
      const probe = await runWalk(walkMax);
      if (probe.r.stopped === 'visit_cap') sizes.setMoreThan(start.abs, walkMax);
      else {
        sizes.set(start.abs, probe.r.visited);
        useWalk(probe);
        engine = 'builtin';
        fallbackReason = `the folder is small (${probe.r.visited} entries, at most ${walkMax}): walking it is faster than ${bin ? 'starting ripgrep' : 'the index'}`;
        smallFolder = true;
        ran = true;
      }
    }
    if (engine !== 'builtin' && !ran) {
      try {
        const r = await rgGlob(engine === 'index' ? null : bin, {
          ws: ctx.workspace, start, named: root.relToRoot, compiled, prefix, hidden, gitignore: args.gitignore,
          signal: ctx.signal, deadline: Date.now() + caps.timeLimitMs,
        });
        // Entries that changed place while rg ran are left out without a note: through a folder
        // swapped for a link to outside, their count told that names matching the pattern exist there.
        ({ matches, stopped, visited } = r);
        quiet = r.quiet;
        policySkipped = r.policySkipped;
        ran = true;
      } catch (e) {
        if (!(e instanceof RgUnavailable)) throw e;
        fallbackReason = e.message;
        engine = 'builtin';
      }
    }
    if (!ran) useWalk(await runWalk(caps.maxVisits));
  }
  matches.sort();
  const total = matches.length;
  const files = matches.slice(0, args.limit);
  const cut = total > files.length;
  // The text block shows what fits the output limits (core/render.ts); past them the full list is saved too.
  const spill = cut || filesWithin(files, lessUsed(ctx.limits, TEXT_RESERVE.bytes, TEXT_RESERVE.lines)) !== files ? await ctx.spill(matches.join('\n') + '\n') : undefined;
  const where = root.display;
  const under = where === '.' ? 'in the workspace' : `under ${where}`;
  let text = total === 0
    ? `No files match ${compiled.pattern} ${under}.${args.gitignore ? ' Ignored files were skipped (gitignore: false includes them).' : ''}`
    : `Found ${total} file${total === 1 ? '' : 's'} matching ${compiled.pattern} ${under}${cut ? ` (showing the first ${files.length}; the full list is in storage_ref)` : ''}.`;
  if (stopped) {
    text += ` The search stopped early (${(stopped as StopReason) === 'visit_cap' ? `visited ${visited} entries, the cap` : `time limit of ${caps.timeLimitMs / 1000} s`}), so results are incomplete: narrow it with a deeper path or a more specific pattern (e.g. "src/**/*.ts").`;
  } else if (cut) {
    text += ' Narrow the pattern or path to see the rest here.';
  }
  if (engine === 'builtin' && fallbackReason && !smallFolder) text += ` Built-in walker used: ${fallbackReason}.`;
  if (policySkipped) text += ` ${policySkipped} entr${policySkipped === 1 ? 'y was' : 'ies were'} left out by a policy rule that asks first.`;
  return {
    data: { pattern: compiled.pattern, path: where, files, count: files.length, total, truncated: cut || stopped !== null, stopped, skipped_by_policy: policySkipped, engine, fallback_reason: engine === 'builtin' ? fallbackReason : null },
    text,
    status: cut || stopped ? 'partial' : 'ok',
    stats: { matched: total, visited, ...(engine !== 'builtin' ? { unchanged_folder_files: quiet } : {}) },
    ...(spill ? { storage_ref: spill.storage_ref, sha256: spill.sha256 } : {}),
  };
}
