import { z } from 'zod';
import { defineTool, descriptionBeside } from '../../core/define-tool.js';
import { ToolError, isToolError } from '../../core/errors.js';
import { isPolicyRefusal } from '../../core/gate-audit.js';
import type { PlanTarget, ResolvedPath } from '../../core/types.js';
import { changeFields, boundedDiff } from '../../fs-write/result.js';
import { withPathLocks } from '../../fs-write/path-lock.js';
import { commitAll } from '../../fs-write/transaction.js';
import { createParents, parentExists, removeCreatedDirs } from '../../fs-write/mkdirs.js';
import { parseFilePatches } from './parse.js';
import { diffOf, stagePatch } from './stage.js';

const input = z.strictObject({
  patch: z.string().min(1).max(5 * 1024 * 1024).describe('A unified diff (git style or plain): "--- a/path" / "+++ b/path" headers and "@@ -l,n +l,n @@" hunks; /dev/null for added or deleted files; "rename from/to" or differing names for renames. Several files allowed.'),
  dry_run: z.boolean().default(false).describe('Check the patch and return the resulting diff; write nothing.'),
});

const output = z.object({
  files: z.array(z.object({
    op: z.enum(['add', 'modify', 'delete', 'rename']),
    path: z.string().describe('The path after the change (before, for a delete).'),
    from: z.string().nullable().describe('The old path of a rename.'),
    sha256: z.string().nullable().describe('SHA-256 of the new content (null for a delete).'),
    hunks: z.number().int(),
    offsets: z.array(z.number().int()).describe('How many lines each hunk moved from where its header said (0: applied where it said).'),
  })),
  ...changeFields,
});

export const applyPatchTool = defineTool({
  name: 'apply_patch',
  version: '1.0.0',
  title: 'Apply a patch',
  description: descriptionBeside(import.meta.url),
  input,
  output,
  risk: 'medium',
  permissions: ['fs.write', 'fs.delete'],
  side_effects: 'adds, changes, renames or deletes the files the patch names, all or nothing',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  aliases: { diff: 'patch', patch_text: 'patch' },
  async plan(args, ctx) {
    const files = parseFilePatches(args.patch);
    const targets: PlanTarget[] = [];
    const seen = new Map<string, string>();
    const claim = (rp: ResolvedPath) => {
      const other = seen.get(rp.abs);
      if (other !== undefined) throw new ToolError('PatchFailed', `The patch touches ${rp.display} twice (${other} and ${rp.input}); put each file's changes in one section.`);
      seen.set(rp.abs, rp.input);
    };
    const parts: string[] = [];
    // Every path is judged (resolve: the rules, the lists) before any is looked at: otherwise a
    // denied path after an asked one would be refused or held depending on the asked one's state.
    // resolve() itself may fail on what it finds (a FIFO, a dangling link): such a failure waits
    // until every later path was judged too.
    const resolved: Array<{ from: ResolvedPath | null; to: ResolvedPath | null }> = [];
    let found: unknown;
    const judged = async (p: string, access: 'write' | 'delete' | 'create'): Promise<ResolvedPath | null> => {
      try {
        return await ctx.workspace.resolve(p, access);
      } catch (e) {
        if (!isToolError(e) || isPolicyRefusal(e)) throw e;
        found ??= e;
        return null;
      }
    };
    for (const fp of files) {
      resolved.push({
        from: fp.from !== null ? await judged(fp.from, fp.op === 'modify' ? 'write' : 'delete') : null,
        to: fp.to !== null && fp.op !== 'modify' ? await judged(fp.to, 'create') : null,
      });
    }
    if (found) throw found;
    for (const [i, fp] of files.entries()) {
      if (fp.from !== null) {
        const rp = resolved[i]!.from!;
        if (!rp.exists) throw new ToolError('NotFound', `${rp.display} (named by the patch) does not exist.`, { details: { path: rp.display } });
        if (rp.kind !== 'file') throw new ToolError('PatchFailed', `${rp.display} is not a file.`);
        claim(rp);
        targets.push({ kind: 'path', access: fp.op === 'modify' ? 'write' : 'delete', path: rp });
      }
      if (fp.to !== null && fp.op !== 'modify') {
        const rp = resolved[i]!.to!;
        if (rp.exists) throw new ToolError('AlreadyExists', `${rp.display} already exists; the patch ${fp.op === 'add' ? 'adds' : 'renames a file to'} it. Change it with a modify section instead.`, { details: { path: rp.display } });
        claim(rp);
        targets.push({ kind: 'path', access: 'create', path: rp });
      }
      parts.push(fp.op === 'rename' ? `rename ${fp.from} → ${fp.to}` : `${fp.op} ${fp.to ?? fp.from}`);
    }
    return { targets, summary: `apply a patch to ${files.length} file(s): ${parts.join(', ')}${args.dry_run ? ' (dry run)' : ''}` };
  },
  async execute(args, plan, ctx) {
    const files = parseFilePatches(args.patch);
    const paths = plan.targets.flatMap((t) => (t.kind === 'path' ? [t.path] : []));
    return withPathLocks(paths.map((p) => p.abs), async () => {
      const staged = await stagePatch(files, paths, ctx);
      const { diff, stats } = diffOf(staged);
      const ops = staged.flatMap((s) => s.ops);
      const created: string[] = [];
      if (!args.dry_run) {
        try {
          for (const s of staged) {
            if (s.newPath && !s.newPath.exists && !(await parentExists(s.newPath))) created.push(...(await createParents(s.newPath, ctx.workspace)).created);
          }
          const written = await commitAll(ops, { allowHardlinks: ctx.workspace.rules.allowHardlinks });
          for (const s of staged) {
            if (s.oldPath && s.op !== 'modify') ctx.session.reads.delete(s.oldPath.abs);
            const target = s.newPath ?? (s.op === 'modify' ? s.oldPath : null);
            const st = target ? written.get(target.abs) : undefined;
            if (target && st && s.sha256) ctx.session.recordRead(target.abs, { size: st.size, mtime_ms: st.mtimeMs, sha256: s.sha256 });
          }
        } catch (e) {
          await removeCreatedDirs(created);
          throw e;
        }
      }
      const bd = await boundedDiff(diff, ctx);
      const changed = [...new Set(staged.flatMap((s) => [s.oldPath?.display, s.newPath?.display].filter((x): x is string => !!x)))];
      return {
        data: {
          files: staged.map((s) => ({ op: s.op, path: (s.newPath ?? s.oldPath)!.display, from: s.op === 'rename' ? s.oldPath!.display : null, sha256: s.sha256, hunks: s.hunks, offsets: s.offsets })),
          diff: bd.diff, diff_truncated: bd.diff_truncated, files_changed: changed, dry_run: args.dry_run,
          added_lines: stats.added, removed_lines: stats.removed,
        },
        text: `${args.dry_run ? 'Dry run: the patch applies to' : 'Patched'} ${staged.length} file(s): ${staged.map((s) => `${s.op} ${(s.newPath ?? s.oldPath)!.display}`).join(', ')} (+${stats.added} -${stats.removed} lines).`,
        files_changed: args.dry_run ? [] : changed,
        hashes: args.dry_run ? {} : Object.fromEntries(staged.map((s) => [(s.newPath ?? s.oldPath)!.display, s.sha256 ?? 'deleted'])),
        ...(bd.storage_ref ? { storage_ref: bd.storage_ref, sha256: bd.sha256 } : {}),
      };
    });
  },
});
