// A workspace laid out for attacks, beside an outside folder holding a canary.
import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from '../../src/testing/helpers.js';

/** Appears only outside the workspace: in file contents and in a file name. */
export const CANARY = 'CANARY-0ut51de-e2e';

export interface AttackTree {
  base: string;
  ws: string;
  out: string;
  cleanup: () => void;
}

function file(p: string, content = 'inside\n'): void {
  mkdirSync(path.dirname(p), { recursive: true });
  writeFileSync(p, content);
}

export function attackTree(): AttackTree {
  const { dir: base, cleanup } = tempDir('tg-e2e-');
  const ws = path.join(base, 'ws');
  const out = path.join(base, 'outside');
  file(path.join(out, 'secret.txt'), `${CANARY}\n`);
  file(path.join(out, `${CANARY}.txt`), `${CANARY}\n`);
  file(path.join(out, 'dir', 'secret.txt'), `${CANARY}\n`);
  for (const sib of ['ws-evil', 'ws2', 'wsX', "ws'", 'ws ', 'ws\t']) file(path.join(base, sib, 'x'), `${CANARY}\n`);
  file(path.join(ws, 'a.txt'), 'hello\n');
  file(path.join(ws, 'sub', 'b.txt'), 'bee\n');
  for (const odd of ['..test', "a'", 'b ', 'c\td', '%41', '%2e%2e/x.txt', 'e\u0301.txt']) file(path.join(ws, odd), `odd ${JSON.stringify(odd)}\n`);
  for (const s of ['.env', '.env.local', 'a/.ssh/id_rsa', 'x.pem', 'k.key', '.aws/credentials', '.netrc', '.npmrc', '.gnupg/x']) file(path.join(ws, s), `${CANARY} secret\n`);
  symlinkSync(out, path.join(ws, 'outlink'));
  symlinkSync(path.join(out, 'dir'), path.join(ws, 'outdirlink'));
  symlinkSync(path.join(out, 'secret.txt'), path.join(ws, 'outfile'));
  symlinkSync('../outside/secret.txt', path.join(ws, 'relout'));
  symlinkSync(path.join(ws, 'outfile'), path.join(ws, 'chain2'));
  symlinkSync(path.join(ws, 'chain2'), path.join(ws, 'chain1'));
  symlinkSync(path.join(out, 'nope'), path.join(ws, 'dangling'));
  symlinkSync('/dev/null', path.join(ws, 'devnull'));
  symlinkSync('/dev/zero', path.join(ws, 'devzero'));
  symlinkSync(path.join(ws, '.env'), path.join(ws, 'innocent.txt'));
  symlinkSync(path.join(ws, 'a', '.ssh'), path.join(ws, 'keys'));
  symlinkSync(base, path.join(ws, 'up'));
  linkSync(path.join(out, 'secret.txt'), path.join(ws, 'hard.txt'));
  execFileSync('mkfifo', [path.join(ws, 'fifo')]);
  return { base, ws, out, cleanup };
}

/** Paths that must never yield the canary, each named after the attack. */
export function attackPaths(t: AttackTree): Array<[string, string]> {
  return [
    ['prefix sibling', `${t.ws}-evil/x`],
    ['prefix sibling ws2', `${t.ws}2/x`],
    ['prefix sibling wsX', `${t.ws}X/x`],
    ['quote-suffixed sibling', `${t.ws}'/x`],
    ['space-suffixed sibling', `${t.ws} /x`],
    ['tab-suffixed sibling', `${t.ws}\t/x`],
    ["relative quote sibling", "../ws'/x"],
    ['relative space sibling', '../ws /x'],
    ['relative tab sibling', '../ws\t/x'],
    ['leading ..', '../outside/secret.txt'],
    ['middle ..', 'sub/../../outside/secret.txt'],
    ['./../', './../outside/secret.txt'],
    ['.. after a missing dir', 'missing/../outlink/secret.txt'],
    ['absolute outside', path.join(t.out, 'secret.txt')],
    ['absolute /etc/passwd', '/etc/passwd'],
    ['NUL byte', 'a.txt\0/../../outside/secret.txt'],
    ['percent-encoded ..', '%2e%2e/%2e%2e/outside/secret.txt'],
    ['percent-encoded slash', '..%2foutside%2fsecret.txt'],
    ['symlinked file out', 'outfile'],
    ['relative symlink out', 'relout'],
    ['symlink chain out', 'chain1'],
    ['dangling link out', 'dangling'],
    ['file under a symlinked dir', 'outlink/secret.txt'],
    ['symlink then .. (kernel semantics)', 'outdirlink/../secret.txt'],
    ['link to the parent', 'up/outside/secret.txt'],
    ['hard link to a file outside', 'hard.txt'],
    ['FIFO', 'fifo'],
    ['/dev/null through a link', 'devnull'],
    ['/dev/zero through a link', 'devzero'],
    ['.env', '.env'],
    ['.env.local', '.env.local'],
    ['.ssh key', 'a/.ssh/id_rsa'],
    ['.pem', 'x.pem'],
    ['.key', 'k.key'],
    ['.aws credentials', '.aws/credentials'],
    ['.netrc', '.netrc'],
    ['.npmrc', '.npmrc'],
    ['.gnupg', '.gnupg/x'],
    ['innocent link to .env', 'innocent.txt'],
    ['innocent dir link to .ssh', 'keys/id_rsa'],
    ['secret via sub/..', 'sub/../.env'],
  ];
}

/** Legitimate odd names: [path, expected content fragment]. */
export function oddNames(): Array<[string, string]> {
  return [['..test', '..test'], ["a'", "a'"], ['b ', 'b '], ['c\td', 'c\\td'], ['%41', '%41'], ['%2e%2e/x.txt', '%2e%2e/x.txt'], ['e\u0301.txt', 'e\u0301.txt']];
}
