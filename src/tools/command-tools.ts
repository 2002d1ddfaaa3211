import type { AnyTool } from '../core/define-tool.js';
import { processKillTool } from './process-kill/process-kill.js';
import { processListTool } from './process-list/process-list.js';
import { processOutputTool } from './process-output/process-output.js';
import { processWriteTool } from './process-write/process-write.js';
import { runCommandTool } from './run-command/run-command.js';

/** run_command and the background-process tools. */
export const commandTools: AnyTool[] = [runCommandTool, processListTool, processOutputTool, processWriteTool, processKillTool];
