/**
 * The starter process's whole program (run with `node -e`; no toolgate code, no imports beyond
 * node:child_process and node:fs). The server's side of its channel: starter.ts.
 */

/** Settings of the helper's own Node: a small heap (it holds no data) keeps its footprint small. */
export const HELPER_NODE_ARGS = ['--max-old-space-size=24', '--max-semi-space-size=1'];

/** What the helper sends the server. */
export type HelperMsg =
  | { t: 'ready' }
  | { t: 'spawned'; id: number; pid: number; start?: string | null }
  | { t: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null; stderr: string }
  | { t: 'error'; id: number; code: string; message: string }
  | { t: 'stderr'; id: number }
  | { t: 'wrote'; id: number; n: number; error: string | null };

/** How the helper shows in ps and /proc/PID/cmdline. */
export const STARTER_TITLE = 'toolgate-starter';

// The helper's whole program, run with `node -e`. For rg (`spawn`) it starts the program with
// stdout a pipe it never reads (the read end goes to the server), collects stderr and reports the
// exit. For a command (`cmd`) it starts it in its own session with the given environment and
// hands both output pipes to the server; stdin is written for the server (`write`, in chunks; `end`). When the
// server goes away (its end of the channel closes), it kills what it started and exits.
export const HELPER_SOURCE = String.raw`
'use strict';
process.title = ${JSON.stringify(STARTER_TITLE)};
// No inspector on SIGUSR1 (src/cli/no-inspector.ts): a command could run code in here.
process.on('SIGUSR1', () => {});
const { spawn } = require('node:child_process');
// The descriptor the server covered for it (its own IPC channel, left without close-on-exec by
// Node): closed, so nothing started here holds even the cover.
{ const fd = Number(process.argv[1]); if (Number.isInteger(fd) && fd > 3) { try { require('node:fs').closeSync(fd); } catch {} } }
const kids = new Map();
const STDERR_MAX = 65536;
const alive = (k) => k.exitCode === null && k.signalCode === null;
// A command leads its own process group: the group goes with it.
const kill = (k) => { if (k.group) { try { process.kill(-k.pid, 'SIGKILL'); } catch {} } try { k.kill('SIGKILL'); } catch {} };
process.on('message', (m) => {
  if (!m || typeof m !== 'object') return;
  const k = kids.get(m.id);
  if (m.t === 'kill') { if (k && alive(k)) kill(k); return; }
  // stdin comes in base64 chunks, one at a time per command (the server waits for 'wrote'): this
  // process's small heap never holds more than a chunk of it.
  if (m.t === 'write') {
    const s = k && k.stdin;
    if (!s || s.destroyed || s.writableEnded) { process.send({ t: 'wrote', id: m.id, n: m.n, error: 'stdin is closed' }); return; }
    s.write(Buffer.from(String(m.data), 'base64'), (e) => process.send({ t: 'wrote', id: m.id, n: m.n, error: e ? String(e.message) : null }));
    return;
  }
  if (m.t === 'end') {
    const s = k && k.stdin;
    if (s && !s.destroyed && !s.writableEnded) s.end();
    return;
  }
  if (m.t !== 'spawn' && m.t !== 'cmd') return;
  const cmd = m.t === 'cmd';
  let child;
  try {
    child = cmd
      ? spawn(m.bin, m.args, { cwd: m.cwd, env: m.env, detached: true, stdio: [m.stdin === null ? 'ignore' : 'pipe', 'pipe', 'pipe'], ...(typeof m.argv0 === 'string' ? { argv0: m.argv0 } : {}) })
      : spawn(m.bin, m.args, { cwd: m.cwd, stdio: ['ignore', 'pipe', m.stderr ? 'pipe' : 'ignore'] });
  } catch (e) {
    process.send({ t: 'error', id: m.id, code: e.code || 'EINVAL', message: String(e.message) });
    return;
  }
  // Node starts reading a child's output at once; stop it in this same turn (nothing is read
  // before the event loop runs again), so that every byte reaches the server.
  if (child.stdout._handle) child.stdout._handle.readStop();
  if (cmd && child.stderr._handle) child.stderr._handle.readStop();
  let err = '';
  let exit = null;
  let errDone = cmd || !child.stderr;
  let failed = false;
  const done = () => {
    if (failed || !exit || !errDone) return;
    kids.delete(m.id);
    process.send({ t: 'exit', id: m.id, code: exit[0], signal: exit[1], stderr: err });
  };
  if (!cmd && child.stderr) {
    child.stderr.on('data', (c) => { if (err.length < STDERR_MAX) err += c.toString('utf8'); });
    child.stderr.on('close', () => { errDone = true; done(); });
  }
  child.on('error', (e) => {
    if (failed) return;
    failed = true;
    kids.delete(m.id);
    try { child.stdout.destroy(); } catch {}
    try { if (cmd) child.stderr.destroy(); } catch {}
    process.send({ t: 'error', id: m.id, code: e.code || 'EIO', message: String(e.message) });
  });
  child.on('exit', (code, signal) => { exit = [code, signal]; done(); });
  if (child.pid === undefined) return;
  child.group = cmd;
  kids.set(m.id, child);
  if (cmd && child.stdin) child.stdin.on('error', () => {});
  // The pipes' read ends leave with these messages; this process's copies are closed once sent.
  // Its start time (/proc/PID/stat), read before this process can have reaped it: the server tells
  // by it whether the pid is still this child's when it kills (the exit is reported a message later).
  let start = null;
  if (cmd) { try { const st = require('node:fs').readFileSync('/proc/' + child.pid + '/stat', 'utf8'); start = st.slice(st.lastIndexOf(')') + 2).split(' ')[19] || null; } catch {} }
  process.send({ t: 'spawned', id: m.id, pid: child.pid, start }, child.stdout);
  if (cmd) process.send({ t: 'stderr', id: m.id }, child.stderr);
});
const leave = () => {
  for (const k of kids.values()) kill(k);
  process.exit(0);
};
process.on('disconnect', leave);
// A send that fails because the server's end closed first (EPIPE) means the same: without this
// the error would end this process with a trace and leave what it started running. Another
// error is not expected: it is said on stderr (the server's log) before leaving.
process.on('error', (e) => {
  if (!['EPIPE', 'ECONNRESET', 'ERR_IPC_CHANNEL_CLOSED'].includes(e && e.code)) { try { process.stderr.write('toolgate-starter: ' + ((e && e.stack) || e) + '\n'); } catch {} }
  leave();
});
// Node emits no 'disconnect' when the channel closes while a pipe it sent awaits the server's
// acknowledgement (a server killed just after asking for a command): look for that too.
setInterval(() => { if (!process.connected) leave(); }, 200).unref();
process.send({ t: 'ready' });
`;
