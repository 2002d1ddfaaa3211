import type { AnyTool } from '../core/define-tool.js';
import { applyPatchTool } from './apply-patch/apply-patch.js';
import { deleteFileTool } from './delete-file/delete-file.js';
import { editFileTool } from './edit-file/edit-file.js';
import { multiEditTool } from './multi-edit/multi-edit.js';
import { writeFileTool } from './write-file/write-file.js';

/** Change files: write, edit, multi-edit, patch, delete. */
export const editTools: AnyTool[] = [writeFileTool, editFileTool, multiEditTool, applyPatchTool, deleteFileTool];
