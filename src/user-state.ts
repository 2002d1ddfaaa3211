import os from 'node:os';
import path from 'node:path';

/**
 * Where toolgate keeps what belongs to the *user*, never to a workspace: stored grants
 * (allow_always), upstream pins, the registry of running servers. A cloned repository must
 * not be able to ship any of it, so it lives outside every workspace — and every tool is
 * refused access to it (PathRules.deniedAbs), even when a workspace root contains it.
 */
export function userStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_STATE_HOME && path.isAbsolute(env.XDG_STATE_HOME)
    ? env.XDG_STATE_HOME : path.join(env.HOME || os.homedir(), '.local', 'state');
  return path.join(base, 'toolgate');
}

/**
 * Private runtime directory (0700) for the approval sockets and the console secret: under
 * $XDG_RUNTIME_DIR when set (per-user tmpfs), else a per-uid folder under the temp dir.
 */
export function runtimeDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.XDG_RUNTIME_DIR && path.isAbsolute(env.XDG_RUNTIME_DIR)) return path.join(env.XDG_RUNTIME_DIR, 'toolgate');
  const uid = typeof process.getuid === 'function' ? process.getuid() : 'user';
  return path.join(os.tmpdir(), `toolgate-${uid}`);
}

/** Both, for the deny list of every tool and the sandbox's masks. */
export function userPrivatePaths(env: NodeJS.ProcessEnv = process.env): string[] {
  return [userStateDir(env), runtimeDir(env)];
}
