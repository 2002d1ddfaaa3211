import { spawn } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';
import { RgUnavailable } from '../grep/rg.js';

/**
 * `rg --files` streamed: every regular file under `cwd` that ripgrep's walk keeps (hidden
 * names and ignore files as asked), plus the symbolic links it skips. rg never lists a link
 * without following it; with --debug it logs each non-directory entry it leaves out with its
 * file type ("ignoring ./x: failed to pass subject filter: file type: … mode: N"), after its
 * ignore and hidden rules ran — links to folders are not logged (rg asks the file system
 * whether the link names a folder), which is why glob never returns those with either engine.
 */

export interface RgListOptions {
  bin: string;
  cwd: string;
  args: string[];
  signal?: AbortSignal;
  deadline: number;
  /** A regular file, relative to cwd. */
  onFile(rel: string): void;
  /** A symbolic link rg did not follow (not one to a folder), relative to cwd. */
  onLink(rel: string): void;
}

export interface RgListResult {
  timedOut: boolean;
  aborted: boolean;
}

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
const SKIPPED = /^DEBUG\|rg::subject\|[^\n]*?: ignoring (.*): failed to pass subject filter: file type: Some\(FileType\(FileType \{ mode: (\d+) \}\)\)/;

function stripDot(p: string): string {
  return p.startsWith('./') ? p.slice(2) : p;
}

/** The flags every glob listing starts with (no config file, no global or parent ignore files). */
export const BASE_ARGS = ['--no-config', '--no-require-git', '--no-ignore-global', '--no-ignore-parent', '--no-ignore-exclude', '--no-messages', '--files', '--null', '--debug'];

export function rgList(o: RgListOptions): Promise<RgListResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(o.bin, [...BASE_ARGS, ...o.args, '--', '.'], { cwd: o.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let timedOut = false;
    let aborted = false;
    let done = false;
    const kill = () => { if (!done) child.kill('SIGKILL'); };
    const timer = setTimeout(() => { timedOut = true; kill(); }, Math.max(0, o.deadline - Date.now()));
    const onAbort = () => { aborted = true; kill(); };
    o.signal?.addEventListener('abort', onAbort, { once: true });
    if (o.signal?.aborted) onAbort();

    const out = new StringDecoder('utf8');
    let rest = '';
    child.stdout.on('data', (chunk: Buffer) => {
      const text = rest + out.write(chunk);
      let start = 0;
      for (let i = text.indexOf('\0'); i >= 0; i = text.indexOf('\0', start)) {
        if (i > start) o.onFile(stripDot(text.slice(start, i)));
        start = i + 1;
      }
      rest = text.slice(start);
    });
    const err = new StringDecoder('utf8');
    let line = '';
    const errLine = (l: string) => {
      if (!l.startsWith('DEBUG|rg::subject')) return;
      const m = SKIPPED.exec(l);
      if (m && (Number(m[2]) & S_IFMT) === S_IFLNK) o.onLink(stripDot(m[1]!));
    };
    child.stderr.on('data', (chunk: Buffer) => {
      const text = line + err.write(chunk);
      let start = 0;
      for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', start)) {
        errLine(text.slice(start, i));
        start = i + 1;
      }
      line = text.slice(start);
    });
    child.on('error', (e) => {
      done = true;
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      reject(new RgUnavailable(`ripgrep could not be started: ${(e as NodeJS.ErrnoException).code ?? e.message}`));
    });
    child.on('close', () => {
      done = true;
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      if (!timedOut && !aborted) {
        if (rest) o.onFile(stripDot(rest));
        if (line) errLine(line);
      }
      resolve({ timedOut, aborted });
    });
  });
}
