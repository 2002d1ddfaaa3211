// Review 35. privateBase (review 34) picks the temp dir, /tmp or /var/tmp — whichever no root holds.
// When the roots hold all three (roots /tmp and /var/tmp, or TMPDIR in a root plus those two),
// keyringFilterFile returns null and every command runs WITHOUT the keyring/io_uring filter, silently
// (keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING) answered the user keyring's id in such a
// sandbox); and the stand-ins' empty file and folder fall back to os.tmpdir(), inside a root: a
// command chmods and fills the empty file, and every later sandbox's /proc/keys, masked .env files
// and stand-ins show what it wrote. Checked without running bwrap: the arguments say it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, realpathSync } from 'node:fs';
import os from 'node:os';
import { bwrapArgs } from '../../src/exec/sandbox.js';
import { withKeyringFilter } from '../../src/exec/seccomp.js';

test('the keyring filter is not dropped, nor the stand-ins put in a root, when the roots hold every temp folder', (t) => {
  if (process.platform !== 'linux' || !['x64', 'arm64', 'ia32'].includes(process.arch)) { t.skip('the filter applies on Linux x64/arm64/ia32'); return; }
  if (!existsSync('/var/tmp')) { t.skip('no /var/tmp'); return; }
  const roots = [...new Set(['/tmp', '/var/tmp', realpathSync(os.tmpdir())])];
  // Fail closed: no filter-less command and no stand-in in a root; launch() refuses such a layout
  // first with what to do (tests/attacks/review35-state-file*.test.ts cover its other refusals).
  assert.throws(() => withKeyringFilter('/usr/bin/bwrap', ['--', 'true'], roots), /no private place for the seccomp filter/);
  assert.throws(() => bwrapArgs({ bin: '/usr/bin/bwrap', roots, cwd: '/tmp', home: '/nonexistent-home', network: false, protectedAbs: [], extraDeny: [], extraProtect: [] }, ['true']), /no private place for the stand-ins/);
});
