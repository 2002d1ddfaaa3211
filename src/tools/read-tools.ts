import type { AnyTool } from '../core/define-tool.js';
import { displayTool } from './display/display.js';
import { globTool } from './glob/glob.js';
import { grepTool } from './grep/grep.js';
import { listDirTool } from './list-dir/list-dir.js';
import { readFileTool } from './read-file/read-file.js';

/** Look, search, read — and display, which touches nothing. */
export const readTools: AnyTool[] = [displayTool, listDirTool, globTool, grepTool, readFileTool];
