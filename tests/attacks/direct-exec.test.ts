// Plain command lines exec'd without bash (src/exec/direct.ts, sandbox none): what a command sees
// must be what `bash -c` gives it — environment, argv[0], output, exit code — and any line bash
// would expand, split, redirect or run itself must still go through bash. The oracle is the same
// line with bash forced: an OLDPWD in the command's environment (policy env.set) makes toolgate
// leave the line to bash, and bash drops OLDPWD from what it exports.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';
import { resetStarterForTests } from '../../src/exec/starter-use.js';

const ALLOW = 'commands: { prefer_tools: false }\nrules:\n  - tool: run_command\n    decision: allow\n';
type Ran = { output: string; exit_code: number | null };

/** Two servers on one workspace: one that execs plain lines directly, one that leaves every line to bash. */
function pair(envOf: (ws: string) => string = () => '') {
  const t = tempDir('tg-direct-e2e-');
  const ws = path.join(t.dir, 'ws');
  mkdirSync(ws);
  writeFileSync(path.join(ws, 'a.txt'), 'A\n');
  const extraEnv = envOf(ws);
  const set = (more: string) => `env:\n  set: { ${[extraEnv, more].filter(Boolean).join(', ')} }\n`;
  const direct = new Harness([ws], { policy: policyFromYaml(`sandbox: { backend: none }\n${extraEnv ? set('') : ''}${ALLOW}`), stateDir: path.join(t.dir, 's1') });
  const viaBash = new Harness([ws], { policy: policyFromYaml(`sandbox: { backend: none }\n${set('OLDPWD: /nonexistent-tg')}${ALLOW}`), stateDir: path.join(t.dir, 's2') });
  const run = async (h: Harness, command: string): Promise<Ran> => {
    const env = await h.call('run_command', { command });
    const d = env.data as Ran | null;
    assert.ok(d, `${command}: ${JSON.stringify(env.error)}`);
    return { output: d.output, exit_code: d.exit_code };
  };
  return { t, ws, direct, viaBash, run, done: () => { direct.close(); viaBash.close(); t.cleanup(); } };
}

const sortedLines = (s: string) => s.split('\n').filter(Boolean).sort().join('\n');

for (const starter of ['off', 'always'] as const) {
  test(`direct exec (starter ${starter}): environment, argv[0], output and exit code as from bash -c`, { skip: process.platform !== 'linux' && 'Linux /proc' }, async (t) => {
    process.env.TOOLGATE_STARTER = starter;
    t.after(() => { delete process.env.TOOLGATE_STARTER; resetStarterForTests(); });
    const p = pair();
    t.after(p.done);
    const a = await p.run(p.direct, 'env');
    const b = await p.run(p.viaBash, 'env');
    assert.equal(sortedLines(a.output), sortedLines(b.output));
    assert.match(a.output, /^SHLVL=0$/m);
    assert.match(a.output, new RegExp(`^PWD=${p.ws.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
    assert.match(a.output, /^_=\/(usr\/)?bin\/env$/m);
    for (const line of ['ls --bogus-tg', 'echo hi', 'echo -n a b', 'echo -e x', 'echo -- -n', 'echo -nE a', 'wc -c a.txt', 'ls -d .', 'ls /nonexistent-tg-dir', 'sh -c pwd', 'no-such-program-tg x']) {
      const x = await p.run(p.direct, line);
      const y = await p.run(p.viaBash, line);
      assert.deepEqual(x, y, line);
    }
    // coreutils names itself by argv[0] in its messages: the name as typed, as bash passes it.
    assert.match((await p.run(p.direct, 'ls --bogus-tg')).output, /^ls: unrecognized option/);
  });
}

test('direct exec: lines that only look plain keep bash\'s meaning (expansions, quotes, globs, braces, builtins)', async (t) => {
  const p = pair();
  t.after(p.done);
  const home = (await p.run(p.viaBash, 'echo ~')).output.trim();
  assert.ok(home.startsWith('/'), home);
  const cases: Array<[string, string]> = [
    ['echo {a,b}', 'a b\n'], ["echo 'a  b'", 'a  b\n'], ['echo a\\ \\ b', 'a  b\n'], ['echo ~', `${home}\n`], ['echo $((1+2))', '3\n'],
    ['echo *.txt', 'a.txt\n'], ['echo a;echo b', 'a\nb\n'], ['echo --help', '--help\n'], ['pwd', `${p.ws}\n`], ['type -t echo', 'builtin\n'],
    ['x=1; echo $x', '1\n'], ['true', ''], ['echo a#b', 'a#b\n'], ['echo a #b', 'a\n'],
  ];
  for (const [line, want] of cases) assert.equal((await p.run(p.direct, line)).output, want, line);
});

test('direct exec: an echo earlier in PATH is not what bash runs; a program earlier in PATH is; one in the workspace is never found', async (t) => {
  const fake = tempDir('tg-direct-fake-');
  t.after(fake.cleanup);
  for (const [name, body] of [['echo', 'echo FAKE'], ['tgprog', 'echo "mine $0 $*"']] as const) {
    writeFileSync(path.join(fake.dir, name), `#!/bin/sh\n${body}\n`);
    chmodSync(path.join(fake.dir, name), 0o755);
  }
  const p = pair(() => `PATH: "${fake.dir}:/usr/bin:/bin"`);
  t.after(p.done);
  assert.equal((await p.run(p.direct, 'echo hi')).output, 'hi\n', 'bash\'s builtin echo, not the earlier one');
  assert.equal((await p.run(p.direct, 'tgprog a b')).output, 'mine tgprog a b\n'.replace('tgprog', path.join(fake.dir, 'tgprog')));
  assert.deepEqual(await p.run(p.direct, 'tgprog a b'), await p.run(p.viaBash, 'tgprog a b'));
  // A PATH entry inside the workspace is dropped (safePath) for the direct exec as for bash.
  const q = pair((ws) => `PATH: "${path.join(ws, 'bin')}:/usr/bin:/bin"`);
  t.after(q.done);
  mkdirSync(path.join(q.ws, 'bin'));
  writeFileSync(path.join(q.ws, 'bin', 'tgplanted'), '#!/bin/sh\necho PLANTED\n');
  chmodSync(path.join(q.ws, 'bin', 'tgplanted'), 0o755);
  const r = await q.run(q.direct, 'tgplanted');
  assert.equal(r.exit_code, 127);
  assert.doesNotMatch(r.output, /PLANTED/);
});
