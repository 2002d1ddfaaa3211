// Attacks on Workspace.resolve and the safe openers: every row is named after the attack it tries.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { isToolError } from '../core/errors.js';
import type { PathAccess, ResolvedPath } from '../core/types.js';
import { PathRules } from './path-rules.js';
import { openDir, openFileForRead } from './safe-open.js';
import { isWithin, Workspace } from './workspace.js';

const CANARY = 'CANARY-outside-7f3a';
const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'tg-ws-')));
const W = path.join(base, 'ws');
const OUT = path.join(base, 'outside');

function file(p: string, content = 'inside\n'): void {
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
const SOCK = path.join(W, 'sock');
let sockServer: Server;

const STATE = path.join(W, '.toolgate');
const POLICY = path.join(W, 'toolgate.yaml');
const rules = PathRules.withDefaults([], [], [STATE, POLICY]);
const ws = new Workspace([W], rules);

before(async () => {
  sockServer = createServer();
  await new Promise<void>((resolve) => sockServer.listen(SOCK, resolve));
});
after(() => {
  sockServer?.close();
  rmSync(base, { recursive: true, force: true });
});

type Outcome = { ok: true; rp: ResolvedPath } | { ok: false; code: string; message: string };

async function attempt(input: string, access: PathAccess = 'read', w: Workspace = ws): Promise<Outcome> {
  try {
    return { ok: true, rp: await w.resolve(input, access) };
  } catch (e) {
    if (!isToolError(e)) throw e;
    return { ok: false, code: e.code, message: e.message };
  }
}

/** Refused with `code`, and never a path outside the root. */
async function refused(input: string, access: PathAccess, code: string, w: Workspace = ws): Promise<void> {
  const r = await attempt(input, access, w);
  assert.ok(!r.ok, `${JSON.stringify(input)} (${access}) was admitted as ${r.ok ? r.rp.abs : ''}`);
  assert.equal(r.code, code, `${JSON.stringify(input)}: ${r.message}`);
}

/** Admitted, and its real path is `rel` under the root. */
async function admitted(input: string, access: PathAccess, rel: string, w: Workspace = ws): Promise<ResolvedPath> {
  const r = await attempt(input, access, w);
  assert.ok(r.ok, `${JSON.stringify(input)} (${access}) was refused: ${r.ok ? '' : `${r.code} ${r.message}`}`);
  assert.equal(r.rp.abs, rel === '' ? W : path.join(W, rel));
  assert.ok(isWithin(r.rp.abs, W));
  return r.rp;
}

const TRAVERSAL = 'PathTraversalBlocked';
const DENIED = 'PathDenied';

describe('escapes are refused', () => {
  const rows: Array<[string, string, PathAccess, string]> = [
    // prefix and look-alike siblings
    ['prefix sibling /ws-evil', `${W}-evil/x`, 'read', TRAVERSAL],
    ['prefix sibling /ws2', `${W}2/x`, 'read', TRAVERSAL],
    ['prefix sibling /wsX', `${W}X/x`, 'read', TRAVERSAL],
    ['prefix sibling directory itself', `${W}-evil`, 'list', TRAVERSAL],
    ["quote-suffixed sibling /ws'", `${W}'/x`, 'read', TRAVERSAL],
    ['space-suffixed sibling /ws ', `${W} /x`, 'read', TRAVERSAL],
    ['tab-suffixed sibling /ws\\t', `${W}\t/x`, 'read', TRAVERSAL],
    ['curly-quote sibling /ws’', `${W}\u2019/x`, 'read', TRAVERSAL],
    ["relative quote sibling ../ws'/x", "../ws'/x", 'read', TRAVERSAL],
    ['relative space sibling ../ws /x', '../ws /x', 'read', TRAVERSAL],
    ['relative tab sibling ../ws\\t/x', '../ws\t/x', 'read', TRAVERSAL],
    ['relative prefix sibling ../ws-evil/x', '../ws-evil/x', 'read', TRAVERSAL],
    ['new file in a quote sibling', "../ws'/new.txt", 'create', TRAVERSAL],
    // `..` in every position
    ['leading ..', '../outside/secret.txt', 'read', TRAVERSAL],
    ['bare ..', '..', 'list', TRAVERSAL],
    ['bare ../', '../', 'list', TRAVERSAL],
    ['middle ..', 'sub/../../outside/secret.txt', 'read', TRAVERSAL],
    ['trailing ..', 'sub/..//..', 'list', TRAVERSAL],
    ['sub/../../x', 'sub/../../x', 'create', TRAVERSAL],
    ['./../', './../outside/secret.txt', 'read', TRAVERSAL],
    ['deep .. chain', 'sub/deeper/../../../outside/secret.txt', 'read', TRAVERSAL],
    ['.. past the file system root', '../../../../../../../../../../etc/passwd', 'read', TRAVERSAL],
    ['.. through a missing directory', 'nope/../../outside/secret.txt', 'read', TRAVERSAL],
    ['.. after a missing component back onto a link out', 'missing/../outlink/new.txt', 'create', TRAVERSAL],
    ['.. after a missing component onto a file out', 'missing/../outlink/secret.txt', 'read', TRAVERSAL],
    ['.. after two missing components', 'm1/m2/../../outdirlink/new.txt', 'write', TRAVERSAL],
    ['.. through a file', 'a.txt/../../outside/secret.txt', 'read', TRAVERSAL],
    ['absolute path with .. back out', `${W}/sub/../../outside/secret.txt`, 'read', TRAVERSAL],
    // absolute paths outside
    ['absolute outside', path.join(OUT, 'secret.txt'), 'read', TRAVERSAL],
    ['absolute /etc/passwd', '/etc/passwd', 'read', TRAVERSAL],
    ['absolute /', '/', 'list', TRAVERSAL],
    ['absolute parent of the root', base, 'list', TRAVERSAL],
    ['absolute new file outside', path.join(OUT, 'new.txt'), 'create', TRAVERSAL],
    ['double slash absolute', `//${OUT.slice(1)}/secret.txt`, 'read', TRAVERSAL],
    // NUL bytes
    ['NUL byte truncation', 'a.txt\0../../outside/secret.txt', 'read', TRAVERSAL],
    ['NUL byte alone', '\0', 'read', TRAVERSAL],
    ['NUL byte in an absolute path', `${OUT}/secret.txt\0`, 'read', TRAVERSAL],
    // symlinks out
    ['symlinked file pointing out', 'outfile', 'read', TRAVERSAL],
    ['relative symlink pointing out', 'relout', 'read', TRAVERSAL],
    ['symlinked dir pointing out', 'outlink', 'list', TRAVERSAL],
    ['file through a symlinked dir', 'outlink/secret.txt', 'read', TRAVERSAL],
    ['symlink chain pointing out', 'chain1', 'read', TRAVERSAL],
    ['dangling link pointing out', 'dangling', 'read', TRAVERSAL],
    ['write through a dangling link pointing out', 'dangling', 'create', TRAVERSAL],
    ['symlink loop', 'loop1', 'read', TRAVERSAL],
    ['link to the parent of the root', 'up/outside/secret.txt', 'read', TRAVERSAL],
    ['link to a prefix sibling', 'evil/x', 'read', TRAVERSAL],
    ['link to /', 'slash/etc/passwd', 'read', TRAVERSAL],
    ['link to /etc/passwd', 'passwd', 'read', TRAVERSAL],
    ['link to /dev/null', 'devnull', 'read', TRAVERSAL],
    ['link then .. (kernel: parent of the target)', 'outdirlink/../secret.txt', 'read', TRAVERSAL],
    ['link then .. then back into the root name', 'outdirlink/../../ws-evil/x', 'read', TRAVERSAL],
    ['new file under a symlinked parent pointing out', 'outlink/new.txt', 'create', TRAVERSAL],
    ['new nested dirs under a symlinked parent pointing out', 'outlink/n1/n2/new.txt', 'create', TRAVERSAL],
    ['write an existing file through a symlinked parent', 'outlink/secret.txt', 'write', TRAVERSAL],
    ['delete through a symlinked parent', 'outdirlink/secret.txt', 'delete', TRAVERSAL],
    // special files
    ['FIFO', 'fifo', 'read', DENIED],
    ['symlink to a FIFO', 'fifolink', 'read', DENIED],
    ['socket', 'sock', 'read', DENIED],
  ];
  for (const [name, input, access, code] of rows) {
    test(name, () => refused(input, access, code));
  }
});

describe('secrets (paths.deny) are refused for every access', () => {
  const secrets = ['.env', '.env.local', 'a/.ssh/id_rsa', 'x.pem', 'k.key', '.aws/credentials', '.netrc', '.npmrc', '.gnupg/x', 'deep/er/.env'];
  for (const s of secrets) {
    for (const access of ['read', 'write', 'create', 'delete'] as const) {
      test(`${access} ${s}`, () => refused(s, access, DENIED));
    }
  }
  const rows: Array<[string, string, PathAccess]> = [
    ['absolute path to a secret', path.join(W, '.env'), 'read'],
    ['secret reached through sub/..', 'sub/../.env', 'read'],
    ['secret reached through ./', './.env', 'read'],
    ['secret reached through a doubled slash', 'a//.ssh//id_rsa', 'read'],
    ['secret reached through an inside dir link and ..', 'inlink/../.env', 'read'],
    ['innocent-named symlink to .env', 'innocent.txt', 'read'],
    ['innocent-named symlink to a key file', 'notes.md', 'read'],
    ['innocent-named symlink to the .ssh directory', 'keys', 'list'],
    ['file inside a secret dir through an innocent dir link', 'keys/id_rsa', 'read'],
    ['new file inside a secret dir through an innocent link', 'keys/authorized_keys', 'create'],
    ['secret-named symlink to an innocent file', '.env.example', 'read'],
    ['listing a secret directory', 'a/.ssh', 'list'],
    ['searching a secret directory', '.aws', 'search'],
    ['reading a secret directory as a path', '.gnupg', 'read'],
    ['creating a new .env', 'sub/.env', 'create'],
    ['creating a new key in a new .ssh dir', 'newdir/.ssh/id_ed25519', 'create'],
    ['creating a .env.production', '.env.production', 'create'],
  ];
  for (const [name, input, access] of rows) test(name, () => refused(input, access, DENIED));
});

describe('protected paths are readable but never written, created or deleted', () => {
  const protectedPaths = ['.git/config', '.git/hooks/pre-commit', '.bashrc', '.zshrc', '.profile', '.bash_profile', '.gitconfig', '.mcp.json', '.claude/settings.json', '.cursor/mcp.json', '.vscode/settings.json', '.idea/x.xml', '.codex/config.toml', '.gemini/settings.json', '.toolgate/audit.jsonl', 'toolgate.yaml'];
  for (const p of protectedPaths) {
    test(`read ${p}`, () => admitted(p, 'read', p).then(() => undefined));
    for (const access of ['write', 'create', 'delete'] as const) test(`${access} ${p}`, () => refused(p, access, DENIED));
  }
  const rows: Array<[string, string, PathAccess]> = [
    ['new git hook', '.git/hooks/post-checkout', 'create'],
    ['new file in .claude', '.claude/commands/evil.md', 'create'],
    ['new file in the state dir', '.toolgate/runs/x.txt', 'create'],
    ['the state dir itself', '.toolgate', 'delete'],
    ['the state dir through an innocent link', 'state/audit.jsonl', 'write'],
    ['the policy file by absolute path', POLICY, 'write'],
    ['git config through a dir link', 'gitdir/config', 'write'],
    ['.bashrc through an innocent file link', 'rc.txt', 'write'],
    ['.bashrc through sub/..', 'sub/../.bashrc', 'write'],
    ['a protected dir under a new dir', 'pkg/.vscode/settings.json', 'create'],
    ['anything git reads: .git/HEAD', '.git/HEAD', 'write'],
    ['a submodule config', '.git/modules/m/config', 'create'],
    ['a .git file pointing git elsewhere', 'sub/.git', 'create'],
    ['another toolgate state dir', 'old/.toolgate/audit.jsonl', 'create'],
  ];
  for (const [name, input, access] of rows) test(name, () => refused(input, access, DENIED));
  test('an ordinary file beside them stays writable', () => admitted('.gitignore', 'create', '.gitignore').then(() => undefined));
});

describe('the state dir and policy file stay protected when named through a symlink', () => {
  test('state dir and policy given through a link to the root', async () => {
    const link = path.join(base, 'wslink');
    symlinkSync(W, link);
    const r = PathRules.withDefaults([], [], [path.join(link, 'custom-state'), path.join(link, 'toolgate.yaml')]);
    const w = new Workspace([W], r);
    await refused('toolgate.yaml', 'write', DENIED, w);
    await refused('custom-state/audit.jsonl', 'create', DENIED, w);
    await refused(path.join(link, 'toolgate.yaml'), 'write', DENIED, w);
    await admitted('toolgate.yaml', 'read', 'toolgate.yaml', w);
  });
});

describe('legitimate odd names still work', () => {
  const rows: Array<[string, string, PathAccess, string]> = [
    ['a name starting with two dots', '..test', 'read', '..test'],
    ['a trailing quote', "a'", 'read', "a'"],
    ['a trailing space', 'b ', 'read', 'b '],
    ['a tab inside', 'c\td', 'read', 'c\td'],
    ['percent-encoding is a literal name', '%41', 'read', '%41'],
    ['%2e%2e is a directory name, not ..', '%2e%2e/x.txt', 'read', '%2e%2e/x.txt'],
    ['a backslash is a literal character', 'a\\b', 'read', 'a\\b'],
    ['a leading dash', '-rf', 'read', '-rf'],
    ['a tilde is not $HOME', '~', 'read', '~'],
    ['NFD name as stored', 'e\u0301.txt', 'read', 'e\u0301.txt'],
    ['NFC name as stored', '\u00e9\u00e9.txt', 'read', '\u00e9\u00e9.txt'],
    ['the root as ""', '', 'list', ''],
    ['the root as .', '.', 'list', ''],
    ['the root as ./', './', 'list', ''],
    ['the root by absolute path', W, 'list', ''],
    ['the root with a trailing slash', `${W}/`, 'list', ''],
    ['a file by absolute path', path.join(W, 'a.txt'), 'read', 'a.txt'],
    ['sub/.. stays inside', 'sub/../a.txt', 'read', 'a.txt'],
    ['inside dir link', 'inlink/b.txt', 'read', 'sub/b.txt'],
    ['inside dir link then .. (kernel: parent of sub)', 'inlink/../a.txt', 'read', 'a.txt'],
    ['inside file link resolves to its target', 'alias.txt', 'read', 'a.txt'],
    ['.env.example-like names that are not secrets', 'a.txt', 'read', 'a.txt'],
    ['a new file', 'new.txt', 'create', 'new.txt'],
    ['a new file in new dirs', 'n1/n2/new.txt', 'create', 'n1/n2/new.txt'],
    ['a new file through an inside link', 'inlink/new.txt', 'create', 'sub/new.txt'],
    ['a new file after a missing dir and ..', 'missing/../new.txt', 'create', 'new.txt'],
    ['a new percent-encoded name', '%2e%2e/new.txt', 'create', '%2e%2e/new.txt'],
    ['a new name with a trailing space', 'new ', 'create', 'new '],
    ['.. inside a new name', 'x..y', 'create', 'x..y'],
  ];
  for (const [name, input, access, rel] of rows) test(name, () => admitted(input, access, rel).then(() => undefined));

  test('results show workspace-relative / paths, "." for the root', async () => {
    assert.equal((await admitted('sub/deeper/c.txt', 'read', 'sub/deeper/c.txt')).display, 'sub/deeper/c.txt');
    assert.equal((await admitted('', 'list', '')).display, '.');
    const rp = await admitted('sub/../a.txt', 'read', 'a.txt');
    assert.equal(rp.relToRoot, 'a.txt');
    assert.equal(rp.input, 'sub/../a.txt');
  });

  test('Unicode is not folded: NFC does not find the NFD file', async () => {
    const r = await attempt('\u00e9.txt', 'read');
    assert.ok(r.ok);
    assert.equal(r.rp.exists, false);
  });

  test('a missing file is admitted as missing, not found elsewhere', async () => {
    const rp = await admitted('nope.txt', 'read', 'nope.txt');
    assert.equal(rp.exists, false);
    assert.equal(rp.kind, 'missing');
  });

  test('a dangling link inside the root is not followed', () => refused('dangling-in', 'create', TRAVERSAL));
});

describe('openFileForRead', () => {
  test('reads an admitted file', async () => {
    const rp = await admitted('a.txt', 'read', 'a.txt');
    const { fh, stat } = await openFileForRead(rp, ws);
    try {
      assert.equal((await fh.readFile('utf8')), 'inside\n');
      assert.ok(stat.isFile());
    } finally {
      await fh.close();
    }
  });

  test('a hard link to a file outside is refused', async () => {
    const rp = await admitted('hard.txt', 'read', 'hard.txt');
    await assert.rejects(openFileForRead(rp, ws), (e: unknown) => isToolError(e) && e.code === DENIED && /hard link/.test(e.message));
  });

  test('a hard link is allowed when the policy says allow_hardlinks', async () => {
    const w = new Workspace([W], PathRules.withDefaults([], [], [], true));
    const rp = await w.resolve('hard.txt', 'read');
    const { fh } = await openFileForRead(rp, w);
    await fh.close();
  });

  test('a FIFO does not hang the open and is refused', async () => {
    const fifo = path.join(W, 'fifo');
    const rp: ResolvedPath = { input: 'fifo', abs: fifo, display: 'fifo', rootIndex: 0, relToRoot: 'fifo', exists: true, kind: 'file' };
    await assert.rejects(openFileForRead(rp, ws), (e: unknown) => isToolError(e) && e.code === DENIED);
  });

  test('a socket is refused', async () => {
    const rp: ResolvedPath = { input: 'sock', abs: SOCK, display: 'sock', rootIndex: 0, relToRoot: 'sock', exists: true, kind: 'file' };
    await assert.rejects(openFileForRead(rp, ws), (e: unknown) => isToolError(e) && (e.code === DENIED || e.code === 'IOError'));
  });

  test('a file swapped for a symlink after the check is refused (O_NOFOLLOW)', async () => {
    file(path.join(W, 'swap.txt'));
    const rp = await admitted('swap.txt', 'read', 'swap.txt');
    rmSync(path.join(W, 'swap.txt'));
    symlinkSync(path.join(OUT, 'secret.txt'), path.join(W, 'swap.txt'));
    await assert.rejects(openFileForRead(rp, ws), (e: unknown) => isToolError(e) && e.code === TRAVERSAL);
  });

  test('a parent directory swapped for a symlink after the check is refused (descriptor verified)', async () => {
    file(path.join(W, 'swapdir', 'secret.txt'));
    const rp = await admitted('swapdir/secret.txt', 'read', 'swapdir/secret.txt');
    rmSync(path.join(W, 'swapdir'), { recursive: true });
    symlinkSync(OUT, path.join(W, 'swapdir'));
    await assert.rejects(openFileForRead(rp, ws), (e: unknown) => isToolError(e) && e.code === TRAVERSAL);
  });

  test('a directory swapped for a symlink is refused by openDir', async () => {
    mkdirSync(path.join(W, 'swapdir2'));
    const rp = await admitted('swapdir2', 'list', 'swapdir2');
    rmSync(path.join(W, 'swapdir2'), { recursive: true });
    symlinkSync(path.join(OUT, 'dir'), path.join(W, 'swapdir2'));
    await assert.rejects(openDir(rp, ws), (e: unknown) => isToolError(e) && e.code === TRAVERSAL);
  });

  test('a directory is not read as a file', async () => {
    const rp = await admitted('sub', 'read', 'sub');
    await assert.rejects(openFileForRead(rp, ws), (e: unknown) => isToolError(e) && e.code === 'InvalidArguments');
  });
});

describe('several roots', () => {
  const second = path.join(base, 'ws2');
  const multi = new Workspace([W, second], rules);
  test('an absolute path in the second root is admitted with its root index', async () => {
    const rp = await multi.resolve(path.join(second, 'x'), 'read');
    assert.equal(rp.rootIndex, 1);
    assert.equal(rp.relToRoot, 'x');
  });
  test('relative paths are relative to the first root', async () => {
    const rp = await multi.resolve('a.txt', 'read');
    assert.equal(rp.rootIndex, 0);
  });
  test('a prefix sibling of the second root is still outside', async () => {
    await refused(`${W}-evil/x`, 'read', TRAVERSAL, multi);
    await refused(`${second}X/x`, 'read', TRAVERSAL, multi);
  });
  test('deny rules apply in every root', async () => {
    file(path.join(second, '.env'), 'SECRET');
    await refused(path.join(second, '.env'), 'read', DENIED, multi);
  });
});

describe('Workspace.intersect: client roots narrow the ceiling, never widen it', () => {
  const rows: Array<[string, string[] | null, string[] | null, string[]]> = [
    ['narrowing to a subdirectory', ['/w'], ['/w/sub'], ['/w/sub']],
    ['a client root above the ceiling keeps only the ceiling', ['/w'], ['/'], ['/w']],
    ['a client root beside the ceiling is dropped', ['/w'], ['/other'], []],
    ['a prefix sibling client root is dropped', ['/w'], ['/w-evil', '/w2'], []],
    ['disjoint roots give an empty workspace', ['/w'], ['/x', '/y'], []],
    ['the same root', ['/w'], ['/w'], ['/w']],
    ['no client roots: the ceiling', ['/w'], null, ['/w']],
    ['no ceiling: the client roots', null, ['/c'], ['/c']],
    ['neither: nothing', null, null, []],
    ['several ceilings, one client root in each', ['/a', '/b'], ['/a/x', '/b/y', '/c'], ['/a/x', '/b/y']],
  ];
  for (const [name, ceiling, client, expected] of rows) {
    test(name, () => assert.deepEqual(Workspace.intersect(ceiling, client), expected));
  }
  test('an empty workspace fails with a clear error, never defaulting somewhere', async () => {
    const empty = new Workspace(Workspace.intersect(['/w'], ['/x']), rules);
    await assert.rejects(empty.resolve('a.txt', 'read'), (e: unknown) => isToolError(e) && /workspace/.test(e.message));
  });
});

describe('isWithin compares whole components', () => {
  const rows: Array<[string, string, boolean]> = [
    ['/ws', '/ws', true], ['/ws/a', '/ws', true], ['/ws-evil', '/ws', false], ['/ws2/a', '/ws', false],
    ["/ws'", '/ws', false], ['/ws ', '/ws', false], ['/w', '/ws', false], ['/anything', '/', true],
  ];
  for (const [child, root, want] of rows) test(`${JSON.stringify(child)} in ${root}: ${want}`, () => assert.equal(isWithin(child, root), want));
});

describe('paths.deny patterns written as folders', () => {
  const rows: Array<[string, string, string]> = [
    ['a trailing slash', 'private/', 'private/notes.txt'],
    ['a bare folder name', 'private', 'sub/private/notes.txt'],
    ['a leading ./', './private/**', 'private/notes.txt'],
    ['a leading /', '/private/**', 'private/notes.txt'],
    ['a rooted file', 'config/prod.yaml', 'config/prod.yaml'],
  ];
  for (const [name, pattern, rel] of rows) {
    test(name, () => {
      const r = PathRules.withDefaults([pattern]);
      assert.ok(r.isDenied(rel, `/w/${rel}`), `${pattern} does not deny ${rel}`);
      assert.ok(!r.isDenied('public/a.txt', '/w/public/a.txt'));
    });
  }
});
