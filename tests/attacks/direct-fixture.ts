// Shared by the tests of the direct exec of plain lines (src/exec/direct.ts, sandbox none): two
// servers on one workspace, one that execs plain lines directly and one that leaves every line to
// bash. The oracle: an OLDPWD in the command's environment makes toolgate leave a line to bash, and
// bash drops an OLDPWD that names no folder from what it exports.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';
import { helperPidForTests } from '../../src/exec/starter-use.js';

const ALLOW = 'commands: { prefer_tools: false }\nrules:\n  - tool: run_command\n    decision: allow\n';
export type Ran = { output: string; exit_code: number | null };

/** `set` (or a function of the workspace giving it) goes to env.set of both servers. The workspace holds a.txt. */
export function directPair(set: Record<string, string> | ((ws: string) => Record<string, string>) = {}) {
  const t = tempDir('tg-direct-');
  const ws = path.join(t.dir, 'ws');
  mkdirSync(ws);
  writeFileSync(path.join(ws, 'a.txt'), 'A\n');
  const base = typeof set === 'function' ? set(ws) : set;
  const yaml = (more: Record<string, string>) => {
    const entries = Object.entries({ ...base, ...more }).map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`);
    return `sandbox: { backend: none }\n${entries.length ? `env:\n  set: { ${entries.join(', ')} }\n` : ''}${ALLOW}`;
  };
  const direct = new Harness([ws], { policy: policyFromYaml(yaml({})), stateDir: path.join(t.dir, 's1') });
  const viaBash = new Harness([ws], { policy: policyFromYaml(yaml({ OLDPWD: '/nonexistent-tg' })), stateDir: path.join(t.dir, 's2') });
  // A server's first command runs directly while the starter starts (src/exec/run.ts, viaStarter),
  // through bash with the mark's wrapper, which bash shows in BASH_EXECUTION_STRING; every later one
  // goes through the starter. Both servers share this process's starter: it is ready before either runs.
  let starter: Promise<unknown> | undefined;
  const run = async (h: Harness, command: string): Promise<Ran> => {
    await (starter ??= helperPidForTests());
    const env = await h.call('run_command', { command });
    const d = env.data as Ran | null;
    assert.ok(d, `${command}: ${JSON.stringify(env.error)}`);
    return { output: d.output, exit_code: d.exit_code };
  };
  /** The line on both servers; asserts the same output and exit code, and returns the direct one's. */
  const sameAsBash = async (line: string): Promise<Ran> => {
    const x = await run(direct, line);
    assert.deepEqual(x, await run(viaBash, line), line);
    return x;
  };
  return { dir: t.dir, ws, direct, viaBash, run, sameAsBash, done: () => { direct.close(); viaBash.close(); t.cleanup(); } };
}
