import { availableParallelism } from 'node:os';
import { StringDecoder } from 'node:string_decoder';
import { RgUnavailable } from '../grep/rg.js';
import { FIFO_REASON, watchFifoOpens } from '../grep/rg-watch.js';
import { spawnRg, startFailure } from '../grep/rg-spawn.js';

/**
 * The listing the ripgrep glob engine runs, streamed, NUL-separated: `rg --files` (every regular
 * file ripgrep's walk keeps, with its ignore and hidden rules). The symbolic links, which rg never
 * lists without following them, come from the workspace's LinkCache (walk/link-cache.ts).
 */

export interface ListOptions {
  cwd: string;
  signal?: AbortSignal;
  deadline: number;
  /** One listed path, relative to cwd (a leading "./" removed). */
  onItem(rel: string): void;
}

export interface ListResult {
  timedOut: boolean;
  aborted: boolean;
}

/**
 * ripgrep's walker threads for a listing: all cores but one, which toolgate's own thread needs to
 * judge and re-check what rg lists as it arrives. On 2 cores that is one: a second walker thread
 * was measured to double rg's CPU time for no gain in wall time (drivers/ of the Linux tree,
 * 9,601 matches: 73 vs 38 ms of CPU, 42 vs 38 ms wall), CPU the re-check then lacks.
 */
export const RG_LIST_THREADS = Math.max(1, Math.min(8, availableParallelism() - 1));

/** The flags every glob listing starts with (no config file, no global, parent or .git/info/exclude ignore files). */
export const RG_BASE_ARGS = ['--no-config', '--no-require-git', '--no-ignore-global', '--no-ignore-parent', '--no-ignore-exclude', '--no-messages', `--threads=${RG_LIST_THREADS}`, '--files', '--null'];

function stripDot(p: string): string {
  return p.startsWith('./') ? p.slice(2) : p;
}

/** `rg --files --null` with the extra flags, over '.'. */
export function rgFiles(bin: string, args: string[], o: ListOptions): Promise<ListResult> {
  return listing(bin, [...RG_BASE_ARGS, ...args, '--', '.'], o, 'ripgrep');
}

function listing(bin: string, args: string[], o: ListOptions, what: string): Promise<ListResult> {
  return new Promise((resolve, reject) => {
    const child = spawnRg(bin, args, { cwd: o.cwd, stderr: false });
    let timedOut = false;
    let aborted = false;
    let done = false;
    const kill = () => { if (!done) child.kill(); };
    const timer = setTimeout(() => { timedOut = true; kill(); }, Math.max(0, o.deadline - Date.now()));
    const onAbort = () => { aborted = true; kill(); };
    o.signal?.addEventListener('abort', onAbort, { once: true });
    if (o.signal?.aborted) onAbort();
    const fifo = watchFifoOpens(() => child.pid, kill);

    const dec = new StringDecoder('utf8');
    let rest = '';
    child.stdout.on('data', (chunk: Buffer) => {
      const text = rest + dec.write(chunk);
      let start = 0;
      for (let i = text.indexOf('\0'); i >= 0; i = text.indexOf('\0', start)) {
        if (i > start) o.onItem(stripDot(text.slice(start, i)));
        start = i + 1;
      }
      rest = text.slice(start);
    });
    const finish = () => {
      done = true;
      clearTimeout(timer);
      fifo.stop();
      o.signal?.removeEventListener('abort', onAbort);
    };
    child.on('error', (e) => {
      finish();
      reject(new RgUnavailable(startFailure(what, e)));
    });
    child.on('close', () => {
      finish();
      if (fifo.blocked && !aborted) return reject(new RgUnavailable(FIFO_REASON));
      if (!timedOut && !aborted && rest) o.onItem(stripDot(rest));
      resolve({ timedOut, aborted });
    });
  });
}
