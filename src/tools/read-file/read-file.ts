import { createHash } from 'node:crypto';
import { z } from 'zod';
import { defineTool, descriptionBeside, FILE_READER } from '../../core/define-tool.js';
import { ToolError } from '../../core/errors.js';
import { limitText } from '../../core/output.js';
import type { ResolvedPath, ToolResult } from '../../core/types.js';
import { openFileForRead, readSmallFileSync } from '../../workspace/safe-open.js';
import { countLines, imageMime, readAll, scanBytes, scanText, type TextScan } from './scan.js';
import { lineRangeArgs } from './line-range.js';

/** Longer lines are cut (minified files would otherwise fill the whole budget with one line). */
export const MAX_LINE_CHARS = 2000;
/** base64 output stays well under the 10 MB stdio message limit whatever max_file_bytes says. */
export const MAX_BASE64_BYTES = 5 * 1024 * 1024;

const input = z.strictObject({
  path: z.string().describe('File to read, relative to the workspace root.'),
  offset: z.number().int().min(1).default(1).describe('First line to return, 1-based (default 1).'),
  limit: z.number().int().min(1).max(100_000).default(2000).describe('Most lines to return (default 2000).'),
  encoding: z.enum(['text', 'base64']).default('text').describe('"text" (default): numbered lines; binaries are refused. "base64": the raw bytes of the whole file.'),
  as_image: z.boolean().default(true).describe('With encoding "base64": return a PNG, JPEG, GIF or WebP file as an MCP image block (default true) instead of base64 in data.content.'),
});

const output = z.object({
  path: z.string(),
  content: z.string().describe('text: lines as "<number>\\t<line>" (like cat -n); base64: the bytes; empty for an image sent as an image block.'),
  encoding: z.enum(['text', 'base64']),
  offset: z.number().describe('First line shown (1-based).'),
  limit: z.number(),
  lines_returned: z.number(),
  total_lines: z.number(),
  next_offset: z.number().nullable().describe('offset to continue from, or null at the end of the file.'),
  truncated: z.boolean().describe('True when content stops before the end of the file or a line was cut.'),
  lines_cut: z.number().describe(`Lines cut at ${MAX_LINE_CHARS} characters.`),
  line_ending: z.enum(['lf', 'crlf', 'mixed', 'none']).optional(),
  size: z.number(),
  mtime_ms: z.number(),
  sha256: z.string().describe('Of the whole file.'),
  mime_type: z.string().optional().describe('For an image: its type (the bytes are in an image content block).'),
});

type Data = z.infer<typeof output>;

function numbered(lines: string[], first: number): string {
  let out = '';
  for (let i = 0; i < lines.length; i++) out += `${i ? '\n' : ''}${String(first + i).padStart(6)}\t${lines[i]}`;
  return out;
}

/** Text with line numbers, paged by line; or the bytes as base64 (images as image content). */
export const readFileTool = defineTool({
  name: 'read_file',
  version: '1.0.0',
  title: 'Read a file',
  description: descriptionBeside(import.meta.url),
  input,
  output,
  ...FILE_READER,
  side_effects: 'none (remembers the file\'s hash for this session, so later edits can check it is unchanged)',
  aliases: { file_path: 'path' },
  adaptArgs: lineRangeArgs,
  async plan(args, ctx) {
    const p = await ctx.workspace.resolve(args.path, 'read');
    return { targets: [{ kind: 'path', access: 'read', path: p }], summary: `read ${p.display}` };
  },
  inspect(args, plan) {
    const p = plan.targets[0]?.kind === 'path' ? plan.targets[0].path : null;
    if (!p?.exists) throw new ToolError('NotFound', `${args.path} does not exist; check the path with list_dir or glob.`, { details: { path: args.path } });
    if (p.kind === 'dir') throw new ToolError('InvalidArguments', `${p.display} is a folder; use list_dir to see what is in it.`);
  },
  async execute(args, plan, ctx): Promise<ToolResult<Data>> {
    const target = plan.targets[0];
    if (target?.kind !== 'path') throw new ToolError('Internal', 'read_file lost its target.');
    const rp: ResolvedPath = target.path;
    // A small regular file is read in one synchronous step; a big one (or off Linux) by the async path.
    const small = readSmallFileSync(rp, ctx.workspace);
    const opened = small ? null : await openFileForRead(rp, ctx.workspace);
    const stat = small ? small.stat : opened!.stat;
    const bytesOf = (size: number) => (small ? Promise.resolve(small.bytes) : readAll(opened!.fh, size, ctx.signal));
    const scanOf = (o: { offset: number; limit: number; maxLineChars: number; display: string }): Promise<TextScan> | TextScan =>
      (small ? scanBytes(small.bytes, o) : scanText(opened!.fh, { ...o, signal: ctx.signal }));
    try {
      const mtime_ms = Math.floor(stat.mtimeMs);
      if (args.encoding === 'base64') {
        const cap = Math.min(ctx.policy.data.limits.max_file_bytes, MAX_BASE64_BYTES);
        if (stat.size > cap) {
          throw new ToolError('FileTooLarge', `${rp.display} is ${stat.size} bytes; base64 reads are limited to ${cap} bytes. Read it as text with offset/limit, or inspect it with a command.`,
            { details: { size: stat.size, limit: cap } });
        }
        const bytes = await bytesOf(stat.size);
        const sha256 = createHash('sha256').update(bytes).digest('hex');
        ctx.session.recordRead(rp.abs, { size: bytes.length, mtime_ms, sha256 });
        const mime = args.as_image ? imageMime(bytes) : null;
        const base = {
          path: rp.display, encoding: 'base64' as const, offset: 1, limit: args.limit, total_lines: countLines(bytes),
          next_offset: null, truncated: false, lines_cut: 0, size: bytes.length, mtime_ms, sha256,
        };
        if (mime) {
          return {
            data: { ...base, content: '', lines_returned: 0, mime_type: mime },
            text: `${rp.display}: ${mime} image, ${bytes.length} bytes, returned as an image content block.`,
            content: [{ type: 'image', data: bytes.toString('base64'), mimeType: mime }],
          };
        }
        return {
          data: { ...base, content: bytes.toString('base64'), lines_returned: 0 },
          text: `${rp.display}: ${bytes.length} bytes as base64 in data.content.`,
        };
      }

      // Never ask for more lines than the output may hold: the rest would only be cut again.
      const limit = Math.min(args.limit, ctx.limits.output_lines);
      const scan = await scanOf({ offset: args.offset, limit, maxLineChars: MAX_LINE_CHARS, display: rp.display });
      ctx.session.recordRead(rp.abs, { size: scan.size, mtime_ms, sha256: scan.sha256 });
      const full = numbered(scan.lines, args.offset);
      const lim = limitText(full, ctx.limits, 'head');
      let content = full;
      let shown = scan.lines.length;
      let spill: { storage_ref: string; sha256: string } | undefined;
      if (lim.truncated) {
        // limitText keeps whole lines (each with its newline), or part of the first when even that is too big.
        if (lim.text.endsWith('\n')) {
          content = lim.text.slice(0, -1);
          shown = content.split('\n').length;
        } else {
          content = lim.text;
          shown = 1;
        }
        spill = await ctx.spill(full);
      }
      const lastShown = args.offset + shown - 1;
      const next = shown > 0 && lastShown < scan.total_lines ? lastShown + 1 : null;
      const truncated = next !== null || scan.lines_cut > 0;
      const data: Data = {
        path: rp.display, content, encoding: 'text', offset: args.offset, limit: args.limit, lines_returned: shown,
        total_lines: scan.total_lines, next_offset: next, truncated, lines_cut: scan.lines_cut, line_ending: scan.line_ending,
        size: scan.size, mtime_ms, sha256: scan.sha256,
      };
      let text: string;
      if (scan.total_lines === 0) text = `${rp.display} is empty (0 lines).`;
      else if (shown === 0) text = `offset ${args.offset} is past the end of ${rp.display}, which has ${scan.total_lines} lines; read from offset 1.`;
      else text = `${rp.display}: ${shown === 1 ? `line ${args.offset}` : `lines ${args.offset}-${lastShown}`} of ${scan.total_lines}.`;
      if (next !== null) text += ` More follows: read again with offset ${next}.`;
      if (lim.truncated) text += ' The page was cut to the output limit; the whole page is in storage_ref.';
      if (scan.lines_cut) text += ` ${scan.lines_cut} long line${scan.lines_cut === 1 ? ' was' : 's were'} cut at ${MAX_LINE_CHARS} characters.`;
      return {
        data, text, status: lim.truncated ? 'partial' : 'ok',
        stats: { lines: shown, bytes: scan.size },
        ...(spill ? { storage_ref: spill.storage_ref, sha256: spill.sha256 } : {}),
      };
    } finally {
      await opened?.fh.close().catch(() => {});
    }
  },
});
