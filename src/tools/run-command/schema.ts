import { z } from 'zod';

/** What run_command returns in data (also attached to Timeout / ExitNonZero errors). */
export const runOutput = z.object({
  exit_code: z.number().int().nullable().describe('Exit code; null while running or when killed by a signal.'),
  signal: z.string().nullable().describe('Signal that ended the process, if any.'),
  timed_out: z.boolean(),
  duration_ms: z.number().int(),
  sandbox: z.enum(['bwrap', 'none']).describe('Which OS sandbox ran the command.'),
  output: z.string().describe('stdout and stderr interleaved: head and tail when long.'),
  truncated: z.boolean(),
  total_bytes: z.number().int(),
  cwd: z.string(),
  id: z.string().optional().describe('Background runs: the id for process_output / process_write / process_kill.'),
  storage_ref: z.string().optional().describe('When truncated: the file with the whole output.'),
  sha256: z.string().optional(),
});
export type RunOutput = z.output<typeof runOutput>;
