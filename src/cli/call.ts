import { runCall } from '../core/pipeline.js';
import { Session } from '../core/session.js';
import { SessionRoots } from '../server/session-roots.js';
import { parseJsonArgs } from './json-args.js';
import { setup, type CommonFlags } from './setup.js';

export async function callCommand(tool: string, flags: CommonFlags & { args?: string; approve?: boolean }): Promise<number> {
  const args = parseJsonArgs(flags.args);
  const { rt, ceiling } = await setup(flags, { forTool: tool });
  const session = new Session();
  // The person at the shell is the approver: "ask" runs, "deny" still does not.
  session.preApproved = flags.approve === true;
  const ctrl = new AbortController();
  process.once('SIGINT', () => ctrl.abort());
  const { envelope } = await runCall(rt, new SessionRoots(rt, ceiling, session), tool, args, {
    signal: ctrl.signal,
    progress: (m) => process.stderr.write(`… ${m}\n`),
    notify: async (level, data) => { process.stderr.write(`[${level}] ${JSON.stringify(data)}\n`); },
  });
  process.stdout.write(JSON.stringify(envelope, null, 2) + '\n');
  await session.dispose();
  rt.close();
  return envelope.ok ? 0 : 1;
}
