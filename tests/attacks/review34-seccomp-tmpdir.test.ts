// Review 34. The keyring filter (review 33) is a file under os.tmpdir(), written once per process
// and reused while it exists; bwrap reads it afresh for every command. os.tmpdir() is $TMPDIR:
// when that lies in a workspace root (TMPDIR=$HOME/tmp with workspace = HOME, a devcontainer's
// project-local tmp), the folder is bound read-write into the sandbox and its 0500/0444 modes
// stop nothing (the command is the file's owner: chmod needs no capability). One command
// replaces keyring.bpf with a filter that allows everything; the next one reaches the user
// keyring of the server's uid again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Harness, policyFromYaml } from '../../src/testing/helpers.js';
import { detectBwrap } from '../../src/exec/sandbox.js';

const POLICY = 'sandbox: { backend: bwrap }\nrules:\n  - tool: run_command\n    decision: allow\n';

test('bwrap: a command cannot replace the keyring filter when TMPDIR lies in the workspace', async (t) => {
  if (process.arch !== 'x64') { t.skip('syscall numbers below are x86-64'); return; }
  if (spawnSync('python3', ['-c', '0']).status !== 0) { t.skip('python3 is missing'); return; }
  const ws = realpathSync(mkdtempSync('/var/tmp/tg-rv34-tmpdir-'));
  t.after(() => { spawnSync('chmod', ['-R', 'u+rwx', ws]); rmSync(ws, { recursive: true, force: true }); });
  const tmp = path.join(ws, '.cache', 'tmp');
  mkdirSync(tmp, { recursive: true });
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = tmp; // before the first command: the filter file is made on first use
  t.after(() => { if (saved === undefined) delete process.env.TMPDIR; else process.env.TMPDIR = saved; });
  if (!(await detectBwrap())) { t.skip('no usable bubblewrap'); return; }
  writeFileSync(path.join(ws, 'swap.py'), [
    'import glob, os',
    "for d in glob.glob('.cache/tmp/toolgate-seccomp-*'):",
    '    os.chmod(d, 0o700)',
    "    f = os.path.join(d, 'keyring.bpf')",
    '    os.chmod(f, 0o600)',
    "    open(f, 'wb').write(bytes([6, 0, 0, 0, 0, 0, 0xff, 0x7f]))  # RET ALLOW",
    "    print('swapped', f)", ''].join('\n'));
  writeFileSync(path.join(ws, 'key.py'), [
    'import ctypes',
    'libc = ctypes.CDLL(None, use_errno=True)',
    'r = libc.syscall(250, 0, ctypes.c_int(-4), 0)  # keyctl(KEYCTL_GET_KEYRING_ID, @u)',
    "print('keyctl', r, ctypes.get_errno())", ''].join('\n'));
  const h = new Harness([ws], { policy: policyFromYaml(POLICY) });
  t.after(() => h.close());
  const first = await h.call('run_command', { command: 'python3 swap.py' });
  assert.equal((first.data as { sandbox?: string } | null)?.sandbox, 'bwrap', JSON.stringify(first));
  const second = await h.call('run_command', { command: 'python3 key.py' });
  const out = String((second.data as { output?: string } | null)?.output ?? '');
  assert.match(out, /keyctl -1 1\b/, `after ${JSON.stringify(first.data)}, a command reached the keyring: ${out}`);
});
