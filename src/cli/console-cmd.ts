import { spawn } from 'node:child_process';
import { childStdio } from '../exec/inherited-fds.js';
import { askSocket } from '../approvals/socket-server.js';
import { findServers } from './approvals-cmd.js';
import type { CommonFlags } from './setup.js';

/** Prints a fresh console login URL of each running server, and opens the first where there is a display. */
export async function consoleCommand(flags: CommonFlags): Promise<number> {
  const servers = (await findServers(flags)).filter((s) => s.console);
  const urls: string[] = [];
  for (const s of servers) {
    try {
      const r = await askSocket(s.socket, { op: 'console' });
      if (r.ok && typeof r.url === 'string') {
        urls.push(r.url);
        process.stdout.write(`${r.url}    (pid ${s.pid}, ${s.roots.join(', ') || 'client roots'})\n`);
      }
    } catch { /* stopped meanwhile */ }
  }
  if (urls.length === 0) {
    process.stderr.write('toolgate: no running toolgate server with a console found (is it started with --console off?)\n');
    return 1;
  }
  const opener = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? null : (process.env.DISPLAY || process.env.WAYLAND_DISPLAY) ? 'xdg-open' : null;
  if (opener) {
    const child = spawn(opener, [urls[0]!], { stdio: childStdio(['ignore', 'ignore', 'ignore']), detached: true });
    child.on('error', () => process.stderr.write(`toolgate: could not run ${opener}; open the URL above yourself\n`));
    child.unref();
  }
  return 0;
}
