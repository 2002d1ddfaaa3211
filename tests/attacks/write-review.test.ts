// Independent review of the write tools and approvals: attacks that must be refused, checked on
// the file system (an outside canary directory, the protected and secret files), not only on the
// envelope. Only attacks the code refuses today live here; see the review report for the rest.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { Session, type ElicitResponse } from '../../src/core/session.js';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';

const ALLOW_ALL = 'rules:\n  - tool: "*"\n    decision: allow\n';

/** A workspace full of traps, an outside directory with a canary, and a snapshot of both. */
function trapped(policy = ALLOW_ALL, session?: Session) {
  const ws = tempDir('tg-review-');
  const out = tempDir('tg-review-out-');
  const d = ws.dir;
  writeFileSync(`${out.dir}/canary.txt`, 'CANARY\n');
  mkdirSync(`${out.dir}/sub`);
  writeFileSync(`${out.dir}/sub/c2.txt`, 'C2\n');
  symlinkSync(`${out.dir}/canary.txt`, `${d}/link.txt`);
  symlinkSync(out.dir, `${d}/outdir`);
  symlinkSync(`${out.dir}/missing.txt`, `${d}/dangling.txt`);
  writeFileSync(`${d}/a.txt`, 'one\ntwo\nthree\n');
  mkdirSync(`${d}/.git/hooks`, { recursive: true });
  writeFileSync(`${d}/.git/config`, '[core]\n');
  writeFileSync(`${d}/.git/hooks/pre-commit`, '#!/bin/sh\nexit 0\n');
  writeFileSync(`${d}/.env`, 'SECRET=hunter2\n');
  execFileSync('mkfifo', [`${d}/fifo`]);
  const h = new Harness([d], { policy: policyFromYaml(policy), session });
  const snapshot = () => {
    const list = (root: string, skip: string[] = []): string[] => {
      const acc: string[] = [];
      const walk = (rel: string) => {
        for (const n of readdirSync(`${root}/${rel}`)) {
          const r = rel ? `${rel}/${n}` : n;
          if (skip.includes(r)) continue;
          const st = lstatSync(`${root}/${r}`);
          acc.push(`${r} ${st.isSymbolicLink() ? 'l' : st.isDirectory() ? 'd' : st.isFIFO() ? 'p' : 'f'} ${st.isFile() ? readFileSync(`${root}/${r}`, 'utf8') : ''}`);
          if (st.isDirectory() && !st.isSymbolicLink()) walk(r);
        }
      };
      walk('');
      return acc.sort();
    };
    return { out: list(out.dir), ws: list(d, ['.toolgate']) };
  };
  return { h, d, out: out.dir, snapshot, done() { h.close(); ws.cleanup(); out.cleanup(); } };
}

const PATCHES: Array<[string, string]> = [
  ['an added ../ file', '--- /dev/null\n+++ b/../x.txt\n@@ -0,0 +1 @@\n+PWN\n'],
  ['an added absolute path outside', '--- /dev/null\n+++ OUT/pwn.txt\n@@ -0,0 +1 @@\n+PWN\n'],
  ['a/../../x as rename target', '--- a/a.txt\n+++ b/a/../../x\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n'],
  ['a new git hook', 'diff --git a/x b/.git/hooks/pre-commit\nnew file mode 100755\n--- /dev/null\n+++ b/.git/hooks/pre-commit\n@@ -0,0 +1 @@\n+echo pwn\n'],
  ['a rename to a secret', 'diff --git a/a.txt b/.env.local\nsimilarity index 100%\nrename from a.txt\nrename to .env.local\n'],
  ['a rename from a secret', 'diff --git a/.env b/leak.txt\nsimilarity index 100%\nrename from .env\nrename to leak.txt\n'],
  ['a rename into a symlinked dir pointing out', 'diff --git a/a.txt b/outdir/moved.txt\nsimilarity index 100%\nrename from a.txt\nrename to outdir/moved.txt\n'],
  ['a rename onto a symlink pointing out', 'diff --git a/a.txt b/link.txt\nsimilarity index 100%\nrename from a.txt\nrename to link.txt\n'],
  ['a rename onto a dangling symlink', 'diff --git a/a.txt b/dangling.txt\nsimilarity index 100%\nrename from a.txt\nrename to dangling.txt\n'],
  ['an add through a dangling symlink', '--- /dev/null\n+++ b/dangling.txt\n@@ -0,0 +1 @@\n+PWN\n'],
  ['a modify of a symlink pointing out', '--- a/link.txt\n+++ b/link.txt\n@@ -1 +1 @@\n-CANARY\n+PWN\n'],
  ['a delete of a symlink pointing out', '--- a/link.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-CANARY\n'],
  ['a git-quoted ../ name', 'diff --git "a/../x y" "b/../x y"\nnew file mode 100644\n--- /dev/null\n+++ "b/../x y"\n@@ -0,0 +1 @@\n+PWN\n'],
  ['a git-quoted hook', 'diff --git "a/.git/hooks/pre-push" "b/.git/hooks/pre-push"\nnew file mode 100755\n--- /dev/null\n+++ "b/.git/hooks/pre-push"\n@@ -0,0 +1 @@\n+PWN\n'],
  ['a hook name with a tab and timestamp', '--- /dev/null\n+++ b/.git/hooks/pre-push\t2020-01-01 00:00:00\n@@ -0,0 +1 @@\n+PWN\n'],
  ['a hook name with a trailing space', '--- /dev/null\n+++ b/.git/hooks/pre-push \n@@ -0,0 +1 @@\n+PWN\n'],
  ['an octal-escaped quoted hook name', '--- /dev/null\n+++ "b/.git/hooks/pre\\055push"\n@@ -0,0 +1 @@\n+PWN\n'],
  ['a diff --git header naming one file and +++ another', 'diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/.git/hooks/pre-commit\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n'],
  ['a FIFO', '--- a/fifo\n+++ b/fifo\n@@ -1 +1 @@\n-x\n+y\n'],
  ['the state dir', '--- /dev/null\n+++ b/.toolgate/audit.jsonl.head\n@@ -0,0 +1 @@\n+x\n'],
  ['a delete of a secret', '--- a/.env\n+++ /dev/null\n@@ -1 +0,0 @@\n-SECRET=hunter2\n'],
  ['/dev/null on both sides with prefixes', '--- a//dev/null\n+++ b//dev/null\n@@ -1 +1 @@\n-a\n+b\n'],
  ['an absolute path climbing out of /dev', '--- /dev/null\n+++ /dev/shm/../../OUT/pwn2.txt\n@@ -0,0 +1 @@\n+PWN\n'],
  ['a file named twice (half-apply attempt)', '--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+new\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-nomatch\n+x\n'],
  ['a second file whose hunk fails after an add in a new dir', '--- /dev/null\n+++ b/newdir/deep/new.txt\n@@ -0,0 +1 @@\n+new\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-nomatch\n+x\n'],
];

test('apply_patch refuses every escape, secret, protected path and half-apply, and the disk is unchanged', async () => {
  const t = trapped();
  const before = t.snapshot();
  for (const [what, patch] of PATCHES) {
    const env = await t.h.call('apply_patch', { patch: patch.replaceAll('OUT', t.out) });
    assert.equal(env.ok, false, `${what}: applied ${JSON.stringify(env.data)}`);
    assert.ok(['PathTraversalBlocked', 'PathDenied', 'PatchFailed'].includes(env.error!.code), `${what}: ${env.error!.code} ${env.error!.message}`);
    assert.ok(!env.error!.message.includes('hunter2') && !JSON.stringify(env.error!.details ?? {}).includes('hunter2'), `${what}: the secret leaked`);
    assert.deepEqual(t.snapshot(), before, `${what}: the file system changed`);
  }
  t.done();
});

test('delete_file: a tree holding links pointing out loses the links, never their targets; secrets and hooks refuse the whole tree', async () => {
  const t = trapped();
  mkdirSync(`${t.d}/t1`);
  symlinkSync(t.out, `${t.d}/t1/outlink`);
  symlinkSync(`${t.out}/canary.txt`, `${t.d}/t1/flink`);
  writeFileSync(`${t.d}/t1/x`, 'x');
  mkdirSync(`${t.d}/t2/.git/hooks`, { recursive: true });
  writeFileSync(`${t.d}/t2/y`, 'y');
  mkdirSync(`${t.d}/t3`);
  writeFileSync(`${t.d}/t3/.env`, 'S=1');
  writeFileSync(`${t.d}/t3/z`, 'z');
  mkdirSync(`${t.d}/t4/.vscode`, { recursive: true });
  mkdirSync(`${t.d}/t5/.ssh`, { recursive: true });
  const outBefore = t.snapshot().out;

  const env = await t.h.call('delete_file', { path: 't1', recursive: true });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  assert.equal(existsSync(`${t.d}/t1`), false);
  assert.deepEqual(t.snapshot().out, outBefore, 'the targets of the links are untouched');

  for (const [p, code] of [['t2', 'PathDenied'], ['t3', 'PathDenied'], ['t2/.git', 'PathDenied'], ['t2/.git/hooks', 'PathDenied'],
    ['t4', 'PathDenied'], ['t4/.vscode', 'PathDenied'], ['t5/.ssh', 'PathDenied'], ['.', 'InvalidArguments'], ['', 'InvalidArguments'],
    [`${t.d}/`, 'InvalidArguments'], ['outdir/', 'PathTraversalBlocked'], ['outdir/canary.txt', 'PathTraversalBlocked'], ['outdir/..', 'PathTraversalBlocked'],
    ['fifo', 'PathDenied'], ['.git/config', 'PathDenied'], ['.env', 'PathDenied'], ['../', 'PathTraversalBlocked']] as const) {
    const before = t.snapshot();
    const r = await t.h.call('delete_file', { path: p, recursive: true });
    assert.equal(r.ok, false, `delete_file ${p} was allowed`);
    assert.ok([code, 'NotFound'].includes(r.error!.code), `delete_file ${p}: ${r.error!.code} ${r.error!.message}`);
    assert.deepEqual(t.snapshot(), before, `delete_file ${p} changed the disk`);
  }
  // A link to a protected file is deleted itself; the hook stays.
  symlinkSync(`${t.d}/.git/hooks/pre-commit`, `${t.d}/hooklink`);
  assert.equal((await t.h.call('delete_file', { path: 'hooklink' })).ok, true);
  assert.equal(readFileSync(`${t.d}/.git/hooks/pre-commit`, 'utf8'), '#!/bin/sh\nexit 0\n');
  t.done();
});

test('write_file to a FIFO, through a dangling link, or with create_dirs through a symlinked parent is refused', async () => {
  const t = trapped();
  const before = t.snapshot();
  for (const args of [
    { path: 'fifo', content: 'x' },
    { path: 'dangling.txt', content: 'x' },
    { path: 'outdir/new/deeper/x.txt', content: 'x', create_dirs: true },
    { path: 'dangling.txt/x', content: 'x', create_dirs: true },
    { path: '.toolgate/x', content: 'x', create_dirs: true },
    { path: '.git/hooks/new/x', content: 'x', create_dirs: true },
  ]) {
    const env = await t.h.call('write_file', args);
    assert.equal(env.ok, false, JSON.stringify(args));
    assert.ok(['PathDenied', 'PathTraversalBlocked'].includes(env.error!.code), `${JSON.stringify(args)}: ${env.error!.code}`);
    assert.deepEqual(t.snapshot(), before, `${JSON.stringify(args)} changed the disk`);
  }
  t.done();
});

test('dry_run writes nothing: no file, no directory, no temporary file', async () => {
  const t = trapped();
  const before = t.snapshot();
  const calls: Array<[string, Record<string, unknown>]> = [
    ['write_file', { path: 'n/e/w.txt', content: 'x', create_dirs: true, dry_run: true }],
    ['write_file', { path: 'a.txt', content: 'x', expected_sha256: 'a'.repeat(64), dry_run: true }],
    ['apply_patch', { patch: '--- /dev/null\n+++ b/q/r.txt\n@@ -0,0 +1 @@\n+x\n--- a/a.txt\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-one\n-two\n-three\n', dry_run: true }],
    ['delete_file', { path: 'a.txt', dry_run: true }],
  ];
  for (const [tool, args] of calls) {
    await t.h.call(tool, args);
    assert.deepEqual(t.snapshot(), before, `${tool} dry_run changed the disk`);
  }
  t.done();
});

function asking(answer: ElicitResponse | (() => Promise<ElicitResponse>)) {
  const session = new Session();
  let asked = 0;
  session.elicit = async () => { asked++; return typeof answer === 'function' ? answer() : answer; };
  return { session, asked: () => asked };
}

test('approvals: decline, cancel, an empty accept, an unknown or padded decision never run; ci mode never asks', async () => {
  const answers: Array<[ElicitResponse, string]> = [
    [{ action: 'decline' }, 'ApprovalDenied'],
    [{ action: 'accept', content: { decision: 'deny' } }, 'ApprovalDenied'],
    [{ action: 'cancel' }, 'ApprovalRequired'],
    [{ action: 'accept' }, 'ApprovalRequired'],
    [{ action: 'accept', content: {} }, 'ApprovalRequired'],
    [{ action: 'accept', content: { decision: 'allow_once ' } }, 'ApprovalRequired'],
    [{ action: 'accept', content: { decision: 'ALLOW_ONCE' } }, 'ApprovalRequired'],
    [{ action: 'accept', content: { decision: ['allow_once'] } }, 'ApprovalRequired'],
    [{ action: 'accept', content: { decision: true } }, 'ApprovalRequired'],
    [{ action: 'cancel', content: { decision: 'allow_once' } }, 'ApprovalRequired'],
    [{ action: 'decline', content: { decision: 'allow_session' } }, 'ApprovalDenied'],
  ];
  for (const [answer, code] of answers) {
    const a = asking(answer);
    const t = trapped('rules: []\n', a.session);
    const before = t.snapshot();
    const env = await t.h.call('write_file', { path: 'new.txt', content: 'x' });
    assert.equal(env.error?.code, code, JSON.stringify(answer));
    assert.equal(a.asked(), 1);
    assert.deepEqual(t.snapshot(), before, `${JSON.stringify(answer)} wrote`);
    // Nothing was granted: the next call asks again.
    await t.h.call('write_file', { path: 'new.txt', content: 'x' });
    assert.equal(a.asked(), 2, `${JSON.stringify(answer)} left a grant behind`);
    t.done();
  }
  const a = asking({ action: 'accept', content: { decision: 'allow_session' } });
  const t = trapped('mode: ci\nrules: []\n', a.session);
  const before = t.snapshot();
  for (const [tool, args] of [['write_file', { path: 'new.txt', content: 'x' }], ['delete_file', { path: 'a.txt' }],
    ['apply_patch', { patch: '--- /dev/null\n+++ b/p.txt\n@@ -0,0 +1 @@\n+x\n' }]] as const) {
    const env = await t.h.call(tool, args);
    assert.equal(env.error?.code, 'ApprovalRequired', tool);
  }
  assert.equal(a.asked(), 0, 'ci mode asked');
  assert.deepEqual(t.snapshot(), before);
  t.done();
});

test('approvals: a session grant for a.txt or a glob-special name covers exactly that name', async () => {
  const names = ['a*.txt', '[ab].txt', '**', '{a,b}.txt', '!(x).txt', '@(a).txt', 'a?.txt', '+(a).txt', 'x|y.txt', 'a.txt'];
  const others = ['a.txt', 'b.txt', 'ab.txt', 'a1.txt', 'x.txt', 'y.txt', 'aa.txt', 'sub/a.txt', 'sub/b.txt'];
  for (const n of names) {
    const a = asking({ action: 'accept', content: { decision: 'allow_session' } });
    const t = trapped('rules: []\n', a.session);
    mkdirSync(`${t.d}/sub`);
    unlinkSync(`${t.d}/a.txt`); // every name below is a new file: no read needed, so each call reaches the gate
    assert.equal((await t.h.call('write_file', { path: n, content: 'granted\n' })).ok, true, n);
    assert.equal(a.asked(), 1);
    let asked = 1;
    for (const o of others.filter((x) => x !== n)) {
      const env = await t.h.call('write_file', { path: o, content: 'other\n' });
      assert.equal(env.ok, true, `${o}: ${JSON.stringify(env.error)}`);
      asked++;
      assert.equal(a.asked(), asked, `the grant for ${n} covered ${o}`);
    }
    t.done();
  }
});

test('the replay command line is shell-safe: quotes, $(), backticks, newlines in args run nothing else', () => {
  const ws = tempDir('tg-review-replay-');
  const h = new Harness([ws.dir], { policy: policyFromYaml('mode: ci\nrules: []\n') });
  const content = `'; touch ${ws.dir}/INJ1; echo '$(touch ${ws.dir}/INJ2)\`touch ${ws.dir}/INJ3\`\n'"; touch ${ws.dir}/INJ4 #\u2028 \\' \r !! $HOME`;
  const name = `x'$(touch INJ5).txt`;
  return h.call('write_file', { path: name, content }).then((env) => {
    assert.equal(env.error?.code, 'ApprovalRequired');
    const cmd = (env.error!.details as { replay: { command: string } }).replay.command;
    const r = spawnSync('bash', ['-c', cmd], { encoding: 'utf8', cwd: ws.dir });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(readdirSync(ws.dir).filter((n) => n !== '.toolgate').sort(), [name]);
    assert.equal(readFileSync(`${ws.dir}/${name}`, 'utf8'), content);
    h.close();
    ws.cleanup();
  });
});
