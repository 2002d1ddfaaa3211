// Plain command lines exec'd without bash (src/exec/direct.ts, sandbox none): what a command sees
// must be what `bash -c` gives it — environment, argv[0], output, exit code — and any line bash
// would expand, split, redirect or run itself must still go through bash. The oracle is the same
// line with bash forced: an OLDPWD in the command's environment (policy env.set) makes toolgate
// leave the line to bash, and bash drops OLDPWD from what it exports.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from '../../src/testing/helpers.js';
import { directPair } from './direct-fixture.js';
import { resetStarterForTests } from '../../src/exec/starter-use.js';

const sortedLines = (s: string) => s.split('\n').filter(Boolean).sort().join('\n');

for (const starter of ['off', 'always'] as const) {
  test(`direct exec (starter ${starter}): environment, argv[0], output and exit code as from bash -c`, { skip: process.platform !== 'linux' && 'Linux /proc' }, async (t) => {
    process.env.TOOLGATE_STARTER = starter;
    t.after(() => { delete process.env.TOOLGATE_STARTER; resetStarterForTests(); });
    const p = directPair();
    t.after(p.done);
    const a = await p.run(p.direct, 'env');
    const b = await p.run(p.viaBash, 'env');
    assert.equal(sortedLines(a.output), sortedLines(b.output));
    assert.match(a.output, /^SHLVL=0$/m);
    assert.match(a.output, new RegExp(`^PWD=${p.ws.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
    assert.match(a.output, /^_=\/(usr\/)?bin\/env$/m);
    for (const line of ['ls --bogus-tg', 'echo hi', 'echo -n a b', 'echo -e x', 'echo -- -n', 'echo -nE a', 'wc -c a.txt', 'ls -d .', 'ls /nonexistent-tg-dir', 'sh -c pwd', 'no-such-program-tg x']) {
      await p.sameAsBash(line);
    }
    // coreutils names itself by argv[0] in its messages: the name as typed, as bash passes it.
    assert.match((await p.run(p.direct, 'ls --bogus-tg')).output, /^ls: unrecognized option/);
  });
}

test('direct exec: lines that only look plain keep bash\'s meaning (expansions, quotes, globs, braces, builtins)', async (t) => {
  const p = directPair();
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
  const p = directPair({ PATH: `${fake.dir}:/usr/bin:/bin` });
  t.after(p.done);
  assert.equal((await p.run(p.direct, 'echo hi')).output, 'hi\n', 'bash\'s builtin echo, not the earlier one');
  assert.equal((await p.run(p.direct, 'tgprog a b')).output, 'mine tgprog a b\n'.replace('tgprog', path.join(fake.dir, 'tgprog')));
  await p.sameAsBash('tgprog a b');
  // A PATH entry inside the workspace is dropped (safePath) for the direct exec as for bash.
  const q = directPair((ws) => ({ PATH: `${path.join(ws, 'bin')}:/usr/bin:/bin` }));
  t.after(q.done);
  mkdirSync(path.join(q.ws, 'bin'));
  writeFileSync(path.join(q.ws, 'bin', 'tgplanted'), '#!/bin/sh\necho PLANTED\n');
  chmodSync(path.join(q.ws, 'bin', 'tgplanted'), 0o755);
  const r = await q.run(q.direct, 'tgplanted');
  assert.equal(r.exit_code, 127);
  assert.doesNotMatch(r.output, /PLANTED/);
});
