import { z } from 'zod';
import { defineTool, descriptionBeside } from '../../core/define-tool.js';
import type { Current } from '../../fs-write/current.js';
import { executeFileChange, fileChangeFields, planFileChange } from '../../fs-write/file-change.js';
import { applyEdits, MAX_EDIT_STRING } from '../../fs-write/replace.js';
import { decodeText, encodeText } from '../../fs-write/text.js';

const input = z.strictObject({
  path: z.string().describe('File to edit, relative to the workspace root.'),
  old_string: z.string().min(1).max(MAX_EDIT_STRING).describe('Exact text to replace, as read_file shows it (without the line-number prefix). Must match exactly once unless replace_all.'),
  new_string: z.string().max(MAX_EDIT_STRING).describe('Text to put in its place (may be empty to delete).'),
  replace_all: z.boolean().default(false).describe('Replace every occurrence instead of requiring a unique match.'),
  dry_run: z.boolean().default(false).describe('Only return the diff; write nothing.'),
  expected_sha256: z.string().regex(/^(sha256:)?[0-9a-fA-F]{64}$/).optional()
    .describe('SHA-256 of the content you expect the file to have now; replaces the need to read it first in this session.'),
});

const output = z.object({
  ...fileChangeFields,
  replacements: z.number().int().describe('How many places were replaced.'),
  lines: z.array(z.number().int()).describe('1-based lines where the replacements start (in the file before the edit).'),
});

export function editTransform(args: { old_string: string; new_string: string; replace_all: boolean }, display: string) {
  return (current: Current | null) => {
    const file = decodeText(current!.buf, display);
    const { text, outcomes } = applyEdits(file, [args], display);
    const o = outcomes[0]!;
    return { buf: encodeText(text, file.bom), extra: { replacements: o.replacements, lines: o.lines }, lineEndings: file.eol, before: file, after: { ...file, text } };
  };
}

export const editFileTool = defineTool({
  name: 'edit_file',
  version: '1.0.0',
  title: 'Edit a file',
  description: descriptionBeside(import.meta.url),
  input,
  output,
  risk: 'medium',
  permissions: ['fs.write'],
  side_effects: 'changes one existing file (atomic rename)',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  aliases: { file_path: 'path' },
  plan: (args, ctx) => planFileChange(args, ctx, { verb: 'edit', mayCreate: false }, editTransform(args, args.path)),
  execute: (args, plan, ctx) => executeFileChange(args, plan, ctx, editTransform(args, plan.targets[0]?.kind === 'path' ? plan.targets[0].path.display : args.path)),
});
