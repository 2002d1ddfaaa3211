// Opening admitted paths, several roots, client roots, component-wise containment, deny patterns written as folders.
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { isToolError } from '../core/errors.js';
import type { ResolvedPath } from '../core/types.js';
import { PathRules } from './path-rules.js';
import { openDir, openFileForRead } from './safe-open.js';
import { isWithin, Workspace } from './workspace.js';
import { base, W, OUT, file, SOCK, rules, ws, refused, admitted, TRAVERSAL, DENIED } from './workspace-fixture.js';

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
