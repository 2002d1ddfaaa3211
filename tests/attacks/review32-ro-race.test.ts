// Review 32. The pin check (review 31) covers the read-write pins only. The read-only binds of
// protected paths below the root (a nested repository's `.git`, `sub/.vscode`, a policy file kept
// in a sub-folder) go through the same bwrap path resolution, and their parent folders are not
// pinned anywhere (only folders above a *hidden* path are): a background command, in whose own
// sandbox `sub` is an ordinary folder, keeps exchanging `sub` with a link to a folder of its own
// (renameat2 RENAME_EXCHANGE). When bwrap resolved the source through the folder (the real .git)
// and mounts through the link, the read-only bind lands on the decoy: the real nested .git is
// writable in that sandbox, and a hook / core.fsmonitor written there runs on the host at the
// user's next `git` in sub (or when an editor scans nested repositories).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Harness, policyFromYaml } from '../../src/testing/helpers.js';
import { detectBwrap } from '../../src/exec/sandbox.js';

const POLICY = 'sandbox: { backend: bwrap }\nrules:\n  - tool: run_command\n    decision: allow\n';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('bwrap: a nested protected .git stays read-only while a background command exchanges its parent for a link', async (t) => {
  if (!(await detectBwrap())) { t.skip('no usable bubblewrap'); return; }
  if (spawnSync('python3', ['-c', 'import ctypes']).status !== 0) { t.skip('python3 is missing'); return; }
  let base: string;
  try { base = mkdtempSync('/var/tmp/tg-rv32-ro-'); } catch { t.skip('/var/tmp is not writable'); return; }
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const ws = path.join(base, 'ws');
  // The user's nested repository (a vendored library, a sub-project), protected at any depth.
  mkdirSync(path.join(ws, 'sub', '.git', 'hooks'), { recursive: true });
  writeFileSync(path.join(ws, 'sub', '.git', 'REAL'), '');
  writeFileSync(path.join(ws, 'sub', '.git', 'config'), '[core]\n\trepositoryformatversion = 0\n');
  const h = new Harness([ws], { policy: policyFromYaml(POLICY) });
  t.after(() => h.close());
  writeFileSync(path.join(ws, 'flip.py'), [
    'import ctypes, os, time',
    'libc = ctypes.CDLL(None, use_errno=True)',
    "os.makedirs('decoy/.git/hooks', exist_ok=True); os.symlink('decoy', 'lnk')",
    'time.sleep(1.0)',
    'end = time.time() + 40',
    "while time.time() < end and not os.path.exists('STOP'):",
    "    libc.renameat2(-100, b'sub', -100, b'lnk', 2)",
    '    time.sleep(0.0005)', ''].join('\n'));
  // Whichever name the real .git has now, write a hook into it if it is writable.
  writeFileSync(path.join(ws, 'w.sh'), [
    'for d in sub lnk; do',
    '  if [ -e "$d/.git/REAL" ] && { echo "echo pwned" > "$d/.git/hooks/post-checkout"; } 2>/dev/null; then echo ESCAPED; : > STOP; fi',
    'done', ''].join('\n'));
  const bg = await h.call('run_command', { command: 'python3 flip.py', background: true });
  assert.equal(bg.ok, true, JSON.stringify(bg));
  await sleep(1500);
  const hooked = () => ['sub', 'lnk'].some((d) => existsSync(path.join(ws, d, '.git', 'hooks', 'post-checkout')));
  let tries = 0;
  for (; tries < 150 && !hooked(); tries++) await h.call('run_command', { command: 'bash w.sh' });
  writeFileSync(path.join(ws, 'STOP'), '');
  assert.equal(hooked(), false, `a command wrote a hook into the nested .git after ${tries} commands`);
});
