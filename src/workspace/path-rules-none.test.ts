import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from '../testing/helpers.js';
import { EntryFilter } from '../tools/walk/entry-filter.js';
import { DenyFilter } from '../tools/grep/select.js';
import { compileGlobs, DEFAULT_DENY, INSIDE, otherRels, PathRules, type GlobMatcher } from './path-rules.js';
import { Workspace } from './workspace.js';
import { ancestors, pathGen, relUnder } from '../testing/gen-paths.js';

// review-none: an attack review of noneWithin (6b0fff6). The quick answer may only be taken where
// the full test of every form (the path, relToRoot, each other root's form, each with "/" INSIDE
// for a folder) says "not denied". These compare the real EntryFilter and DenyFilter with the
// tests they ran before 6b0fff6, on generated patterns, paths and root sets.

/** EntryFilter.isDenied's glob part before 6b0fff6. */
function oldEntryDenied(deny: (p: string) => boolean, bases: readonly string[], relToRoot: string, abs: string, isDir: boolean): boolean {
  const a = abs.slice(1);
  if (deny(a) || (isDir && deny(`${a}/${INSIDE}`))) return true;
  if (deny(relToRoot) || (isDir && deny(`${relToRoot}/${INSIDE}`))) return true;
  for (const r of otherRels(abs, bases, relToRoot)) if (deny(r) || (isDir && deny(`${r}/${INSIDE}`))) return true;
  return false;
}

const { rnd, pick, randomPattern, randomAbs } = pathGen(20261123);

function workspace(rules: PathRules, roots: string[]): Workspace {
  return new Workspace(roots, rules);
}

test('noneWithin never turns a denied walk entry into an admitted one (generated patterns, paths, nested roots)', () => {
  let sure = 0;
  let compared = 0;
  /** Entries denied only by a form longer than relToRoot (the path, another root's form): what the quick answer could lose. */
  let beyondTail = 0;
  const bad: string[] = [];
  for (let k = 0; k < 1500 && bad.length < 5; k++) {
    const pats = Array.from({ length: 1 + rnd(2) }, randomPattern);
    let rules: PathRules;
    try { rules = new PathRules(pats, [], [], false, [], []); rules.denyMatch('x'); } catch { continue; }
    for (let i = 0; i < 30; i++) {
      const abs = randomAbs();
      const anc = ancestors(abs);
      const root = pick(anc);
      const bases = [...new Set([root, ...anc.filter(() => rnd(3) === 0)])];
      const r = rules.withBases(bases);
      const filter = new EntryFilter(workspace(r, [root]), { hidden: true, gitignore: false });
      const relToRoot = relUnder(root, abs);
      for (const isDir of [false, true]) {
        compared++;
        const before = oldEntryDenied(r.denyMatch, bases, relToRoot, abs, isDir);
        const now = filter.isDenied(relToRoot, abs, isDir);
        if (r.denyMatch.noneWithin(abs.slice(1))) sure++;
        if (before && r.denyMatch.noneWithin(relToRoot)) beyondTail++;
        if (before !== now) bad.push(`${JSON.stringify(pats)} ${abs} root ${root} bases ${JSON.stringify(bases)} dir=${isDir}: before ${before}, now ${now}`);
      }
    }
  }
  assert.deepEqual(bad, []);
  assert.ok(compared > 50_000 && sure > 5_000 && beyondTail > 100, `compared ${compared}, sure ${sure}, denied beyond relToRoot ${beyondTail}`);
});

test('noneWithin never turns a denied grep file into an admitted one (DenyFilter.fileDenied, both engines use it)', () => {
  const bad: string[] = [];
  let compared = 0;
  let beyondTail = 0;
  for (let k = 0; k < 1200 && bad.length < 5; k++) {
    const pats = [...(rnd(3) ? [] : DEFAULT_DENY), ...Array.from({ length: 1 + rnd(2) }, randomPattern)];
    let rules: PathRules;
    try { rules = new PathRules(pats, [], [], false, [], []); rules.denyMatch('x'); } catch { continue; }
    for (let i = 0; i < 20; i++) {
      const abs = randomAbs();
      const anc = ancestors(abs);
      const root = pick(anc);
      const bases = [...new Set([root, ...anc.filter(() => rnd(3) === 0)])];
      const r = rules.withBases(bases);
      // The search starts at the root or at a folder between it and the file.
      const starts = anc.filter((d) => d === root || d.startsWith(root === '/' ? '/' : `${root}/`));
      const baseAbs = pick(starts);
      const baseRel = relUnder(root, baseAbs);
      const rel = relUnder(baseAbs, abs);
      const deny = new DenyFilter(workspace(r, [root]), baseRel, baseAbs);
      const rootRel = relUnder(root, abs);
      // Before 6b0fff6: the folders on the way (unchanged), then the file's own forms.
      const slash = rel.lastIndexOf('/');
      const dirs = deny.dirDenied(slash < 0 ? '' : rel.slice(0, slash));
      const m: GlobMatcher = r.denyMatch;
      const before = dirs || m(rootRel) || m(abs.slice(1)) || otherRels(abs, bases, rootRel).some(m);
      compared++;
      const now = deny.fileDenied(rel);
      if (before && !dirs && m.noneWithin(rootRel)) beyondTail++;
      if (before !== now) bad.push(`${JSON.stringify(pats)} ${abs} root ${root} search ${baseAbs} bases ${JSON.stringify(bases)}: before ${before}, now ${now}`);
    }
  }
  assert.deepEqual(bad, []);
  assert.ok(compared > 5_000 && beyondTail > 10, `compared ${compared}, denied beyond the root's form ${beyondTail}`);
});

test('noneWithin holds for every part of the path on the secrets list and hand-picked odd patterns', () => {
  const ODD = [
    ...DEFAULT_DENY, '/abs/only/x.key', 'x.key/', 'x.key//', '//x.key', '**/./.env', 'a/../.env', '.env/**/', '.ENV', 'secret?', '?ecret',
    '"sec"ret', 'sec\\ret', '!secret', '!(foo)secret', 'sec[r]et', 'sec{r,q}et', '*(s)ecret', 'secret/**/*', '**/secret/**', 'é', 'e\u0301',
  ];
  const paths = ['srv/app/secretx', 'abs/only/x.key', 'abs/only/x.keyz', 'home/u/.env', 'a/.ENV', 'x/é/y', 'x/e\u0301', 'a/sec/ret', 'ret', 'secre', 'w/.en/v'];
  for (const pat of ODD) {
    const m = compileGlobs([pat]);
    for (const p of paths) {
      if (!m.noneWithin(p)) continue;
      for (let i = 0; i <= p.length; i++) {
        if (i > 0 && p[i - 1] !== '/') continue;
        const tail = p.slice(i);
        assert.equal(m(tail), false, `${pat} on ${tail} (within ${p})`);
        assert.equal(m(`${tail}/${INSIDE}`), false, `${pat} on ${tail}/INSIDE (within ${p})`);
      }
    }
  }
});

test('an absolute deny pattern through a symbolic link: the quick answer is not taken on the real path', () => {
  const t = tempDir('tg-none-');
  try {
    mkdirSync(path.join(t.dir, 'real', 'sub'), { recursive: true });
    symlinkSync(path.join(t.dir, 'real'), path.join(t.dir, 'link'));
    const rules = new PathRules([`${t.dir}/link/sub/tok*`], [], [], false, [], [t.dir]);
    const abs = `${t.dir}/real/sub/token.txt`;
    assert.equal(rules.denyMatch.noneWithin(abs.slice(1)), false);
    const filter = new EntryFilter(workspace(rules, [t.dir]), { hidden: true, gitignore: false });
    assert.equal(filter.isDenied('real/sub/token.txt', abs, false), true);
    assert.equal(filter.isDenied('real/sub/other.txt', `${t.dir}/real/sub/other.txt`, false), false, 'control');
  } finally {
    t.cleanup();
  }
});
