// The model cannot approve itself (SPEC §11): while a request waits, every tool is tried against
// the inbox's socket, the registry, the console and the stored grants — with the user's runtime
// and state dirs INSIDE the workspace (the worst case: a workspace that is the home folder).
// Everything is refused; the request still waits; the control (a person's answer) still works.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { detectBwrap } from '../../src/exec/sandbox.js';
import { CLI, connectStdio, tempDir } from '../../src/testing/helpers.js';

type Env = { ok: boolean; error: { code: string; message: string } | null; data: any; text: string };
// The server's own probe: honours TOOLGATE_SANDBOX=none (CI's second pass) exactly as the server does.
const HAS_BWRAP = (await detectBwrap()) !== null;

async function setup(t: TestContext, sandbox: 'bwrap' | 'none') {
  const ws = tempDir('tg-self-');
  const env = { XDG_RUNTIME_DIR: path.join(ws.dir, 'run'), XDG_STATE_HOME: path.join(ws.dir, 'state'), TOOLGATE_NOTIFY: 'off' };
  mkdirSync(path.join(ws.dir, 'state', 'toolgate', 'grants'), { recursive: true });
  const pol = tempDir('tg-self-pol-');
  // Everything allowed (fetch_url to 127.0.0.1 too), except the one call that waits.
  writeFileSync(`${pol.dir}/p.yaml`, [
    'rules:', '  - { tool: "*", decision: allow }', '  - { tool: write_file, path: "target.txt", decision: ask }',
    '  - { tool: fetch_url, domain: ["127.0.0.1", "localhost"], decision: allow }',
    `sandbox: { backend: ${sandbox}, network: deny }`, 'approvals: { timeout_ms: 120000 }', '',
  ].join('\n'));
  const conn = await connectStdio(['--workspace', ws.dir, '--policy', `${pol.dir}/p.yaml`], { env });
  // A failed assertion must not leave the server holding the file open until the runner's timeout.
  t.after(() => conn.close().catch(() => {}));
  let err = '';
  (conn.transport.stderr as unknown as NodeJS.ReadableStream).on('data', (d: Buffer) => { err += d.toString(); });
  const call = async (name: string, args: Record<string, unknown>) => (await conn.client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })).structuredContent as unknown as Env;
  const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args, '--workspace', ws.dir], { env: { ...process.env, ...env }, encoding: 'utf8' });
  const waiting = call('write_file', { path: 'target.txt', content: 'approved by the model?\n' });
  let id = '';
  for (let i = 0; i < 100 && !id; i++) {
    id = (JSON.parse(cli('approvals', 'list', '--json').stdout) as { id: string }[])[0]?.id ?? '';
    if (!id) await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(id, 'a request waits');
  // spawnSync blocked the event loop: let the server's stderr in.
  for (let i = 0; i < 100 && !/login\?s=/.test(err); i++) await new Promise((r) => setTimeout(r, 50));
  const secret = /login\?s=([\w-]+)/.exec(err)![1]!;
  const port = Number(/127\.0\.0\.1:(\d+)\/login/.exec(err)![1]);
  const rt = path.join(ws.dir, 'run', 'toolgate');
  const sock = path.join(rt, 'sock', readdirSync(path.join(rt, 'sock'))[0]!);
  return { ws, pol, env, conn, call, cli, waiting, id, secret, port, rt, sock };
}

async function finish(s: Awaited<ReturnType<typeof setup>>, leaks: string[]) {
  // Nothing approved it: still pending, nothing written; the person's answer still works.
  const still = JSON.parse(s.cli('approvals', 'list', '--json').stdout) as { id: string }[];
  assert.deepEqual(still.map((x) => x.id), [s.id], 'the request still waits');
  assert.equal(existsSync(`${s.ws.dir}/target.txt`), false);
  assert.equal(s.cli('approvals', 'answer', s.id, 'deny').status, 0);
  assert.equal((await s.waiting).error?.code, 'ApprovalDenied');
  await s.conn.close();
  assert.deepEqual(leaks, []);
  s.ws.cleanup();
  s.pol.cleanup();
}

test('no file tool reads, lists, searches or writes the inbox socket, the registry, the console secret or the grants', async (t) => {
  const s = await setup(t, 'none');
  const leaks: string[] = [];
  const refused = async (tool: string, args: Record<string, unknown>) => {
    const env = await s.call(tool, args);
    if (env.ok || JSON.stringify(env).includes(s.secret) || /"pid":\d+,"socket"/.test(JSON.stringify(env))) leaks.push(`${tool} ${JSON.stringify(args)}: ${JSON.stringify(env).slice(0, 200)}`);
  };
  /** A search may succeed, but must find nothing of the private dirs. */
  const blind = async (tool: string, args: Record<string, unknown>) => {
    const env = await s.call(tool, args);
    const found = JSON.stringify(env.data?.matches ?? env.data?.files ?? env.data?.entries ?? []);
    if (/\.sock|servers\/\d+\.json|"socket"|grants\//.test(found) || found.includes(s.secret)) leaks.push(`${tool} ${JSON.stringify(args)} found: ${found.slice(0, 160)}`);
  };
  const grantsFile = path.join('state', 'toolgate', 'grants', 'evil.json');
  const grant = JSON.stringify({ version: 1, root: s.ws.dir, grants: [{ id: 'g_evil', tool: 'write_file', created_at: 'x' }] });
  for (const p of ['run/toolgate/servers', 'run/toolgate/sock', 'run/toolgate', path.join(s.rt, 'servers'), 'state/toolgate/grants']) await refused('list_dir', { path: p });
  for (const p of [s.sock, path.relative(s.ws.dir, s.sock), ...readdirSync(path.join(s.rt, 'servers')).map((f) => `run/toolgate/servers/${f}`)]) await refused('read_file', { path: p });
  await refused('write_file', { path: grantsFile, content: grant });
  await refused('write_file', { path: 'state/toolgate/grants/new.json', content: grant, create_dirs: true });
  await refused('apply_patch', { patch: `--- /dev/null\n+++ b/${grantsFile}\n@@ -0,0 +1 @@\n+${grant}\n` });
  await refused('delete_file', { path: 'run/toolgate/sock', recursive: true });
  await refused('grep', { pattern: 'socket', path: 'run/toolgate' });
  // Searches of the whole workspace skip them.
  await blind('grep', { pattern: 'socket', path: 'run' });
  await blind('grep', { pattern: '"socket"', path: '.' });
  await blind('grep', { pattern: 'g_', path: 'state' });
  await blind('glob', { pattern: 'run/toolgate/**' });
  await blind('glob', { pattern: '**/*.sock' });
  await blind('glob', { pattern: '**/servers/*' });
  await blind('list_dir', { path: 'run' });
  // The console over the network tool: loopback is refused even with an allow rule for the domain.
  for (const url of [`http://127.0.0.1:${s.port}/api/state`, `http://localhost:${s.port}/`]) await refused('fetch_url', { url });
  await refused('fetch_url', { url: `http://127.0.0.1:${s.port}/api/answer`, method: 'POST', body: JSON.stringify({ id: s.id, decision: 'allow_once' }) });
  // Commands naming the private paths are judged as reads/writes of denied paths (best effort without bwrap).
  const reg = readdirSync(path.join(s.rt, 'servers'))[0]!;
  for (const c of [`cat ${path.join(s.rt, 'servers', reg)}`, `cat run/toolgate/servers/${reg}`, `ls ${s.rt}`, `echo '${grant}' > ${grantsFile}`, `cp /dev/null ${path.join(s.rt, 'sock', 'x')}`]) await refused('run_command', { command: c });
  await finish(s, leaks);
});

test('run_command inside bubblewrap: the runtime dir is masked (no socket to connect to) and there is no network to reach the console', { skip: HAS_BWRAP ? false : 'needs bubblewrap (bwrap): not installed or not usable here' }, async (t) => {
  const s = await setup(t, 'bwrap');
  const leaks: string[] = [];
  const answer = JSON.stringify({ op: 'answer', id: s.id, decision: 'allow_once' });
  const node = (js: string) => `node -e ${JSON.stringify(js).replace(/\$/g, '\\$')}`;
  const attempts = [
    // The socket, by a path the parser cannot see in the script.
    node(`const n=require('net');const c=n.connect(process.argv[1]||${JSON.stringify(s.sock)});c.on('connect',()=>{c.write(${JSON.stringify(answer + '\n')});c.on('data',d=>{console.log('GOT',String(d));process.exit(0)})});c.on('error',e=>{console.log('ERR',e.code);process.exit(3)})`),
    // The console, over loopback.
    node(`require('http').get('http://127.0.0.1:${s.port}/login?s=${s.secret}',r=>{console.log('GOT',r.statusCode);process.exit(0)}).on('error',e=>{console.log('ERR',e.code);process.exit(3)})`),
    // Listing the runtime dir through a name the parser does not know as a reader.
  ];
  // The runtime dir is an empty mask inside the sandbox.
  const ls = await s.call('run_command', { command: node(`try{console.log('SEEN['+require('fs').readdirSync(${JSON.stringify(s.rt)}).join(',')+']')}catch(e){console.log('ERR',e.code)}`) });
  if (/SEEN\[[^\]]/.test(String(ls.data?.output))) leaks.push(`the runtime dir is visible: ${ls.data.output}`);
  for (const c of attempts) {
    const env = await s.call('run_command', { command: c });
    const out = String(env.data?.output ?? '');
    if (env.ok || /GOT/.test(out)) leaks.push(`${c.slice(0, 60)}…: ${out.slice(0, 120)}`);
    if (env.data) assert.equal(env.data.sandbox, 'bwrap');
  }
  // Control: the same kind of command runs in the sandbox (so the refusals above are the sandbox's doing).
  const ctl = await s.call('run_command', { command: node(`console.log('CONTROL', require('fs').readdirSync('.').length > 0)`) });
  assert.equal(ctl.ok, true, JSON.stringify(ctl.error));
  assert.match(String(ctl.data.output), /CONTROL true/);
  await finish(s, leaks);
});

// Without a sandbox a command runs as the person: it reaches the socket and could find the console's
// secret. What stops it is the mark every process started for a command carries (src/exec/mark.ts),
// which no setsid, double fork or exit hides from the check of the sender (src/approvals/peer.ts).
test('run_command without a sandbox: answers from a command, its daemon or a sender that exits at once are refused by the socket and the console', { skip: process.platform === 'linux' ? false : 'the mark needs Linux' }, async (t) => {
  const s = await setup(t, 'none');
  const leaks: string[] = [];
  const answer = JSON.stringify({ op: 'answer', id: s.id, decision: 'allow_always' }) + '\n';
  // Scripts in the workspace, the paths inside them: what is tried is the sender, not the path rules.
  const sockJs = (op: string, out: string, exitAtOnce = false) => `const n=require('net'),fs=require('fs');const c=n.connect(${JSON.stringify(s.sock)});` +
    `c.on('connect',()=>{c.write(${JSON.stringify(op)});${exitAtOnce ? 'process.exit(0);' : ''}});let b='';c.on('data',d=>b+=d);c.on('end',()=>{fs.writeFileSync(${JSON.stringify(out)},b);process.exit(0)});c.on('error',e=>{fs.writeFileSync(${JSON.stringify(out)},'ERR '+e.code);process.exit(3)})`;
  const o = (n: string) => path.join(s.ws.dir, `out-${n}.txt`);
  writeFileSync(`${s.ws.dir}/a.js`, sockJs(answer, o('a')));
  writeFileSync(`${s.ws.dir}/c.js`, sockJs(JSON.stringify({ op: 'console' }) + '\n', o('c')));
  writeFileSync(`${s.ws.dir}/e.js`, sockJs(answer, o('e'), true));
  writeFileSync(`${s.ws.dir}/d.js`, sockJs(answer, o('d')));
  // The console, with the secret (as if read from the client's log of toolgate's stderr).
  const base = `http://127.0.0.1:${s.port}`;
  writeFileSync(`${s.ws.dir}/w.js`, `(async()=>{const fs=require('fs');const l=await fetch('${base}/login?s=${s.secret}',{redirect:'manual'});` +
    `const ck=(l.headers.get('set-cookie')||'').split(';')[0];const st=await (await fetch('${base}/api/state',{headers:{cookie:ck}})).json();` +
    `const r=await fetch('${base}/api/answer',{method:'POST',headers:{cookie:ck,origin:'${base}','content-type':'application/json','x-csrf-token':st.csrf},body:JSON.stringify({id:'${s.id}',decision:'allow_always'})});` +
    `fs.writeFileSync(${JSON.stringify(o('w'))},r.status+' '+await r.text())})().catch(e=>require('fs').writeFileSync(${JSON.stringify(o('w'))},'ERR '+e.message))`);
  const run = async (command: string) => {
    const env = await s.call('run_command', { command });
    assert.equal(env.ok, true, `${command}: ${JSON.stringify(env.error)}`);
    assert.equal(env.data.sandbox, 'none');
  };
  const read = async (n: string) => {
    for (let i = 0; i < 100 && !existsSync(o(n)); i++) await new Promise((r) => setTimeout(r, 100));
    return existsSync(o(n)) ? readFileSync(o(n), 'utf8') : '(no reply)';
  };
  await run('node a.js');
  await run('node c.js');
  await run('node w.js');
  await run('node e.js; sleep 1');
  // A daemon: its own session, its parent gone (init adopts it), started in the background.
  await run('setsid -f node d.js');
  writeFileSync(`${s.ws.dir}/b.js`, sockJs(answer, o('b')));
  const proc = await s.call('run_command', { command: 'sleep 1; node b.js', background: true });
  assert.equal(proc.ok, true, JSON.stringify(proc.error));
  for (const n of ['a', 'c', 'd', 'b']) {
    const got = await read(n);
    if (!/"reason":"refused"/.test(got)) leaks.push(`${n}.js: ${got.slice(0, 200)}`);
    else assert.match(got, /an agent's command started/);
  }
  const w = await read('w');
  if (!w.startsWith('403 ') || !/"reason":"refused"/.test(w)) leaks.push(`console: ${w.slice(0, 200)}`);
  // e.js sent its answer and exited without waiting: nothing it sent may count (finish() checks).
  // Control: the same request for the console's login from this (unmarked) process is served.
  const { askSocket } = await import('../../src/approvals/socket-server.js');
  const ctl = await askSocket(s.sock, { op: 'console' });
  assert.equal(ctl.ok, true, JSON.stringify(ctl));
  await finish(s, leaks);
});
