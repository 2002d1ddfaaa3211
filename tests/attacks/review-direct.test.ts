// Review of the direct exec of plain lines (src/exec/direct.ts, sandbox none) and of safePath:
// lines and environments for which `bash --norc --noprofile -c LINE` does something other than
// exec'ing the program PATH finds, with the environment as given. Each must be left to bash.
// Oracle as in direct-exec.test.ts: the same line on a server whose environment holds OLDPWD
// (toolgate then always runs bash; bash drops an OLDPWD that names no folder).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { tempDir } from '../../src/testing/helpers.js';
import { directPair, type Ran } from './direct-fixture.js';
import { directExec } from '../../src/exec/direct.js';
import { safePath } from '../../src/exec/env.js';

function exe(file: string, body: string | Buffer) {
  writeFileSync(file, body);
  chmodSync(file, 0o755);
}

test('review: an executable without #! in PATH is run as bash runs it (by bash), not by /bin/sh', { skip: process.platform !== 'linux' && 'Linux' }, async (t) => {
  const bin = tempDir('tg-review-bin-');
  t.after(bin.cleanup);
  // bash runs a text file the kernel cannot exec as a bash script; Node's spawn (execvp) runs it with /bin/sh.
  exe(path.join(bin.dir, 'tgnoshebang'), 'if [[ -n "$BASH_VERSION" ]]; then echo bash; else echo other; fi\n');
  // A binary the kernel refuses: bash says "cannot execute binary file" (126); /bin/sh would run its bytes as commands.
  exe(path.join(bin.dir, 'tgbadelf'), Buffer.concat([Buffer.from('\x7fELF\x02\x01\x01'), Buffer.alloc(9), Buffer.from('\necho RAN-AS-SHELL\n')]));
  // A #! naming an interpreter that is a text file without #!: bash says "bad interpreter" (126).
  exe(path.join(bin.dir, 'tginterp'), 'echo INTERP-RAN-AS-SHELL\n');
  exe(path.join(bin.dir, 'tgscript'), `#!${path.join(bin.dir, 'tginterp')}\necho x\n`);
  const p = directPair({ PATH: `${bin.dir}:/usr/bin:/bin` });
  t.after(p.done);
  for (const line of ['tgnoshebang', 'tgbadelf', 'tgscript']) {
    await p.sameAsBash(line);
  }
  assert.equal((await p.run(p.direct, 'tgnoshebang')).output, 'bash\n');
  // Still direct: a real program and a #! script whose interpreter is a program.
  exe(path.join(bin.dir, 'tgok'), '#!/bin/sh\necho ok\n');
  assert.ok(directExec('tgok', { PATH: bin.dir }, '/tmp'), 'a #! script with a real interpreter runs directly');
  assert.ok(directExec('env', { PATH: '/usr/bin:/bin' }, '/tmp'), 'a program runs directly');
  for (const name of ['tgnoshebang', 'tgbadelf', 'tgscript']) assert.equal(directExec(name, { PATH: bin.dir }, '/tmp'), null, name);
});

test('review: variables bash resets or drops at start (IFS, PPID, OPTIND, BASH*, PS4, …) leave the line to bash', { skip: process.platform !== 'linux' && 'Linux' }, async (t) => {
  // Values bash gives whatever came in (compared as they are), and values it makes up or drops (never passed as given).
  const fixed = ['IFS', 'OPTIND', 'OPTERR', 'BASH', 'BASH_VERSION', 'BASH_EXECUTION_STRING', 'PS4', 'LINENO'];
  const dynamic = ['PPID', 'RANDOM', 'SRANDOM', 'EPOCHSECONDS', 'EPOCHREALTIME', 'BASHPID', 'BASH_SUBSHELL', 'BASH_ARGV0', 'BASH_COMMAND', 'HISTCMD', 'PS1', 'PS2', 'COMP_WORDBREAKS', 'BASH_VERSINFO'];
  for (const k of [...fixed, ...dynamic]) assert.equal(directExec('env', { PATH: '/usr/bin:/bin', [k]: 'zz' }, '/tmp'), null, k);
  const p = directPair(Object.fromEntries([...fixed, ...dynamic].map((k) => [k, 'zz'])));
  t.after(p.done);
  const a = (await p.run(p.direct, 'env')).output.split('\n');
  const b = (await p.run(p.viaBash, 'env')).output.split('\n');
  for (const k of fixed) assert.deepEqual(a.filter((l) => l.startsWith(`${k}=`)), b.filter((l) => l.startsWith(`${k}=`)), k);
  for (const k of dynamic) assert.ok(!a.includes(`${k}=zz`), k);
});

test('review: a warning bash prints at start (LC_ALL naming a missing locale, BASH_XTRACEFD, BASH_COMPAT) is printed for a plain line too', { skip: process.platform !== 'linux' && 'Linux' }, async (t) => {
  for (const [k, v] of [['LC_ALL', 'xx_TG.UTF-8'], ['BASH_XTRACEFD', '7'], ['BASH_COMPAT', 'zz']] as const) {
    assert.equal(directExec('env', { PATH: '/usr/bin:/bin', [k]: v }, '/tmp'), null, k);
    const p = directPair({ [k]: v });
    t.after(p.done);
    // stdout and stderr are two pipes: their lines are compared, not their order.
    const lines = (r: Ran) => ({ ...r, output: r.output.split('\n').sort().join('\n') });
    const x = await p.run(p.direct, 'echo hi');
    const y = await p.run(p.viaBash, 'echo hi');
    assert.deepEqual(lines(x), lines(y), k);
    assert.match(x.output, /warning|invalid|out of range/, k);
  }
  // C and POSIX always exist: the line still runs directly.
  for (const v of ['C', 'POSIX', '']) assert.ok(directExec('env', { PATH: '/usr/bin:/bin', LC_ALL: v }, '/tmp'), `LC_ALL=${v}`);
});

test('review: an executable that is not a regular file (a FIFO) stops bash\'s PATH search; no later program runs instead', { skip: process.platform !== 'linux' && 'Linux' }, (t) => {
  const d = tempDir('tg-review-fifo-');
  t.after(d.cleanup);
  mkdirSync(path.join(d.dir, 'a'));
  mkdirSync(path.join(d.dir, 'b'));
  execFileSync('mkfifo', [path.join(d.dir, 'a', 'tgfifo')]);
  chmodSync(path.join(d.dir, 'a', 'tgfifo'), 0o755);
  exe(path.join(d.dir, 'b', 'tgfifo'), '#!/bin/sh\necho LATER\n');
  // bash execs a/tgfifo (EACCES), then reads it to explain: never b/tgfifo.
  assert.equal(directExec('tgfifo', { PATH: `${d.dir}/a:${d.dir}/b` }, '/tmp'), null);
});

test('review: a line starting with - or + is read by bash as its own options, not run as a program', { skip: process.platform !== 'linux' && 'Linux' }, async (t) => {
  const bin = tempDir('tg-review-opt-');
  t.after(bin.cleanup);
  exe(path.join(bin.dir, '-tgopt'), '#!/bin/sh\necho RAN\n');
  exe(path.join(bin.dir, '+tgopt'), '#!/bin/sh\necho RAN\n');
  const p = directPair({ PATH: `${bin.dir}:/usr/bin:/bin` });
  t.after(p.done);
  for (const line of ['-tgopt', '+tgopt', '-tgopt x']) {
    assert.doesNotMatch((await p.sameAsBash(line)).output, /RAN/, line);
  }
  // After a leading space bash reads it as a command: both run it.
  assert.deepEqual(await p.run(p.direct, ' -tgopt'), await p.run(p.viaBash, ' -tgopt'));
});

test('review: safePath drops a PATH entry that does not exist yet but would be created inside a workspace root through a link', (t) => {
  const d = tempDir('tg-review-path-');
  t.after(d.cleanup);
  const ws = path.join(d.dir, 'ws');
  mkdirSync(ws);
  // A link outside the workspace to a folder of it not made yet (dangling), and a link to the root itself.
  symlinkSync(path.join(ws, 'sub'), path.join(d.dir, 'dangling'));
  symlinkSync(ws, path.join(d.dir, 'toroot'));
  const value = [`${d.dir}/dangling/bin`, `${d.dir}/toroot/not-yet/bin`, `${d.dir}/dangling`, '/usr/bin', `${d.dir}/nonexistent/bin`].join(':');
  // Entries outside every root, existing or not, are kept; each entry once.
  assert.equal(safePath(value, [ws]), `/usr/bin:${d.dir}/nonexistent/bin`);
  assert.equal(safePath('/usr/bin:/bin:/usr/bin', [ws]), '/usr/bin:/bin');
});
