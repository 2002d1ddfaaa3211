import { execFile } from 'node:child_process';
import { fstatSync, readFileSync, statSync } from 'node:fs';
import { readdir, readlink } from 'node:fs/promises';
import type net from 'node:net';
import { isMarked, markingOn } from '../exec/mark.js';

/**
 * Who sent an answer (src/exec/mark.ts): the approval inbox's socket and the console take an answer
 * only from a process that does not carry the mark of an agent's command. Without a sandbox such a
 * command runs as the person, reaches the socket and can find the console's secret; the mark is
 * what tells it apart, through setsid and double forks.
 *
 * The sender is found through the connection itself: for the Unix socket, by `ss` (iproute2: the
 * kernel's sock_diag names the peer's socket and the processes holding it); for the console's TCP
 * connection, by /proc/net/tcp and the holders' /proc/PID/fd. Every holder must be unmarked, and the
 * connection still open once they were looked at (a sender that exited before it was looked at
 * cannot be told apart). Without `ss`, an answer over the socket is taken only while no marked
 * process runs at all.
 */
export type PeerVerdict = { ok: true; how: string } | { ok: false; message: string };

export interface PeerOptions {
  /** The ss binary ('' when there is none); tests point it elsewhere. Default: systemSs(). */
  ss?: string;
  /** Processes of this server's own that carry the mark and never answer (the starter). */
  own?: () => number[];
}

const FIX = 'Answer from your own terminal, the console in your browser, or the client';

export async function judgePeer(kind: 'unix' | 'tcp', sock: net.Socket, o: PeerOptions = {}): Promise<PeerVerdict> {
  if (!markingOn()) return { ok: true, how: 'not checked (no marks on this system)' };
  let ended = false;
  const onEnd = () => { ended = true; };
  sock.once('end', onEnd);
  sock.once('close', onEnd);
  try {
    const holders = kind === 'unix' ? await unixPeerPids(sock, o.ss ?? systemSs()) : await tcpPeerPids(sock);
    let v: PeerVerdict;
    if (holders === null) {
      const m = await markedAlive(new Set([process.pid, ...(o.own?.() ?? [])]));
      v = m === null
        ? { ok: true, how: 'no command of an agent is running (ss is missing: the sender was not looked up)' }
        : { ok: false, message: `toolgate cannot tell who sent this answer (\`ss\` from iproute2 is missing) while a process an agent's command started is running (pid ${m}). Install iproute2, or answer in the console or the client.` };
    } else if (holders.length === 0) {
      v = { ok: false, message: `the process that sent this answer could not be found (it exited, or is another user's). ${FIX}.` };
    } else {
      const marked = holders.find((pid) => isMarked(pid) !== false);
      v = marked === undefined
        ? { ok: true, how: `sent by pid ${holders.join(',')}` }
        : { ok: false, message: `this answer was sent by a process an agent's command started (pid ${marked}${name(marked)}): toolgate takes answers only from a person. ${FIX}.` };
    }
    // Let an end that is already on its way arrive before deciding.
    await new Promise((r) => setImmediate(r));
    if (v.ok && (ended || sock.destroyed)) return { ok: false, message: `the connection closed before its sender was checked. ${FIX}.` };
    return v;
  } finally {
    sock.off('end', onEnd);
    sock.off('close', onEnd);
  }
}

/**
 * ss from the system's own folders only, owned by root and not writable by others: never through
 * PATH, where a folder of the user's (~/.local/bin) could hold an `ss` an unsandboxed command wrote
 * to name any process it likes. '' when there is none.
 */
export function systemSs(): string {
  for (const f of ['/usr/bin/ss', '/bin/ss', '/usr/sbin/ss', '/sbin/ss']) {
    try {
      const st = statSync(f);
      if (st.isFile() && st.uid === 0 && !(st.mode & 0o022)) return f;
    } catch { /* not here */ }
  }
  return '';
}

function name(pid: number): string {
  try { return `, ${readFileSync(`/proc/${pid}/comm`, 'utf8').trim()}`; } catch { return ''; }
}

/** The inode of the socket behind a net.Socket (its descriptor), or null. */
function inodeOf(sock: net.Socket): number | null {
  const fd = (sock as unknown as { _handle?: { fd?: number } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) return null;
  try { return fstatSync(fd).ino; } catch { return null; }
}

/**
 * The pids holding the other end of an accepted Unix connection: the peer's inode from `ss -xnH`
 * (sock_diag), its holders from /proc (never from ss's text: a process name or a socket path is
 * text the sender chooses, and a path may hold newlines that print as rows of their own). Our own
 * inode must be on exactly one row, and the peer's row, when shown, must point back: a forged row
 * for either makes a duplicate, and the answer is refused. null when ss cannot be run; [] when no
 * peer is found.
 */
export async function unixPeerPids(sock: net.Socket, ss = systemSs()): Promise<number[] | null> {
  const ino = inodeOf(sock);
  if (ino === null || !ss) return ino === null ? [] : null;
  const out = await new Promise<string | null>((resolve) => {
    execFile(ss, ['-xnH'], { encoding: 'utf8', maxBuffer: 64 << 20, timeout: 10_000 }, (e, stdout) => resolve(e ? null : stdout));
  });
  if (out === null) return null;
  const rows = new Map<number, number[]>();
  for (const line of out.split('\n')) {
    // "u_str ESTAB 0 0 <local address, may hold spaces> <inode> <peer address> <peer inode>"
    const m = /^u_\S+\s+\S+\s+\d+\s+\d+\s+.*?\s(\d+)\s+\S+\s+(\d+)\s*$/.exec(line);
    if (!m) continue;
    const local = Number(m[1]);
    rows.set(local, [...(rows.get(local) ?? []), Number(m[2])]);
  }
  const mine = rows.get(ino);
  if (!mine || mine.length !== 1 || !mine[0]) return [];
  const peer = mine[0];
  const back = rows.get(peer);
  if (back && (back.length !== 1 || back[0] !== ino)) return [];
  return socketHolders(peer);
}

/** The pids holding the client end of an accepted TCP connection on loopback (IPv4), from /proc. */
export async function tcpPeerPids(sock: net.Socket): Promise<number[]> {
  const { remoteAddress, remotePort, localAddress, localPort } = sock;
  if (!remoteAddress || !remotePort || !localAddress || !localPort) return [];
  const want = `${hexAddr(remoteAddress, remotePort)} ${hexAddr(localAddress, localPort)}`;
  let inode = 0;
  try {
    for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && `${f[1]} ${f[2]}` === want) { inode = Number(f[9]); break; }
    }
  } catch { return []; }
  if (!inode) return [];
  return socketHolders(inode);
}

/** "127.0.0.1", 8080 → "0100007F:1F90", as /proc/net/tcp shows it (little-endian words). */
function hexAddr(ip: string, port: number): string {
  const v4 = ip.replace(/^::ffff:/, '').split('.').map(Number);
  const hex = v4.length === 4 ? v4.reverse().map((b) => b.toString(16).padStart(2, '0')).join('').toUpperCase() : 'X';
  return `${hex}:${port.toString(16).toUpperCase().padStart(4, '0')}`;
}

async function pids(): Promise<number[]> {
  return (await readdir('/proc')).filter((d) => /^\d+$/.test(d)).map(Number);
}

/** Every process that holds socket `inode` (those whose descriptors this user may read). */
async function socketHolders(inode: number): Promise<number[]> {
  const want = `socket:[${inode}]`;
  const found: number[] = [];
  await Promise.all((await pids()).map(async (pid) => {
    let fds: string[];
    try { fds = await readdir(`/proc/${pid}/fd`); } catch { return; }
    for (const fd of fds) {
      try {
        if ((await readlink(`/proc/${pid}/fd/${fd}`)) === want) { found.push(pid); return; }
      } catch { /* closed meanwhile */ }
    }
  }));
  return found;
}

/** A running process that carries the mark, other than `except`; null when there is none. */
async function markedAlive(except: Set<number>): Promise<number | null> {
  for (const pid of await pids()) {
    if (!except.has(pid) && isMarked(pid) === true) return pid;
  }
  return null;
}
