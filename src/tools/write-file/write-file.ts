import { z } from 'zod';
import { defineTool, descriptionBeside } from '../../core/define-tool.js';
import { ToolError } from '../../core/errors.js';
import { executeFileChange, fileChangeFields, planFileChange, type Transform } from '../../fs-write/file-change.js';
import { encodeText, toCrlf, toLf, tryDecodeText } from '../../fs-write/text.js';

const input = z.strictObject({
  path: z.string().describe('File to write, relative to the workspace root.'),
  content: z.string().describe('The whole new content of the file (UTF-8); with append: true, the text added at its end.'),
  append: z.boolean().default(false).describe('Add content at the end of the file (created if missing) instead of replacing it. Needs no prior read; atomic like a write.'),
  create_dirs: z.boolean().default(false).describe('Create missing parent directories.'),
  dry_run: z.boolean().default(false).describe('Only return the diff; write nothing.'),
  expected_sha256: z.string().regex(/^(sha256:)?[0-9a-fA-F]{64}$/).optional()
    .describe('SHA-256 of the content you expect the file to have now; replaces the need to read it first in this session.'),
});

export const writeFileTool = defineTool({
  name: 'write_file',
  version: '1.0.0',
  title: 'Write a file',
  description: descriptionBeside(import.meta.url),
  input,
  output: z.object(fileChangeFields),
  risk: 'medium',
  permissions: ['fs.write'],
  side_effects: 'creates, replaces or appends to one file (atomic rename)',
  // Not idempotent: append: true adds the content again on every call.
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  aliases: { file_path: 'path' },
  plan: (args, ctx) => planFileChange(args, ctx, { verb: args.append ? 'append to' : 'write', mayCreate: true, readNotRequired: args.append, sameContentNeedsNoRead: !args.append }, writeTransform(args)),
  execute: (args, plan, ctx) => executeFileChange(args, plan, ctx, writeTransform(args), { readNotRequired: args.append, sameContentNeedsNoRead: !args.append }),
});

/** The new bytes of a write_file call, from what is on disk now (null: a new file). */
function writeTransform(args: z.output<typeof input>): Transform<Record<string, never>> {
  return (current) => {
    const before = current ? tryDecodeText(current.buf) : null;
    if (args.append && current && !before) {
      throw new ToolError('InvalidArguments', `${args.path} is not a UTF-8 text file; append adds text only. Use write_file without append to replace it.`);
    }
    // An existing CRLF file stays CRLF, and keeps its byte order mark.
    let text = args.content;
    if (before?.eol === 'crlf' && !text.includes('\r\n')) text = toCrlf(toLf(text));
    if (args.append && current) {
      // Under the path lock: the current bytes + the new text, written back atomically.
      const buf = Buffer.concat([current.buf, encodeText(text, false)]);
      return { buf, extra: {}, lineEndings: tryDecodeText(buf)?.eol ?? 'none', before, after: tryDecodeText(buf) };
    }
    const buf = encodeText(text, before?.bom === true && !text.startsWith('\uFEFF'));
    const after = tryDecodeText(buf);
    return { buf, extra: {}, lineEndings: after?.eol ?? 'none', before, after };
  };
}
