import assert from 'node:assert/strict';
import { test } from 'node:test';

// EntryFilter.folder on a case-insensitive file system (macOS, Windows), exercised on Linux as
// path-rules-nocase.test.ts does: the platform is set before path-rules loads.
Object.defineProperty(process, 'platform', { value: 'darwin' });
const { CASE_INSENSITIVE_FS, DEFAULT_DENY, PathRules } = await import('../../workspace/path-rules.js');
const { EntryFilter } = await import('./entry-filter.js');
const { Workspace } = await import('../../workspace/workspace.js');

test('case-insensitive: EntryFilter.folder answers as check() where only the fold finds the literal', () => {
  assert.equal(CASE_INSENSITIVE_FS, true);
  const cases: Array<[string[], string, string]> = [
    // [deny, folder, name]: the folder's part or the name holds the literal in another case.
    [DEFAULT_DENY, '/w/x/.ssh', 'id'], [DEFAULT_DENY, '/w/x/.SSH', 'id'], [DEFAULT_DENY, '/w/x', 'K.PEM'], [DEFAULT_DENY, '/w/x', '.Env'],
    [['**/aσ/**'], '/w/AΣ', 'f'], [['**/AΣ/**'], '/w/aς', 'f'], [['**/μ.key'], '/w', 'µ.KEY'], [['/w/Secret/**'], '/w/SECRET', 'f'],
    // Literals split between the folder and the name (no match: the answers must still agree).
    [['**/ab*cd'], '/w/AB', 'xCD'], [['**/ab*cd'], '/w/ab', 'xcd'],
  ];
  const bad: string[] = [];
  for (const [deny, dir, name] of cases) {
    for (const root of ['/w', '/']) {
      const rel = root === '/' ? dir.slice(1) : dir === root ? '' : dir.slice(root.length + 1);
      const f = new EntryFilter(new Workspace([root], new PathRules(deny, [], [], false, [], [root])), { hidden: true, gitignore: false });
      const want = f.check(name, rel === '' ? name : `${rel}/${name}`, `${dir}/${name}`, 'file', null);
      const got = f.folder(rel, dir).check(name, 'file', null);
      if ((want !== 'denied' && !deny[0]!.includes('ab*cd')) || got !== want) bad.push(`${deny} ${dir}/${name} (root ${root}): check ${want}, folder ${got}`);
    }
  }
  assert.deepEqual(bad, []);
});
