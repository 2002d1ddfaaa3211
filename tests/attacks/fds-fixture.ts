// Shared by the tests of inherited descriptors (src/exec/inherited-fds.ts): a process's descriptors
// seen from outside (/proc), a JSON-RPC client on a spawned server, and a background command's pid.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

export const fdsOf = (pid: number) => readdirSync(`/proc/${pid}/fd`).map(Number).sort((a, b) => a - b);
export const linkOf = (pid: number, fd: number) => { try { return readlinkSync(`/proc/${pid}/fd/${fd}`); } catch { return ''; } };
export const show = (pid: number) => fdsOf(pid).map((fd) => `${fd}→${linkOf(pid, fd)}`).join(', ');

export function pidOf(cmdline: string): number | undefined {
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try { if (readFileSync(`/proc/${e}/cmdline`, 'utf8') === cmdline) return Number(e); } catch { /* gone */ }
  }
  return undefined;
}

export type Reply = { result?: { structuredContent?: { ok?: boolean; data?: { id?: string; output?: string } } } };

/** A JSON-RPC client on a spawned server's stdin/stdout, initialized. */
export async function client(srv: ChildProcess) {
  let buf = '';
  const waiters = new Map<number, (m: Reply) => void>();
  srv.stdout!.on('data', (c) => {
    buf += c;
    for (let i; (i = buf.indexOf('\n')) >= 0; buf = buf.slice(i + 1)) { const m = JSON.parse(buf.slice(0, i)); waiters.get(m.id)?.(m); }
  });
  let id = 0;
  const req = (method: string, params: unknown) => new Promise<Reply>((r) => { const k = ++id; waiters.set(k, r); srv.stdin!.write(JSON.stringify({ jsonrpc: '2.0', id: k, method, params }) + '\n'); });
  await req('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } });
  srv.stdin!.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
  return req;
}

/** Starts `sleep MARK` in the background through the server and returns the command's pid. */
export async function backgroundSleep(t: { after: (f: () => void) => void }, req: Awaited<ReturnType<typeof client>>, mark: string): Promise<number> {
  const r = await req('tools/call', { name: 'run_command', arguments: { command: `sleep ${mark}`, background: true } });
  assert.ok(r.result?.structuredContent?.data?.id, JSON.stringify(r));
  let pid: number | undefined;
  for (let i = 0; i < 100 && !(pid = pidOf(`sleep\0${mark}\0`)); i++) await new Promise((res) => setTimeout(res, 20));
  assert.ok(pid, `sleep ${mark} not found`);
  const found = pid;
  t.after(() => { try { process.kill(found, 'SIGKILL'); } catch { /* gone */ } });
  // Just started, sleep may still hold files of its own (its locale, while setlocale reads it):
  // its descriptors are read once they stopped changing (two looks 50 ms apart, for up to 2 s).
  for (let i = 0, last = ''; i < 40; i++) {
    const now = show(pid);
    if (now === last) break;
    last = now;
    await new Promise((res) => setTimeout(res, 50));
  }
  return pid;
}
