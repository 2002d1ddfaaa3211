import type { AnyTool } from '../core/define-tool.js';
import { displayTool } from './display/display.js';

/** Look, search, read — and display, which touches nothing. */
export const readTools: AnyTool[] = [displayTool];
