/**
 * Generated deny patterns and paths for the differential tests of the walk filter's quick answers
 * (path-rules-none.test.ts, entry-filter-folder.test.ts): a seeded generator, so a failure names
 * a case that comes back on the next run.
 */

// Pattern pieces: literal text, wildcards, syntax picomatch treats specially (which must make
// requiredLiterals give up), `.`/`..` segments, slashes leading, trailing and doubled.
const PIECES = ['a', 'b', 'ab', '.e', 'e', '.', '*', '**', '?', '/', '//', '**/', '/**', './', '../', '"', '\\', '!', '{a,b}', '{1..3}', '[a]', '[[:alpha:]]',
  '*(a)', '+(b)', '@(a|b)', '?(e)', '!(a)', '$', '^', '~', '#', "'", ' ', '-', ',', '|', 'A', 'É', 'é', 'e\u0301', 'w', 'r'];
/** Entry names, odd ones included. */
export const NAMES = ['a', 'b', 'ab', 'ba', '.e', 'e', '.ea', 'a.e', 'A', 'w', 'r', 'wr', 'a', 'b', '.e', 'r', 'w',
  '$', '^', '"a"', 'a b', 'é', 'e\u0301', '!a', '{a,b}', '[a]', 'a\\b', '..a', '1'];

const SEGS = ['a', 'b', 'ab', '.e', 'e', 'r', 'w', '*', '**', '?', 'a*', '*.e', '.e*', 'w?', '*b', 'A', 'é', 'r*'];

/** A seeded generator of patterns and absolute paths. */
export function pathGen(seed: number) {
  // The high bits: an LCG's low bits repeat with a short period (seed % 4 cycles every 4 calls).
  const rnd = (n: number) => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return (seed >>> 8) % n; };
  const pick = <T>(xs: readonly T[]) => xs[rnd(xs.length)]!;
  /** Half the time gitignore-like (segments, a leading "/" or "**\/", a trailing "/**" or "/"), half a soup of pieces. */
  const randomPattern = (): string => {
    if (rnd(3)) {
      const body = Array.from({ length: 1 + rnd(3) }, () => pick(SEGS)).join('/');
      return pick(['', '', '/', '**/', '//']) + body + pick(['', '', '/**', '/', '/*']);
    }
    let p = rnd(5) === 0 ? '/' : '';
    for (let n = 1 + rnd(4); n > 0; n--) p += pick(PIECES);
    return p;
  };
  const randomAbs = (): string => {
    const segs = Array.from({ length: 1 + rnd(5) }, () => (rnd(3) ? pick(SEGS.filter((x) => !/[*?]/.test(x))) : pick(NAMES)));
    return `/${segs.join('/')}`;
  };
  return { rnd, pick, randomPattern, randomAbs };
}

/** Each folder holding `abs` ("/" included): the roots a walk could start from. */
export function ancestors(abs: string): string[] {
  const out = ['/'];
  const segs = abs.split('/').filter(Boolean);
  for (let i = 1; i < segs.length; i++) out.push(`/${segs.slice(0, i).join('/')}`);
  return out;
}

/** `abs` relative to `root` ('' for the root itself). */
export function relUnder(root: string, abs: string): string {
  return root === '/' ? abs.slice(1) : abs === root ? '' : abs.slice(root.length + 1);
}
