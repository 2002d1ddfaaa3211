import { closeSync, readdirSync, readFileSync } from 'node:fs';

/** O_CLOEXEC in /proc/PID/fdinfo's octal `flags` (Linux, every architecture Node runs on). */
const O_CLOEXEC = 0o2000000;

/**
 * Closes the descriptors above stderr that this process holds without close-on-exec: ones its
 * parent left open for it (a client's, a shell's). Every child would inherit them — each command,
 * the starter, bubblewrap — and a command could read or write what they lead to. Node and libuv
 * open theirs with close-on-exec; a Node parent's IPC channel (process.channel) is kept. Linux only
 * (/proc/self/fdinfo); returns the numbers closed. Call before anything is spawned.
 */
export function closeInheritedFds(): number[] {
  if (process.platform !== 'linux') return [];
  const keep = new Set([0, 1, 2]);
  const channel = (process.channel as { fd?: unknown } | undefined)?.fd;
  if (typeof channel === 'number') keep.add(channel);
  let names: string[];
  try { names = readdirSync('/proc/self/fdinfo'); } catch { return []; }
  const closed: number[] = [];
  for (const n of names) {
    const fd = Number(n);
    if (!Number.isInteger(fd) || keep.has(fd)) continue;
    let flags: number;
    try {
      const m = /^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${n}`, 'utf8'));
      if (!m) continue;
      flags = parseInt(m[1]!, 8);
    } catch { continue; /* gone (the listing's own descriptor) */ }
    if (flags & O_CLOEXEC) continue;
    try { closeSync(fd); closed.push(fd); } catch { /* already closed */ }
  }
  return closed;
}
