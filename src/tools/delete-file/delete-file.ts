import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { defineTool, descriptionBeside } from '../../core/define-tool.js';
import { ToolError, fromSystemError } from '../../core/errors.js';
import type { PlanTarget, ResolvedPath } from '../../core/types.js';
import type { Workspace } from '../../workspace/workspace.js';
import { readCurrent } from '../../fs-write/current.js';
import { unifiedDiff } from '../../fs-write/diff.js';
import { withPathLocks } from '../../fs-write/path-lock.js';
import { boundedDiff, changeFields } from '../../fs-write/result.js';
import { syncDirLater } from '../../fs-write/atomic-write.js';
import { tryDecodeText } from '../../fs-write/text.js';
import { removeOne, removeTree, walkForDelete, type Entry } from './walk.js';
import { globStartsBelow } from '../../workspace/path-gate.js';

const input = z.strictObject({
  path: z.string().describe('File (or, with recursive, directory) to delete, relative to the workspace root.'),
  recursive: z.boolean().default(false).describe('Required to delete a directory and everything in it.'),
  dry_run: z.boolean().default(false).describe('Only list what would be deleted.'),
});

const LISTED = 1000;

const output = z.object({
  path: z.string(),
  kind: z.enum(['file', 'dir', 'link']),
  deleted: z.array(z.string()).describe(`What was deleted (or would be, on dry_run), deepest first; at most ${LISTED} listed.`),
  deleted_count: z.number().int(),
  sha256_before: z.string().nullable().describe('SHA-256 of a deleted file (null for a directory).'),
  ...changeFields,
});

function pathOf(targets: PlanTarget[]): ResolvedPath {
  const t = targets[0];
  if (!t || t.kind !== 'path') throw new ToolError('Internal', 'plan has no path target');
  return t.path;
}

/**
 * When the path names a symbolic link, the link itself is what gets deleted (never what it
 * points at, which may lie outside): its real parent plus its own name, checked against the lists.
 */
async function resolveLink(input: string, ws: Workspace): Promise<ResolvedPath | null> {
  const base = path.basename(input);
  if (input.endsWith('/') || base === '' || base === '.' || base === '..') return null;
  const parent = await ws.resolve(path.dirname(input), 'list', { named: input });
  const abs = path.join(parent.abs, base);
  const lexical = path.resolve(path.isAbsolute(input) ? input : path.join(ws.primary, input));
  // Judged before the lstat: what lies at a denied path must not change the answer.
  ws.admitPath(input, 'delete', lexical);
  ws.admitPath(input, 'delete', abs);
  const st = await lstat(abs).catch(() => null);
  if (!st?.isSymbolicLink()) return null;
  const loc = ws.locate(abs);
  const lexLoc = ws.locate(lexical);
  if (!loc) throw new ToolError('PathTraversalBlocked', `${input} lies outside the workspace.`);
  for (const [rel, a] of [[loc.relToRoot, abs], [lexLoc?.relToRoot ?? null, lexical]] as const) {
    if (ws.rules.isProtected(rel, a)) {
      throw new ToolError('PathDenied', `${input} is protected or on the secrets deny list; no tool may delete it.`, { details: { path: input } });
    }
  }
  return { input, abs, display: ws.display(abs), rootIndex: loc.rootIndex, relToRoot: loc.relToRoot, exists: true, kind: 'other' };
}

/**
 * A recursive delete of a folder that holds an area a deny rule (or paths.deny) names by its
 * path — `d1` when a rule denies `d1/d2/d3/**` — is refused from the rules' text alone, before
 * the walk: the answer is the same whether anything lies there or not.
 */
function refuseDeniedBelow(input: string, rp: ResolvedPath, ws: Workspace): void {
  for (const [rel, abs] of [[rp.relToRoot, rp.abs], ...(rp.lexical ? [[rp.lexical.relToRoot, rp.lexical.abs]] : [])] as Array<[string, string]>) {
    const v = ws.gate?.denyBelow(rel, abs);
    if (v) {
      throw new ToolError('ToolNotAllowed', `delete_file ${input} with recursive would reach paths the policy denies (${v.rule}); delete the entries next to them one by one.`,
        { details: { path: input, rule: v.rule } });
    }
    const secret = ws.rules.deny.find((g) => globStartsBelow(g, rel, abs));
    if (secret) {
      throw new ToolError('PathDenied', `delete_file ${input} with recursive would reach paths on the secrets deny list (paths.deny: ${secret}); delete the entries next to them one by one.`,
        { details: { path: input, list: 'deny' } });
    }
  }
}

export const deleteFileTool = defineTool({
  name: 'delete_file',
  version: '1.0.0',
  title: 'Delete a file',
  description: descriptionBeside(import.meta.url),
  input,
  output,
  risk: 'high',
  permissions: ['fs.delete'],
  side_effects: 'deletes a file, or a directory tree with recursive',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  aliases: { file_path: 'path' },
  async plan(args, ctx) {
    const rp = (await resolveLink(args.path, ctx.workspace)) ?? await ctx.workspace.resolve(args.path, 'delete');
    if (args.recursive) refuseDeniedBelow(args.path, rp, ctx.workspace);
    if (!rp.exists) throw new ToolError('NotFound', `${rp.display} does not exist; nothing to delete.`, { details: { path: rp.display } });
    if (rp.relToRoot === '') throw new ToolError('InvalidArguments', 'That is a workspace root; toolgate does not delete a root.');
    const targets: PlanTarget[] = [{ kind: 'path', access: 'delete', path: rp }];
    if (rp.kind === 'dir') {
      if (!args.recursive) throw new ToolError('InvalidArguments', `${rp.display} is a directory; pass recursive: true to delete it and everything in it.`, { details: { path: rp.display } });
      // Every entry is a target, so a rule that denies or asks about part of the tree is heard.
      for (const e of await walkForDelete(rp, ctx.workspace)) {
        targets.push({ kind: 'path', access: 'delete', path: { input: e.rel, abs: e.abs, display: ctx.workspace.display(e.abs), rootIndex: rp.rootIndex, relToRoot: e.rel, exists: true, kind: e.kind === 'dir' ? 'dir' : e.kind === 'file' ? 'file' : 'other', bases: ctx.workspace.rules.bases } });
      }
    }
    return { targets, summary: `delete ${rp.kind === 'other' ? 'the link ' : ''}${rp.display}${rp.kind === 'dir' ? ` and the ${targets.length - 1} entries in it` : ''}${args.dry_run ? ' (dry run)' : ''}` };
  },
  async execute(args, plan, ctx) {
    const rp = pathOf(plan.targets);
    const ws = ctx.workspace;
    return withPathLocks([rp.abs], async () => {
      let entries: Entry[];
      let sha: string | null = null;
      let diff = '';
      let stats = { added: 0, removed: 0 };
      let kind: 'file' | 'dir' | 'link' = 'file';
      let ino: number | null = null;
      if (rp.kind === 'dir') {
        kind = 'dir';
        entries = await walkForDelete(rp, ws);
        const planned = new Set(plan.targets.map((t) => (t.kind === 'path' ? t.path.abs : '')));
        const added = entries.find((e) => !planned.has(e.abs));
        if (added) throw new ToolError('StaleRead', `${ws.display(added.abs)} appeared in ${rp.display} after the call was approved; nothing was deleted. Call delete_file again.`, { details: { path: rp.display, entry: ws.display(added.abs) } });
        entries.push({ abs: rp.abs, rel: rp.relToRoot, kind: 'dir' });
      } else if (rp.kind === 'other') {
        kind = 'link';
        if (!(await lstat(rp.abs).catch(() => null))?.isSymbolicLink()) throw new ToolError('StaleRead', `${rp.display} is no longer a link; nothing was deleted.`);
        entries = [{ abs: rp.abs, rel: rp.relToRoot, kind: 'link' }];
      } else {
        const cur = await readCurrent(rp, ws, ctx.policy.data.limits.max_file_bytes).catch((e) => {
          // Too large or hard-linked: still deletable (unlinking a name cannot reach another link), just no diff.
          if ((e as ToolError).code === 'FileTooLarge' || (e as ToolError).code === 'PathDenied') return undefined;
          throw e;
        });
        if (cur === null) throw new ToolError('NotFound', `${rp.display} no longer exists.`, { details: { path: rp.display } });
        if (cur) {
          ino = cur.stat.ino;
          sha = cur.sha256;
          const text = tryDecodeText(cur.buf);
          ({ diff, stats } = unifiedDiff([{ from: rp.display, to: null, oldText: text?.text ?? null, newText: null, binary: !text }]));
        }
        entries = [{ abs: rp.abs, rel: rp.relToRoot, kind: 'file' }];
      }
      const listed = entries.slice(0, LISTED).map((e) => ws.display(e.abs));
      if (!args.dry_run) {
        // Every unlink/rmdir goes through the opened, verified folder holding the entry, so a
        // folder swapped for a link to the outside meanwhile cannot redirect it.
        if (kind === 'dir') await removeTree(rp, ws, new Set(entries.map((e) => e.abs)));
        else {
          await removeOne(rp.abs, rp.display, ws, (st) => {
            if (kind === 'link' ? !st.isSymbolicLink() : st.isDirectory() || st.isSymbolicLink() || (ino !== null && st.ino !== ino)) {
              throw new ToolError('StaleRead', `${rp.display} was replaced while deleting it; nothing was deleted. Call delete_file again.`, { details: { path: rp.display } });
            }
          });
        }
        syncDirLater(path.dirname(rp.abs));
        for (const e of entries) ctx.session.reads.delete(e.abs);
      }
      const bd = await boundedDiff(diff, ctx);
      const changed = args.dry_run ? [] : listed;
      return {
        data: {
          path: rp.display, kind, deleted: listed, deleted_count: entries.length, sha256_before: sha,
          diff: bd.diff, diff_truncated: bd.diff_truncated, files_changed: listed, dry_run: args.dry_run,
          added_lines: stats.added, removed_lines: stats.removed,
        },
        text: `${args.dry_run ? 'Dry run: would delete' : 'Deleted'} ${rp.display}${kind === 'dir' ? ` (${entries.length} entries)` : ''}.`,
        files_changed: changed,
        hashes: args.dry_run ? {} : { [rp.display]: 'deleted' },
        ...(bd.storage_ref ? { storage_ref: bd.storage_ref, sha256: bd.sha256 } : {}),
      };
    });
  },
});
