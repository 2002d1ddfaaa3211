import { z } from 'zod';
import { defineTool, descriptionBeside } from '../../core/define-tool.js';
import type { Current } from '../../fs-write/current.js';
import { executeFileChange, fileChangeFields, planFileChange } from '../../fs-write/file-change.js';
import { applyEdits, MAX_EDIT_STRING, type EditSpec } from '../../fs-write/replace.js';
import { decodeText, encodeText } from '../../fs-write/text.js';

const edit = z.strictObject({
  old_string: z.string().min(1).max(MAX_EDIT_STRING).describe('Exact text to replace, in the file as the earlier edits left it.'),
  new_string: z.string().max(MAX_EDIT_STRING).describe('Text to put in its place.'),
  replace_all: z.boolean().default(false).describe('Replace every occurrence of old_string.'),
});

const input = z.strictObject({
  path: z.string().describe('File to edit, relative to the workspace root.'),
  edits: z.array(edit).min(1).max(100).describe('Edits applied in order to the text; each must match (uniquely unless replace_all).'),
  dry_run: z.boolean().default(false).describe('Only return the diff; write nothing.'),
  expected_sha256: z.string().regex(/^(sha256:)?[0-9a-fA-F]{64}$/).optional()
    .describe('SHA-256 of the content you expect the file to have now; replaces the need to read it first in this session.'),
});

const output = z.object({
  ...fileChangeFields,
  edits: z.array(z.object({
    replacements: z.number().int(),
    lines: z.array(z.number().int()).describe('1-based lines where this edit matched, in the text as the earlier edits left it.'),
  })),
});

function transform(edits: EditSpec[], display: string) {
  return (current: Current | null) => {
    const file = decodeText(current!.buf, display);
    const { text, outcomes } = applyEdits(file, edits, display);
    return { buf: encodeText(text, file.bom), extra: { edits: outcomes }, lineEndings: file.eol, before: file, after: { ...file, text } };
  };
}

export const multiEditTool = defineTool({
  name: 'multi_edit',
  version: '1.0.0',
  title: 'Several edits to one file',
  description: descriptionBeside(import.meta.url),
  input,
  output,
  risk: 'medium',
  permissions: ['fs.write'],
  side_effects: 'changes one existing file (one atomic rename)',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  aliases: { file_path: 'path' },
  plan: (args, ctx) => planFileChange(args, ctx, { verb: `${args.edits.length} edit(s) to`, mayCreate: false }, transform(args.edits, args.path)),
  execute: (args, plan, ctx) => executeFileChange(args, plan, ctx, transform(args.edits, plan.targets[0]?.kind === 'path' ? plan.targets[0].path.display : args.path)),
});
