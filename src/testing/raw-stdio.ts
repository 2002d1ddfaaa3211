import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CLI, tempDir } from './helpers.js';

export type Msg = Record<string, any>;

/**
 * The built server over stdio, spoken to line by line as a client nobody here wrote would:
 * every line it prints must be JSON; `next` picks the next line that matches.
 */
export class RawStdio {
  private buf = '';
  private readonly lines: unknown[] = [];
  private waiters: Array<() => void> = [];
  readonly child: ChildProcessWithoutNullStreams;

  constructor(dir: string, state: string, args: string[] = []) {
    this.child = spawn(process.execPath, [CLI, '--workspace', dir, ...args], {
      env: { ...process.env, TOOLGATE_LOG_LEVEL: 'warn', XDG_STATE_HOME: path.join(state, 's'), XDG_RUNTIME_DIR: path.join(state, 'r') },
    });
    this.child.stdout.on('data', (c: Buffer) => {
      this.buf += c.toString();
      let nl: number;
      while ((nl = this.buf.indexOf('\n')) !== -1) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        this.lines.push(JSON.parse(line)); // every line on stdout must be JSON
        this.waiters.splice(0).forEach((w) => w());
      }
    });
  }

  write(raw: string) { this.child.stdin.write(raw + '\n'); }
  send(m: unknown) { this.write(JSON.stringify(m)); }

  /** The next line from the server that satisfies `pick` (others stay queued). */
  async next(pick: (v: any) => boolean = () => true, ms = 15_000): Promise<any> {
    const deadline = Date.now() + ms;
    for (;;) {
      const i = this.lines.findIndex(pick);
      if (i !== -1) return this.lines.splice(i, 1)[0];
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no matching line from the server; queued: ${JSON.stringify(this.lines).slice(0, 500)}`);
      await new Promise<void>((r) => { const t = setTimeout(r, left); this.waiters.push(() => { clearTimeout(t); r(); }); });
    }
  }

  queued(): unknown[] { return [...this.lines]; }

  async init(version: string): Promise<Msg> {
    this.send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    const r = await this.next((v) => v.id === 'init');
    this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return r;
  }

  close() { this.child.kill(); }
}


/** A temp dir holding a workspace `ws` with a.txt ("alpha\nbeta\n"); state for XDG dirs goes in `dir`. */
export function rawFixture(prefix = 'tg-raw-') {
  const { dir, cleanup } = tempDir(prefix);
  const ws = path.join(dir, 'ws');
  mkdirSync(ws);
  writeFileSync(path.join(ws, 'a.txt'), 'alpha\nbeta\n');
  return { dir, ws, cleanup };
}

/** Picks the answer to request `id` (not a batch). */
export const byId = (id: unknown) => (v: Msg) => !Array.isArray(v) && v.id === id;
