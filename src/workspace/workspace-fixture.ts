// The tree the workspace tests attack (links out, secrets, protected names, odd names, special
// files), shared by workspace.test.ts and workspace-more.test.ts: each file builds its own copy.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before } from 'node:test';
import { isToolError } from '../core/errors.js';
import type { PathAccess, ResolvedPath } from '../core/types.js';
import { PathRules } from './path-rules.js';
import { isWithin, Workspace } from './workspace.js';

export const CANARY = 'CANARY-outside-7f3a';
export const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'tg-ws-')));
export const W = path.join(base, 'ws');
export const OUT = path.join(base, 'outside');

export function file(p: string, content = 'inside\n'): void {
  mkdirSync(path.dirname(p), { recursive: true });
  writeFileSync(p, content);
}

// The tree under attack.
file(path.join(OUT, 'secret.txt'), CANARY);
file(path.join(OUT, 'dir', 'secret.txt'), CANARY);
for (const sib of ['ws-evil', 'ws2', 'wsX', "ws'", 'ws ', 'ws\t', 'ws\u2019']) file(path.join(base, sib, 'x'), CANARY);
file(path.join(W, 'a.txt'));
file(path.join(W, 'sub', 'b.txt'));
file(path.join(W, 'sub', 'deeper', 'c.txt'));
for (const odd of ['..test', "a'", 'b ', 'c\td', '%41', 'e\u0301.txt', '\u00e9\u00e9.txt', '%2e%2e/x.txt', 'a\\b', '-rf', '~']) file(path.join(W, odd));
for (const secret of ['.env', '.env.local', 'a/.ssh/id_rsa', 'x.pem', 'k.key', '.aws/credentials', '.netrc', '.npmrc', '.gnupg/x', 'deep/er/.env']) file(path.join(W, secret), 'SECRET');
for (const prot of ['.git/config', '.git/hooks/pre-commit', '.bashrc', '.zshrc', '.profile', '.bash_profile', '.gitconfig', '.mcp.json', '.claude/settings.json', '.cursor/mcp.json', '.vscode/settings.json', '.idea/x.xml', '.codex/config.toml', '.gemini/settings.json']) file(path.join(W, prot));
file(path.join(W, '.toolgate', 'audit.jsonl'));
file(path.join(W, 'toolgate.yaml'), 'version: 1\n');
file(path.join(W, '.git', 'HEAD'));
// Links pointing out.
symlinkSync(OUT, path.join(W, 'outlink'));
symlinkSync(path.join(OUT, 'dir'), path.join(W, 'outdirlink'));
symlinkSync(path.join(OUT, 'secret.txt'), path.join(W, 'outfile'));
symlinkSync('../outside/secret.txt', path.join(W, 'relout'));
symlinkSync(path.join(W, 'outfile'), path.join(W, 'chain2'));
symlinkSync(path.join(W, 'chain2'), path.join(W, 'chain1'));
symlinkSync(path.join(OUT, 'does-not-exist'), path.join(W, 'dangling'));
symlinkSync(path.join(W, 'not-yet'), path.join(W, 'dangling-in'));
symlinkSync(path.join(W, 'loop2'), path.join(W, 'loop1'));
symlinkSync(path.join(W, 'loop1'), path.join(W, 'loop2'));
symlinkSync(base, path.join(W, 'up'));
symlinkSync('/', path.join(W, 'slash'));
symlinkSync('/dev/null', path.join(W, 'devnull'));
symlinkSync('/etc/passwd', path.join(W, 'passwd'));
symlinkSync(path.join(base, 'ws-evil'), path.join(W, 'evil'));
// Links inside, some with innocent names pointing at secrets.
symlinkSync(path.join(W, 'sub'), path.join(W, 'inlink'));
symlinkSync(path.join(W, 'a.txt'), path.join(W, 'alias.txt'));
symlinkSync(path.join(W, '.env'), path.join(W, 'innocent.txt'));
symlinkSync(path.join(W, 'a', '.ssh'), path.join(W, 'keys'));
symlinkSync(path.join(W, 'a', '.ssh', 'id_rsa'), path.join(W, 'notes.md'));
symlinkSync(path.join(W, 'a.txt'), path.join(W, '.env.example'));
symlinkSync(path.join(W, '.git'), path.join(W, 'gitdir'));
symlinkSync(path.join(W, '.bashrc'), path.join(W, 'rc.txt'));
symlinkSync(path.join(W, '.toolgate'), path.join(W, 'state'));
// A hard link to a file outside (same file system: both under the temp dir).
linkSync(path.join(OUT, 'secret.txt'), path.join(W, 'hard.txt'));
// Special files.
execFileSync('mkfifo', [path.join(W, 'fifo')]);
symlinkSync(path.join(W, 'fifo'), path.join(W, 'fifolink'));
export const SOCK = path.join(W, 'sock');
let sockServer: Server;

export const STATE = path.join(W, '.toolgate');
export const POLICY = path.join(W, 'toolgate.yaml');
export const rules = PathRules.withDefaults([], [], [STATE, POLICY]);
export const ws = new Workspace([W], rules);

before(async () => {
  sockServer = createServer();
  await new Promise<void>((resolve) => sockServer.listen(SOCK, resolve));
});
after(() => {
  sockServer?.close();
  rmSync(base, { recursive: true, force: true });
});

export type Outcome = { ok: true; rp: ResolvedPath } | { ok: false; code: string; message: string };

export async function attempt(input: string, access: PathAccess = 'read', w: Workspace = ws): Promise<Outcome> {
  try {
    return { ok: true, rp: await w.resolve(input, access) };
  } catch (e) {
    if (!isToolError(e)) throw e;
    return { ok: false, code: e.code, message: e.message };
  }
}

/** Refused with `code`, and never a path outside the root. */
export async function refused(input: string, access: PathAccess, code: string, w: Workspace = ws): Promise<void> {
  const r = await attempt(input, access, w);
  assert.ok(!r.ok, `${JSON.stringify(input)} (${access}) was admitted as ${r.ok ? r.rp.abs : ''}`);
  assert.equal(r.code, code, `${JSON.stringify(input)}: ${r.message}`);
}

/** Admitted, and its real path is `rel` under the root. */
export async function admitted(input: string, access: PathAccess, rel: string, w: Workspace = ws): Promise<ResolvedPath> {
  const r = await attempt(input, access, w);
  assert.ok(r.ok, `${JSON.stringify(input)} (${access}) was refused: ${r.ok ? '' : `${r.code} ${r.message}`}`);
  assert.equal(r.rp.abs, rel === '' ? W : path.join(W, rel));
  assert.ok(isWithin(r.rp.abs, W));
  return r.rp;
}

export const TRAVERSAL = 'PathTraversalBlocked';
export const DENIED = 'PathDenied';

