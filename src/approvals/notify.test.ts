import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { tempDir } from '../testing/helpers.js';
import { notifier } from './notify.js';

test('no notification without a display, without notify-send, or with TOOLGATE_NOTIFY=off', { skip: process.platform === 'darwin' ? 'Linux rules' : false }, () => {
  const t = tempDir('tg-notify-');
  writeFileSync(`${t.dir}/notify-send`, '#!/bin/sh\n');
  chmodSync(`${t.dir}/notify-send`, 0o755);
  assert.equal(notifier({ PATH: t.dir }), null, 'no display');
  assert.equal(notifier({ PATH: '/nonexistent', DISPLAY: ':0' }), null, 'no notify-send');
  assert.equal(notifier({ PATH: t.dir, DISPLAY: ':0', TOOLGATE_NOTIFY: 'off' }), null);
  t.cleanup();
});

test('notify-send is run with the title and the body as separate arguments (no shell)', { skip: process.platform === 'darwin' ? 'Linux rules' : false }, async () => {
  const t = tempDir('tg-notify-');
  writeFileSync(`${t.dir}/notify-send`, `#!/bin/sh\nfor a in "$@"; do printf '%s\\n--\\n' "$a"; done > ${t.dir}/out\n`);
  chmodSync(`${t.dir}/notify-send`, 0o755);
  const n = notifier({ WAYLAND_DISPLAY: 'wayland-0' }, [t.dir]);
  assert.ok(n);
  n('toolgate: approve write_file?', 'write `a.txt`; $(touch pwned)\nOpen http://127.0.0.1:1/login?s=x');
  for (let i = 0; i < 100 && !existsSync(`${t.dir}/out`); i++) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 50));
  const out = readFileSync(`${t.dir}/out`, 'utf8');
  assert.equal(out, '--app-name=toolgate\n--\ntoolgate: approve write_file?\n--\nwrite `a.txt`; $(touch pwned)\nOpen http://127.0.0.1:1/login?s=x\n--\n');
  assert.equal(existsSync('pwned'), false);
  t.cleanup();
});
