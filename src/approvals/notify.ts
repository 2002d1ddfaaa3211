import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { childStdio } from '../exec/inherited-fds.js';
import { safePath } from '../exec/env.js';

/**
 * The program on PATH, skipping the entries a command could plant one in (safePath: relative ones
 * and any inside a workspace root): it runs outside any sandbox, whenever an approval waits.
 */
function onPath(cmd: string, env: NodeJS.ProcessEnv, roots: string[]): string | null {
  for (const dir of safePath(env.PATH, roots).split(path.delimiter)) {
    if (!dir) continue;
    const p = path.join(dir, cmd);
    try { accessSync(p, constants.X_OK); return p; } catch { /* next */ }
  }
  return null;
}

/** How to show a desktop notification here, or null (no display, no tool, or TOOLGATE_NOTIFY=off). */
export function notifier(env: NodeJS.ProcessEnv = process.env, roots: string[] = []): ((title: string, body: string) => void) | null {
  if (env.TOOLGATE_NOTIFY === 'off') return null;
  let argv: (title: string, body: string) => string[];
  let cmd: string | null;
  if (process.platform === 'darwin') {
    cmd = onPath('osascript', env, roots);
    argv = (t, b) => ['-e', `display notification ${JSON.stringify(b)} with title ${JSON.stringify(t)}`];
  } else {
    if (!env.DISPLAY && !env.WAYLAND_DISPLAY) return null;
    cmd = onPath('notify-send', env, roots);
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
