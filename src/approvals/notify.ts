import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { childStdio } from '../exec/inherited-fds.js';

/** Where a notifier is looked for: system folders only, never PATH as the server got it. */
const SYSTEM_BIN = ['/usr/local/bin', '/usr/bin', '/bin'];

/**
 * The notifier program, from the system folders only: it runs outside any sandbox whenever an
 * approval waits, and PATH may name folders a command can write (a relative node_modules/.bin, or
 * an absolute one inside a client's root, which the server does not know when it starts).
 */
function onPath(cmd: string, dirs: readonly string[]): string | null {
  for (const dir of dirs) {
    const p = path.join(dir, cmd);
    try { accessSync(p, constants.X_OK); return p; } catch { /* next */ }
  }
  return null;
}

/** How to show a desktop notification here, or null (no display, no tool, or TOOLGATE_NOTIFY=off). `dirs`: where the tool is looked for (tests). */
export function notifier(env: NodeJS.ProcessEnv = process.env, dirs: readonly string[] = SYSTEM_BIN): ((title: string, body: string) => void) | null {
  if (env.TOOLGATE_NOTIFY === 'off') return null;
  let argv: (title: string, body: string) => string[];
  let cmd: string | null;
  if (process.platform === 'darwin') {
    cmd = onPath('osascript', dirs);
    argv = (t, b) => ['-e', `display notification ${JSON.stringify(b)} with title ${JSON.stringify(t)}`];
  } else {
    if (!env.DISPLAY && !env.WAYLAND_DISPLAY) return null;
    cmd = onPath('notify-send', dirs);
    argv = (t, b) => ['--app-name=toolgate', t, b];
  }
  if (!cmd) return null;
  const bin = cmd;
  return (title, body) => {
    try {
      const child = spawn(bin, argv(title, body), { stdio: childStdio(['ignore', 'ignore', 'ignore']), detached: true });
      child.on('error', () => {});
      child.unref();
    } catch { /* a notification is a courtesy */ }
  };
}
