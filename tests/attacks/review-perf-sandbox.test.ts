import assert from 'node:assert/strict';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { detectBwrap } from '../../src/exec/sandbox.js';
import { connectStdio, Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';

// review-perf, part 3: the sandbox's stand-ins for missing protected paths (held per process,
// removed after 1 s idle). A stand-in .git was a writable folder around read-only hooks/config.

const hasBwrap = await detectBwrap();
const skip = !hasBwrap && 'needs bubblewrap (detectBwrap found none, or TOOLGATE_SANDBOX=none)';
const allow = () => policyFromYaml('sandbox: { backend: bwrap }\nrules:\n  - tool: "*"\n    decision: allow\n');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Each row: a command run in a workspace without .git; afterwards the host's `git status` must not run anything.
const ROWS: Array<[string, (mark: string) => string]> = [
  ['.git/commondir to a config with core.fsmonitor', (m) => `g=.gi; d=\${g}t; mkdir -p evil/objects evil/refs/heads; mkdir -p $d/objects $d/refs/heads; echo 'ref: refs/heads/main' > $d/HEAD; echo ../evil > $d/commondir; printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = "touch ${m}; false"\\n' > evil/config; true`],
  ['.git/info/attributes + objects/info/alternates', (m) => `g=.gi; d=\${g}t; mkdir -p $d/info $d/objects/info $d/refs; echo 'ref: refs/heads/main' > $d/HEAD; echo '* filter=x' > $d/info/attributes; echo /tmp > $d/objects/info/alternates; touch ${m}.tried; true`],
  ['.git replaced by a gitdir file', (m) => `g=.gi; rm -rf \${g}t 2>/dev/null; mkdir -p evil/objects evil/refs; echo 'ref: refs/heads/main' > evil/HEAD; printf '[core]\\n\\tfsmonitor = "touch ${m}; false"\\n' > evil/config; echo 'gitdir: evil' > \${g}t; true`],
];

test('a command in a workspace without .git cannot plant a repository that runs code on the host\'s next git status', { skip }, async (t) => {
  for (const [what, cmd] of ROWS) {
    const { dir, cleanup } = tempDir('tg-rp-git-');
    const mark = `${dir}.pwned`;
    const h = new Harness([dir], { policy: allow() });
    t.after(async () => { await h.session.dispose(); h.close(); cleanup(); rmSync(mark, { force: true }); rmSync(`${mark}.tried`, { force: true }); });
    const r = await h.call('run_command', { command: cmd(mark) });
    assert.ok(r.ok || r.error, what);
    await sleep(1500); // the stand-ins are removed after 1 s idle
    const g = spawnSync('git', ['status', '--porcelain'], { cwd: dir, encoding: 'utf8', env: { ...process.env, GIT_CEILING_DIRECTORIES: dir.slice(0, dir.lastIndexOf('/')) } });
    assert.equal(existsSync(mark), false, `${what}: git status ran the planted command (${g.stderr})`);
    assert.ok(!existsSync(`${dir}/.git`) || !existsSync(`${dir}/.git/HEAD`), `${what}: a .git with a HEAD was left behind`);
  }
});

test('controls: in a real repository commands still read git state, and .git stays read-only', { skip }, async (t) => {
  const { dir, cleanup } = tempDir('tg-rp-git-');
  const h = new Harness([dir], { policy: allow() });
  t.after(async () => { await h.session.dispose(); h.close(); cleanup(); });
  assert.equal(spawnSync('git', ['init', '-q', dir]).status, 0);
  mkdirSync(`${dir}/src`);
  const st = await h.call('run_command', { command: 'git status --porcelain; echo rc=$?' });
  assert.ok(st.ok, JSON.stringify(st.error));
  assert.match(JSON.stringify(st.data), /rc=0/);
  const w = await h.call('run_command', { command: 'g=.gi; echo x > ${g}t/HEAD2 && echo wrote' });
  assert.doesNotMatch(JSON.stringify(w.data ?? {}), /wrote\\n/);
  assert.equal(existsSync(`${dir}/.git/HEAD2`), false);
  const ok = await h.call('run_command', { command: 'echo hi > src/a.txt && cat src/a.txt' });
  assert.ok(ok.ok, JSON.stringify(ok.error));
});

test('mask index: a flood of create/delete events on one name (the kernel queue holds 16,384) does not hide a new .env from the next command', { skip }, async (t) => {
  const { dir, cleanup } = tempDir('tg-rp-flood-');
  const h = new Harness([dir], { policy: allow() });
  t.after(async () => { await h.session.dispose(); h.close(); cleanup(); });
  const a = await h.call('run_command', { command: 'mkdir -p w/deep && echo made' });
  assert.ok(a.ok, JSON.stringify(a.error));
  await sleep(300); // w/deep is watched
  const flood = 'python3 -c "\nimport os\nfor i in range(300000):\n    fd=os.open(\'w/x\', os.O_CREAT|os.O_WRONLY); os.close(fd); os.unlink(\'w/x\')\nopen(\'w/deep/.en\'+\'v\',\'w\').write(\'S=LEAKED\')\nprint(\'flooded\')\n"';
  const b = await h.call('run_command', { command: flood, timeout_ms: 120_000 });
  assert.match(JSON.stringify(b.data ?? b.error), /flooded/);
  const c = await h.call('run_command', { command: 'e=.en; cat w/deep/${e}v; echo end' });
  assert.doesNotMatch(JSON.stringify(c.data ?? c.error), /LEAKED/);
});

test('two toolgate servers on one workspace: one removing its idle stand-in does not open the path to the other\'s running command', {
  skip,
  todo: 'stand-ins are counted per server process: server A removes its idle .vscode stand-in (rmdir of a mount point detaches it in every namespace) while server B\'s sandbox bound that folder as an existing one, so B\'s command can create .vscode/tasks.json. Needs a cross-process hold (e.g. a lock file per stand-in in the runtime dir) — documented in docs/commands.md',
}, async (t) => {
  const { dir, cleanup } = tempDir('tg-rp-two-');
  const state = tempDir('tg-rp-two-state-');
  const pol = `${state.dir}/p.yaml`;
  writeFileSync(pol, 'sandbox: { backend: bwrap }\nrules:\n  - tool: "*"\n    decision: allow\n');
  const env = { XDG_STATE_HOME: `${state.dir}/s`, XDG_RUNTIME_DIR: `${state.dir}/r` };
  mkdirSync(env.XDG_STATE_HOME, { recursive: true }); mkdirSync(env.XDG_RUNTIME_DIR, { recursive: true });
  const a = await connectStdio(['--workspace', dir, '--policy', pol], { env });
  const b = await connectStdio(['--workspace', dir, '--policy', pol], { env });
  t.after(async () => { await a.close().catch(() => {}); await b.close().catch(() => {}); cleanup(); state.cleanup(); });
  const call = (c: typeof a, args: Record<string, unknown>) => c.client.callTool({ name: 'run_command', arguments: args }, undefined, { timeout: 60_000 });
  await call(a, { command: 'sleep 0.4', background: true }); // A makes the stand-ins
  await sleep(200);
  await call(b, { command: 'sleep 2.5; g=.vs; mkdir -p ${g}code && echo evil > ${g}code/tasks.json', background: true });
  await sleep(4500);
  assert.equal(existsSync(`${dir}/.vscode/tasks.json`), false, 'B wrote .vscode/tasks.json after A removed its stand-in');
});
