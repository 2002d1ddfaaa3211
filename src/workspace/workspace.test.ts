// Attacks on Workspace.resolve and the safe openers: every row is named after the attack it tries.
import assert from 'node:assert/strict';
import { symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import type { PathAccess } from '../core/types.js';
import { PathRules } from './path-rules.js';
import { Workspace } from './workspace.js';
import { base, W, OUT, file, POLICY, ws, attempt, refused, admitted, TRAVERSAL, DENIED } from './workspace-fixture.js';

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
