import type { AnyTool } from '../core/define-tool.js';
import { commandTools } from './command-tools.js';
import { editTools } from './edit-tools.js';
import { netTools } from './net-tools.js';
import { readTools } from './read-tools.js';

/** The registry: an explicit list, never a directory scan. Each group file is owned by one area. */
export function allTools(): AnyTool[] {
  return [...readTools, ...editTools, ...commandTools, ...netTools];
}
