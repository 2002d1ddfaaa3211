// Review (helper-43): the upstream program is now looked up without relative PATH entries, but the child
// still gets PATH as is. npx (like most launchers) is `#!/usr/bin/env node`: env looks `node` up in
// that PATH, relative to the upstream's cwd (the workspace), so a planted node_modules/.bin/node runs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { tempDir } from '../../src/testing/helpers.js';
import { upstreamSchema } from '../../src/upstream/config.js';
import { connectUpstream } from '../../src/upstream/connect.js';

test('an upstream launcher with a #!/usr/bin/env shebang does not take its interpreter from a relative PATH entry', async (t) => {
  const { dir, cleanup } = tempDir('tg-r43-up-');
  const mark = `${dir}-node-ran`;
  const savedPath = process.env.PATH;
  t.after(() => { process.env.PATH = savedPath; cleanup(); rmSync(mark, { force: true }); });
  const file = path.join(dir, 'node_modules/.bin/node');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `#!/bin/sh\ntouch '${mark}'\nexit 1\n`);
  chmodSync(file, 0o755);
  process.env.PATH = `node_modules/.bin:${savedPath}`;
  const cfg = upstreamSchema.parse({ command: 'npx', args: ['-y', 'some-mcp-server'], cwd: dir });
  await connectUpstream('up', cfg, { env: process.env, log: pino({ level: 'silent' }), timeoutMs: 3000, setup: () => {} }).then((c) => c.client.close(), () => {});
  for (let i = 0; i < 20 && !existsSync(mark); i++) await new Promise((r) => setTimeout(r, 50));
  assert.equal(existsSync(mark), false, 'the node planted in the workspace ran (npx is #!/usr/bin/env node), outside the sandbox');
});
