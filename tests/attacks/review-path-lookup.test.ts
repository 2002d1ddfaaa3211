// Review (helper-42): programs the server itself starts, outside any sandbox, still looked up where a
// command can plant them. (1) A stdio upstream's program (withoutChannel's inPath, and the SDK's
// spawn) is searched in PATH as is: a relative entry (node_modules/.bin) names the upstream's cwd,
// the workspace by default; the upstream is started again after a crash or a hang. (2) notify-send
// is looked up once, when the approval host starts, skipping only the --workspace roots: a server
// that takes the client's roots (no --workspace) keeps an absolute PATH entry inside them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';
import { upstreamSchema } from '../../src/upstream/config.js';
import { connectUpstream } from '../../src/upstream/connect.js';
import { startApprovalHost } from '../../src/approvals/host.js';

function plant(file: string, mark: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `#!/bin/sh\ntouch '${mark}'\nexit 1\n`);
  chmodSync(file, 0o755);
}

test('an upstream program is not taken from a relative PATH entry (the workspace a command writes)', async (t) => {
  const { dir, cleanup } = tempDir('tg-r42-up-');
  const mark = `${dir}-upstream-ran`;
  const savedPath = process.env.PATH;
  t.after(() => { process.env.PATH = savedPath; cleanup(); rmSync(mark, { force: true }); });
  // What a (sandboxed) command could write into the workspace: the upstream's usual launcher.
  plant(path.join(dir, 'node_modules/.bin/npx'), mark);
  process.env.PATH = `node_modules/.bin:${savedPath}`; // a common developer PATH
  const cfg = upstreamSchema.parse({ command: 'npx', args: ['-y', 'some-mcp-server'], cwd: dir });
  const log = pino({ level: 'silent' });
  await connectUpstream('up', cfg, { env: process.env, log, timeoutMs: 3000, setup: () => {} }).then((c) => c.client.close(), () => {});
  for (let i = 0; i < 20 && !existsSync(mark); i++) await new Promise((r) => setTimeout(r, 50));
  assert.equal(existsSync(mark), false, 'the npx planted in the workspace was started by the server, outside the sandbox');
});

test('notify-send inside the client\'s root is not run when the server has no --workspace', { skip: process.platform === 'darwin' ? 'Linux rules' : false }, async (t) => {
  const { dir, cleanup } = tempDir('tg-r42-notify-');
  const run = tempDir('tg-r42-run-');
  const mark = `${dir}-notify-ran`;
  // Left by a command of an earlier session; PATH as direnv's `PATH_add node_modules/.bin` sets it.
  plant(path.join(dir, 'node_modules/.bin/notify-send'), mark);
  const env = { ...process.env, DISPLAY: ':0', PATH: `${dir}/node_modules/.bin:/usr/bin:/bin`, XDG_RUNTIME_DIR: run.dir, TOOLGATE_NOTIFY: 'on' };
  const h = new Harness([dir], { policy: policyFromYaml('rules:\n  - { tool: "*", decision: allow }\n') });
  const host = await startApprovalHost(h.rt, { ceiling: null, stateDir: run.dir, console: 'off', log: pino({ level: 'silent' }), env });
  t.after(() => { host.close(); h.close(); cleanup(); run.cleanup(); rmSync(mark, { force: true }); });
  h.rt.opts.approvals!.announce!({ id: 'r1', server_pid: process.pid, session_id: 's', tool: 'write_file', risk: 'medium', args: {}, rule: 'default', grant: [], grant_rule: '', diff: null, summary: 'write a.txt', created_at: new Date().toISOString() } as never);
  for (let i = 0; i < 20 && !existsSync(mark); i++) await new Promise((r) => setTimeout(r, 50));
  assert.equal(existsSync(mark), false, 'a notify-send inside the workspace ran outside the sandbox');
});
