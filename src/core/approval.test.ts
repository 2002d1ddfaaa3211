import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Harness, tempDir } from '../testing/helpers.js';

test('allow_session given on a dry_run preview does not cover the real write', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const h = new Harness([dir]);
    let asked = 0;
    h.session.elicit = async () => { asked++; return { action: 'accept', content: { decision: 'allow_session' } }; };
    const preview = await h.call('write_file', { path: 'a.txt', content: 'x', dry_run: true });
    assert.equal(preview.ok, true, JSON.stringify(preview.error));
    assert.equal(h.session.grants.length, 0);
    const real = await h.call('write_file', { path: 'a.txt', content: 'x' });
    assert.equal(real.ok, true, JSON.stringify(real.error));
    assert.equal(asked, 2, 'the real write is asked about again');
    const again = await h.call('write_file', { path: 'a.txt', content: 'y', expected_sha256: (real.data as { sha256: string }).sha256 });
    assert.equal(again.ok, true, JSON.stringify(again.error));
    assert.equal(asked, 2, 'the grant from the real write covers the next one');
    h.close();
  } finally {
    cleanup();
  }
});
