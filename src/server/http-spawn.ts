import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** dist/cli.js of this checkout (tests and the bench spawn the built server). */
export const BUILT_CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/cli.js');

export interface SpawnedHttp {
  url: string;
  port: number;
  token: string;
  proc: ChildProcess;
  stderr(): string;
  /** SIGTERM, then wait for the exit; resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Spawns `node dist/cli.js serve --transport http --port 0 …` and waits for the line that
 * names the address it listens on. For tests and the bench; not part of the server.
 */
export async function spawnHttpServer(args: string[], opts: { env?: Record<string, string>; token?: string; cli?: string } = {}): Promise<SpawnedHttp> {
  const token = opts.token ?? randomBytes(24).toString('base64url');
  const proc = spawn(process.execPath, [opts.cli ?? BUILT_CLI, 'serve', '--transport', 'http', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, TOOLGATE_LOG_LEVEL: 'warn', TOOLGATE_TOKEN: token, ...(opts.env ?? {}) },
  });
  let err = '';
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => { out += c.toString(); });
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  const url = await new Promise<string>((resolve, reject) => {
    proc.stderr!.on('data', (c: Buffer) => {
      err += c.toString();
      const m = /listening on (http:\/\/\S+?)\/mcp/.exec(err);
      if (m) resolve(m[1]!);
    });
    void exited.then((code) => reject(new Error(`server exited (${code}) before listening:\n${err}${out}`)));
  });
  return {
    url, token, proc,
    port: Number(new URL(url).port),
    stderr: () => err + (out ? `\n[stdout!] ${out}` : ''),
    async stop(signal = 'SIGTERM') {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return exited;
    },
  };
}
