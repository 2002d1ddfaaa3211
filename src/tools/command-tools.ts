import type { AnyTool } from '../core/define-tool.js';

export const commandTools: AnyTool[] = [];
