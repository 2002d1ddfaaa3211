// The small-file path of atomicWrite (synchronous steps around one async fdatasync) against the
// asynchronous one (a bigger file): the same result and the same refusals, nothing left behind.
import assert from 'node:assert/strict';
import { chmodSync, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { isToolError } from '../core/errors.js';
import { tempDir } from '../testing/helpers.js';
import { atomicWrite } from './atomic-write.js';
import { SYNC_WRITE_MAX } from './atomic-write-small.js';

const SIZES = { small: 100, large: SYNC_WRITE_MAX + 1 };

async function outcome(fn: () => Promise<unknown>): Promise<string> {
  try {
    await fn();
    return 'ok';
  } catch (e) {
    return isToolError(e) ? e.code : `thrown ${(e as Error).message}`;
  }
}

/** No `.tg-….tmp` left anywhere under `dir`. */
function noTemps(dir: string): void {
  const left = (readdirSync(dir, { recursive: true }) as string[]).filter((n) => n.includes('.tg-'));
  assert.deepEqual(left, []);
}

for (const [label, size] of Object.entries(SIZES)) {
  const data = Buffer.from('n'.repeat(size));

  test(`atomicWrite (${label}): writes the content, keeps the mode, replaces the inode`, async () => {
    const t = tempDir();
    try {
      const f = path.join(t.dir, 'a.txt');
      writeFileSync(f, 'old');
      chmodSync(f, 0o640);
      const before = statSync(f);
      const st = await atomicWrite(f, 'a.txt', data, before, false);
      assert.equal(readFileSync(f, 'utf8'), data.toString());
      assert.equal(statSync(f).mode & 0o777, 0o640);
      assert.equal(st.ino, statSync(f).ino);
      assert.notEqual(st.ino, before.ino);
      // A new file: no existing stat.
      const g = path.join(t.dir, 'new.txt');
      await atomicWrite(g, 'new.txt', data, null, false);
      assert.equal(readFileSync(g).length, size);
      noTemps(t.dir);
    } finally {
      t.cleanup();
    }
  });

  test(`atomicWrite (${label}): refuses what changed since it was read, and leaves it as it was`, async () => {
    const t = tempDir();
    try {
      const d = path.join(t.dir, 'd');
      const other = path.join(t.dir, 'other');
      mkdirSync(d);
      mkdirSync(other);
      const f = path.join(d, 'a.txt');
      const reset = () => { rmSync(d, { recursive: true, force: true }); mkdirSync(d); writeFileSync(f, 'old'); return lstatSync(f); };

      let st = reset();
      writeFileSync(f, 'changed by someone else');
      assert.equal(await outcome(() => atomicWrite(f, 'd/a.txt', data, st, false)), 'StaleRead', 'changed');
      assert.equal(readFileSync(f, 'utf8'), 'changed by someone else');

      st = reset();
      rmSync(f);
      symlinkSync(path.join(other, 'x'), f);
      assert.equal(await outcome(() => atomicWrite(f, 'd/a.txt', data, st, false)), 'PathTraversalBlocked', 'target now a link');
      assert.equal(lstatSync(f).isSymbolicLink(), true);

      st = reset();
      linkSync(f, path.join(other, 'hard'));
      assert.equal(await outcome(() => atomicWrite(f, 'd/a.txt', data, st, false)), 'PathDenied', 'a new hard link (size and mtime unchanged): nlink refuses');
      rmSync(path.join(other, 'hard'));

      st = reset();
      rmSync(f);
      assert.equal(await outcome(() => atomicWrite(f, 'd/a.txt', data, st, false)), 'StaleRead', 'deleted');

      reset();
      assert.equal(await outcome(() => atomicWrite(f, 'd/a.txt', data, null, false)), 'StaleRead', 'created meanwhile');
      assert.equal(readFileSync(f, 'utf8'), 'old');

      // The folder swapped for a link to another folder: nothing is written on either side.
      st = reset();
      renameSync(d, path.join(t.dir, 'moved'));
      symlinkSync(other, d);
      assert.equal(await outcome(() => atomicWrite(f, 'd/a.txt', data, st, false)), 'PathTraversalBlocked', 'folder swapped');
      assert.deepEqual(readdirSync(other), []);
      unlinkSync(d); // a link (rmSync refuses a link to a folder on Node 24)
      renameSync(path.join(t.dir, 'moved'), d);
      // A parent of the folder swapped for a link (O_NOFOLLOW sees only the last component).
      const p = path.join(t.dir, 'p');
      const g = path.join(p, 'd', 'a.txt');
      mkdirSync(path.join(p, 'd'), { recursive: true });
      mkdirSync(path.join(other, 'd'));
      writeFileSync(g, 'old');
      const gst = lstatSync(g);
      renameSync(p, path.join(t.dir, 'p-moved'));
      symlinkSync(other, p);
      assert.equal(await outcome(() => atomicWrite(g, 'p/d/a.txt', data, gst, false)), 'PathTraversalBlocked', 'parent swapped');
      assert.deepEqual(readdirSync(path.join(other, 'd')), []);
      noTemps(t.dir);
    } finally {
      t.cleanup();
    }
  });
}
