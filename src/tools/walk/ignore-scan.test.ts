import assert from 'node:assert/strict';
import { test } from 'node:test';
import ignore from 'ignore';
import { compileIgnore, fixedSuffix, testIgnore, type IgnoreVerdict } from './ignore-cache.js';

// testIgnore answers first-seen paths with its own copy of the `ignore` package's scan (each
// parent first, then the rules from the last, a cheap end-of-path test before each rule's
// regular expression). These compare it with the package itself (case-sensitive, as compiled on Linux): the Linux kernel's root
// .gitignore and generated rule files, on generated paths (files, folders, odd and invalid ones).

/** The rules of the Linux kernel's root .gitignore (v6.1), in order. */
const KERNEL = ['.*', '*.a', '*.asn1.[ch]', '*.bin', '*.bz2', '*.c.[012]*.*', '*.dt.yaml', '*.dtb', '*.dtbo', '*.dtb.S', '*.dwo', '*.elf',
  '*.gcno', '*.gz', '*.i', '*.ko', '*.lex.c', '*.ll', '*.lst', '*.lz4', '*.lzma', '*.lzo', '*.mod', '*.mod.c', '*.o', '*.o.*', '*.patch',
  '*.rmeta', '*.rsi', '*.s', '*.so', '*.so.dbg', '*.su', '*.symtypes', '*.symversions', '*.tab.[ch]', '*.tar', '*.usyms', '*.xz', '*.zst',
  'Module.symvers', 'modules.order', '/linux', '/modules-only.symvers', '/vmlinux', '/vmlinux.32', '/vmlinux.map', '/vmlinux.symvers',
  '/vmlinux-gdb.py', '/vmlinuz', '/System.map', '/Module.markers', '/modules.builtin', '/modules.builtin.modinfo', '/modules.nsdeps', '/*.spec',
  '/snap/', '/tar-install/', '/include/config/', '/include/generated/', '/include/ksym/', '/arch/*/include/generated/', 'patches-*', 'patches',
  'series', 'tags', 'TAGS', 'cscope.*', 'ncscope.*', 'GPATH', 'GRTAGS', 'GSYMS', 'GTAGS', 'ID', '*~', '\\#*#', 'extra_certificates',
  'signing_key.pem', 'signing_key.priv', 'signing_key.x509', 'x509.genkey', '/debian/', '/tools/perf/debian/', '!.gitignore', '!.mailmap',
  '!.rustfmt.toml', '*.orig', '*.rej', '*.kdev4', '*.dwo', '!/arch/x86/include/generated/', ''].join('\n');

let seed = 20261124;
const rnd = (n: number) => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return (seed >>> 8) % n; };
const pick = <T>(xs: readonly T[]) => xs[rnd(xs.length)]!;

const LINES = ['*.o', '!*.o', '*.h', '!keep.h', '/a', 'a/', 'a/**', '**/b', 'a/*/c', '\\#x', 'x\\ ', '[ab].c', '*.[ch]', '?x', 'foo', '!foo/', '# c',
  '', '  ', 'trailing  ', 'a\\*b', '*~', '.*', '!.e', 'b/', '/b/c', 'c', '!c', '*', '!*/', 'x.o/', '**', 'a/**/z', '*.e', '!a.e', 'z.tar.gz',
  '*.tar.*', 'foo/bar', '/foo/', '\\!x', 'a b', 'é', '*é', 'x\\', '\\', '*.?', 'Z', 'a.b.c', '*.b.c', '!**/a', '/*.o', '**/z/', 'z?', 'x[!a]',
  // V8 writes a line or paragraph separator in a regular expression's source as an escape (review 24).
  'x\u2028', '*\u2029', 'a\u202841', '!x\u2028'];
const SEGS = ['a', 'b', 'c', 'x', 'z', 'foo', 'bar', 'x.o', 'y.o', 'keep.h', 'k.h', 'a.c', 'b.c', '.e', 'a.e', '#x', 'x ', 'a*b', 'f~',
  'z.tar.gz', 'z.tar', 'a b', 'é', 'xé', 'a.b.c', 'q.b.c', 'Z', 'x.', 'xa', 'zz', 'vmlinux', 'linux', 'Module.symvers', 'patches-1', 'k.mod.c', 'drivers', 'include',
  'x\u2028', 'foo\u2029', 'a\u202841', '2028'];

function randomPath(): string {
  const r = rnd(20);
  if (r === 0) return pick(['', '/a', './a', '../a', 'a//b', '.', '..', 'a/./b', '/']);
  const segs = Array.from({ length: 1 + rnd(4) }, () => pick(SEGS));
  return segs.join('/') + (rnd(3) === 0 ? '/' : '');
}

/** The package's answer, or the error it throws. */
function byPackage(text: string, p: string): string {
  try {
    const r = ignore({ ignorecase: false }).add(text).test(p);
    return r.ignored ? 'ignored' : r.unignored ? 'unignored' : 'neither';
  } catch (e) {
    return `throws ${(e as Error).constructor.name}`;
  }
}

function byScan(c: ReturnType<typeof compileIgnore>, p: string): string {
  try {
    const v: IgnoreVerdict = testIgnore(c, p);
    return v.ignored ? 'ignored' : v.unignored ? 'unignored' : 'neither';
  } catch (e) {
    return `throws ${(e as Error).constructor.name}`;
  }
}

test('fixedSuffix: the text before "end, or a last slash", only where nothing else can end a match', () => {
  const src = (rule: string) => (ignore().add(rule) as unknown as { _rules: { _rules: Array<{ regex: RegExp }> } })._rules._rules[0]!.regex.source;
  assert.equal(fixedSuffix(src('*.o')), '.o');
  assert.equal(fixedSuffix(src('/vmlinux')), 'vmlinux');
  assert.equal(fixedSuffix(src('*.dtb.S')), '.dtb.S');
  assert.equal(fixedSuffix(src('*.tab.[ch]')), null, 'a class at the end');
  assert.equal(fixedSuffix(src('patches-*')), null, 'a wildcard at the end');
  assert.equal(fixedSuffix(src('a/**')), null);
  assert.equal(fixedSuffix('(?:^|\\/)x|y(?=$|\\/$)'), null, 'an alternation the end test does not cover');
  assert.equal(fixedSuffix('(?:^|\\/)a\\d(?=$|\\/$)'), null, 'an escape that is a class');
  assert.equal(fixedSuffix('(?:^|\\/)a\\\\.(?=$|\\/$)'), null, 'an escaped backslash, then any character');
  assert.equal(fixedSuffix('(?:^|\\/)a\\/b(?=$|\\/$)'), 'b', 'the text stops at a slash');
  assert.equal(fixedSuffix(src('x\u2028')), null, 'a line separator, which the source writes as an escape');
  assert.equal(fixedSuffix('(?:^|\\/)a\\x41(?=$|\\/$)'), null, 'a hex escape');
});

test('testIgnore answers as the ignore package: the kernel root .gitignore and generated rule files, on generated paths', () => {
  const kernel = compileIgnore(KERNEL);
  assert.ok(kernel.scan, 'the scan is on for the kernel rules (the package\'s rule fields were found)');
  assert.ok(kernel.scan.suffix.filter((s) => s !== null).length > 60, 'most kernel rules get a cheap test');
  const bad: string[] = [];
  const seen = new Map<string, number>();
  const texts = [KERNEL, ...Array.from({ length: 600 }, () => Array.from({ length: 1 + rnd(8) }, () => pick(LINES)).join(rnd(5) ? '\n' : '\r\n'))];
  for (const text of texts) {
    const c = compileIgnore(text);
    // Paths in random order and again: parents met before and after their children, and from the memo.
    const paths = Array.from({ length: text === KERNEL ? 4000 : 60 }, randomPath);
    for (const p of [...paths, ...paths.slice(0, 20)]) {
      const want = byPackage(text, p);
      const got = byScan(c, p);
      seen.set(want, (seen.get(want) ?? 0) + 1);
      if (want !== got && bad.length < 5) bad.push(`${JSON.stringify(text)} on ${JSON.stringify(p)}: package ${want}, scan ${got}`);
    }
  }
  assert.deepEqual(bad, []);
  for (const v of ['ignored', 'unignored', 'neither']) assert.ok((seen.get(v) ?? 0) > 1000, `${v}: ${seen.get(v)} (${JSON.stringify([...seen])})`);
  assert.ok([...seen.keys()].some((k) => k.startsWith('throws')), 'invalid paths were compared too');
});
