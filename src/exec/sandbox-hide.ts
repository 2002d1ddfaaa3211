import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import path from 'node:path';
import type { SandboxSpec } from './sandbox.js';

/** Where host services keep Unix sockets, besides /run and the user's runtime folder (review 32: LXD, Incus, MySQL). */
const SOCKET_DIRS = ['/var/snap/lxd/common/lxd', '/var/lib/lxd', '/var/lib/incus', '/var/lib/mysql'];

/**
 * Empty folders over /run (and /var/run when it is a folder of its own), the user's runtime folder
 * ($XDG_RUNTIME_DIR) and SOCKET_DIRS: where host services keep their Unix sockets. bwrapArgs makes
 * them read-only last (after the masks, which skip paths below them). With network allowed, the
 * folder /etc/resolv.conf leads to under /run is bound back (name lookups). A folder that holds a
 * root or HOME, or lies in one, is left alone. A deny list: a socket elsewhere stays reachable.
 */
export function hideRuntime(s: Pick<SandboxSpec, 'roots' | 'home' | 'network'>): { args: string[]; hidden: string[] } {
  const args: string[] = [];
  const xdg = process.env.XDG_RUNTIME_DIR;
  // The runtime folder as the kernel finds it (a link to it would leave it in view, review 33).
  let xdgReal: string | undefined;
  if (xdg && path.isAbsolute(xdg)) { try { xdgReal = realpathSync(xdg); } catch { xdgReal = path.resolve(xdg); } }
  const dirs = ['/run', '/var/run', ...(xdgReal ? [xdgReal] : []), ...SOCKET_DIRS];
  const hidden: string[] = [];
  for (const d of dirs) {
    let st;
    try { st = lstatSync(d); } catch { continue; }
    if (!st.isDirectory() || hidden.some((h) => d === h || d.startsWith(`${h}/`))) continue;
    if ([...s.roots, s.home].some((r) => r === d || r.startsWith(`${d}/`) || d.startsWith(`${r}/`))) continue;
    args.push('--tmpfs', d);
    hidden.push(d);
  }
  if (s.network) args.push(...resolvConfBack(hidden));
  return { args, hidden };
}

/**
 * With network allowed, name lookups read /etc/resolv.conf, often a link into /run
 * (systemd-resolved's stub file). Each link on the way that lies in a hidden folder is made again,
 * and the file it ends at is bound back on its own, read-only — not its folder, which holds
 * resolved's sockets (review 33).
 */
export function resolvConfBack(hidden: string[], start = '/etc/resolv.conf'): string[] {
  const out: string[] = [];
  const inHidden = (p: string) => hidden.some((h) => p.startsWith(`${h}/`));
  let cur = start;
  for (let hop = 0; hop < 40; hop++) {
    let st;
    try {
      cur = path.join(realpathSync(path.dirname(cur)), path.basename(cur));
      st = lstatSync(cur);
    } catch { break; }
    if (!st.isSymbolicLink()) {
      if (st.isFile() && inHidden(cur)) out.push('--ro-bind', cur, cur);
      break;
    }
    let target: string;
    try { target = readlinkSync(cur); } catch { break; }
    if (inHidden(cur)) out.push('--symlink', target, cur);
    cur = path.resolve(path.dirname(cur), target);
  }
  return out;
}
