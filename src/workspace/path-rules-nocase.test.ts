import { test } from 'node:test';
import assert from 'node:assert/strict';
import picomatch from 'picomatch';

// review-none: the case-insensitive path (macOS, Windows) exercised on Linux. CASE_INSENSITIVE_FS is
// read from process.platform when path-rules loads: this file (its own process under node --test)
// says "darwin" first and loads the module after. picomatch's own OS test looks only for win32.
Object.defineProperty(process, 'platform', { value: 'darwin' });
const { caseFold, compileGlobs, CASE_INSENSITIVE_FS, INSIDE, otherRels, PathRules } = await import('./path-rules.js');
const { EntryFilter } = await import('../tools/walk/entry-filter.js');
const { Workspace } = await import('./workspace.js');

/** What the deny list answers without the literal pre-check: picomatch with nocase, as compileGlobs compiles it. */
function plain(p0: string): (p: string) => boolean {
  const p = p0.length > 1 ? p0.replace(/\/+$/, '') : p0;
  const opts = { dot: true, nocase: true };
  return p.includes('/') ? picomatch(p.replace(/^\/+/, ''), opts) : picomatch(p, { ...opts, basename: true });
}

// [deny pattern, a path picomatch's nocase matcher says it covers]. picomatch's nocase is a RegExp
// `i` flag: letters are equal when their upper cases are (σ, ς and Σ; µ and μ; ϑ and θ; ϐ and β),
// which toLowerCase does not give (Σ → ς at the end of a word, µ stays µ). A case-insensitive file
// system folds these names together too, so `AΣ` on disk is the file a rule on `aσ` names.
const FOLDS: Array<[string, string]> = [
  ['**/aσ', 'x/AΣ'], ['**/aς', 'x/aσ'], ['**/aσ*', 'x/aς'], ['**/aΣ', 'x/aσ'], ['**/μ.key', 'x/µ.key'], ['**/θ', 'x/ϑ'], ['**/β', 'x/ϐ'],
  ['secretσ', 'y/SECRETΣ'], ['/abs/κλειδί/**', 'abs/ΚΛΕΙΔΊ/x'],
  // Controls that held already.
  ['**/*.KEY', 'x/a.key'], ['**/.ssh/**', 'x/.SSH/id'], ['**/ΑΣ', 'x/ας'],
];

test('case-insensitive: the stand-in platform took effect', () => {
  assert.equal(CASE_INSENSITIVE_FS, true);
});

test('case-insensitive: the literal pre-check never says "no" where picomatch nocase says "yes" (and noneWithin never says "sure")', () => {
  const bad: string[] = [];
  for (const [pat, p] of FOLDS) {
    assert.equal(plain(pat)(p), true, `control: picomatch nocase matches ${pat} on ${p}`);
    const m = compileGlobs([pat]);
    if (!m(p)) bad.push(`${pat} on ${p}: not denied`);
    if (m.noneWithin(p)) bad.push(`${pat} on ${p}: noneWithin sure`);
  }
  assert.deepEqual(bad, []);
});

test('case-insensitive: noneWithin never turns a denied walk entry into an admitted one (mixed case, Greek, nested roots)', () => {
  let seed = 99;
  const rnd = (n: number) => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed % n; };
  const pick = <T>(xs: readonly T[]) => xs[rnd(xs.length)]!;
  const SEGS = ['a', 'A', 'σ', 'Σ', 'ς', 'aσ', 'AΣ', 'µ', 'μ', '.e', '.E', '*', '**', '?', 'a*', '*Σ', '*.E', 'İ', 'i'];
  const NAMES = ['a', 'A', 'σ', 'Σ', 'ς', 'aς', 'AΣ', 'aσ', 'Aσ', 'µ', 'μ', 'Μ', '.e', '.E', 'x.e', 'X.E', 'İ', 'i', 'I', 'ı', 'a.Σ', "a'Σ"];
  const bad: string[] = [];
  let sure = 0;
  let compared = 0;
  for (let k = 0; k < 800 && bad.length < 5; k++) {
    const pats = Array.from({ length: 1 + rnd(2) }, () => pick(['', '/', '**/']) + Array.from({ length: 1 + rnd(3) }, () => pick(SEGS)).join('/') + pick(['', '/**']));
    const rules = new PathRules(pats, [], [], false, [], []);
    for (let i = 0; i < 25; i++) {
      const segs = Array.from({ length: 1 + rnd(4) }, () => pick(NAMES));
      const abs = `/${segs.join('/')}`;
      const cut = rnd(segs.length);
      const root = cut === 0 ? '/' : `/${segs.slice(0, cut).join('/')}`;
      const bases = [...new Set([root, '/', `/${segs[0]}`])];
      const r = rules.withBases(bases);
      const relToRoot = root === '/' ? abs.slice(1) : abs.slice(root.length + 1);
      const filter = new EntryFilter(new Workspace([root], r), { hidden: true, gitignore: false });
      for (const isDir of [false, true]) {
        compared++;
        if (r.denyMatch.noneWithin(abs.slice(1))) sure++;
        const deny = r.denyMatch;
        const a = abs.slice(1);
        let before = deny(a) || (isDir && deny(`${a}/${INSIDE}`)) || deny(relToRoot) || (isDir && deny(`${relToRoot}/${INSIDE}`));
        for (const o of otherRels(abs, bases, relToRoot)) before ||= deny(o) || (isDir && deny(`${o}/${INSIDE}`));
        const now = filter.isDenied(relToRoot, abs, isDir);
        if (before !== now) bad.push(`${JSON.stringify(pats)} ${abs} root ${root} dir=${isDir}: before ${before}, now ${now}`);
      }
    }
  }
  assert.deepEqual(bad, []);
  assert.ok(compared > 20_000 && sure > 2_000, `compared ${compared}, sure ${sure}`);
});

test('caseFold puts two UTF-16 units together exactly when a RegExp with the i flag takes them as equal', () => {
  const esc = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  const bad: string[] = [];
  for (let u = 0; u < 0x10000 && bad.length < 5; u++) {
    if (u >= 0xd800 && u <= 0xdfff) continue;
    const c = String.fromCharCode(u);
    const re = new RegExp(`^${esc(c)}$`, 'i');
    for (const d of new Set([c.toLowerCase(), c.toUpperCase(), caseFold(c)])) {
      if (d.length !== 1) continue;
      if (re.test(d) !== (caseFold(c) === caseFold(d))) bad.push(`${esc(c)} / ${esc(d)}: regex ${re.test(d)}, fold ${caseFold(c)} ${caseFold(d)}`);
    }
  }
  assert.deepEqual(bad, []);
  // No context: a part's fold is a part of the whole's fold (toLowerCase makes a final sigma).
  assert.equal(caseFold('aΣ'), caseFold('a') + caseFold('Σ'));
});
