// Review 33. The kernel keyrings are not namespaced by anything bwrap unshares here (no user
// namespace: the server runs as root): a sandboxed command is a process of the server's uid and
// possesses that uid's user keyring (@u). Keys kept there by the user's other processes —
// Kerberos KEYRING: caches, eCryptfs passphrases, passphrases systemd-ask-password caches
// (cryptsetup) — are read by the command, and it can add or unlink keys the host then uses.
// A seccomp filter refusing add_key/keyctl/request_key (what Docker's default profile does) closes it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Harness, policyFromYaml } from '../../src/testing/helpers.js';
import { detectBwrap } from '../../src/exec/sandbox.js';

const POLICY = 'sandbox: { backend: bwrap }\nrules:\n  - tool: run_command\n    decision: allow\n';
const PY = (body: string) => ['import ctypes, sys', 'libc = ctypes.CDLL(None, use_errno=True)', 'NR_ADD, NR_CTL = 248, 250', body].join('\n');
const NAME = `tg-rv33-${process.pid}`;

test('bwrap: a command reads no key of the user keyring of the server\'s uid', async (t) => {
  if (!(await detectBwrap())) { t.skip('no usable bubblewrap'); return; }
  if (process.arch !== 'x64') { t.skip('syscall numbers below are x86-64'); return; }
  if (spawnSync('python3', ['-c', '0']).status !== 0) { t.skip('python3 is missing'); return; }
  // The host side (this process's uid) keeps a secret in its user keyring.
  const add = spawnSync('python3', ['-c', PY(`k = libc.syscall(NR_ADD, b"user", b"${NAME}", b"s3cret-key", 10, ctypes.c_int(-4)); print(k)`)], { encoding: 'utf8' });
  const id = Number(add.stdout.trim());
  if (!(id > 0)) { t.skip('cannot add a key to the user keyring here'); return; }
  t.after(() => { spawnSync('python3', ['-c', PY(`libc.syscall(NR_CTL, 9, ${id}, ctypes.c_int(-4))`)]); });
  const ws = mkdtempSync('/var/tmp/tg-rv33-key-');
  t.after(() => rmSync(ws, { recursive: true, force: true }));
  writeFileSync(path.join(ws, 'k.py'), PY([
    `k = libc.syscall(NR_CTL, 10, ctypes.c_int(-4), b"user", b"${NAME}", 0)`,
    'buf = ctypes.create_string_buffer(64)',
    'n = libc.syscall(NR_CTL, 11, k, buf, 64) if k > 0 else -1',
    "print('GOT', buf.raw[:n].decode()) if n > 0 else print('none')", ''].join('\n')));
  const h = new Harness([ws], { policy: policyFromYaml(POLICY) });
  t.after(() => h.close());
  const env = await h.call('run_command', { command: 'python3 k.py' });
  const out = String((env.data as { output?: string } | null)?.output ?? '');
  assert.equal((env.data as { sandbox?: string } | null)?.sandbox, 'bwrap', JSON.stringify(env));
  assert.doesNotMatch(out, /GOT s3cret-key/, 'the sandboxed command read a key of the host\'s user keyring');
});
