// The default answer (small folders searched in-process) against ripgrep forced, over a tree of
// ignore-file, encoding, glob and pattern edge cases: every answer must be the same.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mkdirSync, symlinkSync } from 'node:fs';
import { Harness, tempDir, writeIn } from '../../src/testing/helpers.js';
import { comparable, grep } from '../../src/tools/grep/grep-fixture.js';
import { locateRg } from '../../src/tools/grep/rg.js';

const needsRg = (await locateRg({ ...process.env, TOOLGATE_RG: '' })) ? false : 'needs ripgrep (rg) on PATH';

const u16 = (s: string, bom = true, odd = false) => { const b = Buffer.from(s, 'utf16le'); return Buffer.concat([bom ? Buffer.from([0xff, 0xfe]) : Buffer.alloc(0), b, odd ? Buffer.from([0x41]) : Buffer.alloc(0)]); };
test('small path vs ripgrep: the same answer for every query over an edge-case tree', { skip: needsRg, timeout: 120_000 }, async () => {
  const d = tempDir('tg-fz-');
  const files: Record<string, string | Buffer> = {
    '.gitignore': '*.log\n/top-only.txt\ndironly/\n!keep.log\nspaced.txt   \n\\!bang.txt\n#comment.txt\n',
    'keep.log': 'needle keep\n', 'x.log': 'needle x\n', 'top-only.txt': 'needle top\n', 'sub/top-only.txt': 'needle sub top\n',
    'dironly': 'needle file named dironly\n', 'sub/dironly/f.txt': 'needle in dironly\n',
    'spaced.txt': 'needle spaced\n', '!bang.txt': 'needle bang\n', '#comment.txt': 'needle comment\n',
    'nested/.git/HEAD': 'x', 'nested/a.log': 'needle nested log\n', 'nested/.gitignore': '!*.log\n', 'nested/b.log': 'needle b\n',
    'nested2/.git': 'gitdir: ../gd\n', 'gd/info/exclude': 'excluded.txt\n', 'nested2/excluded.txt': 'needle excl\n',
    'nested3/.git/info/exclude': 'ex3.txt\n', 'nested3/ex3.txt': 'needle ex3\n', 'nested3/deeper/ex3.txt': 'needle ex3 deeper\n',
    'ig/.ignore': '*.md\n!keep.md\n', 'ig/a.md': 'needle md\n', 'ig/keep.md': 'needle keep md\n', 'ig/.rgignore': 'keep.md\n',
    'ig2/.gitignore': '*.txt\n', 'ig2/.ignore': '!x.txt\n', 'ig2/x.txt': 'needle x\n', 'ig2/y.txt': 'needle y\n',
    'enc/u16.txt': u16('needle one\nline two needle\n'), 'enc/u16odd.txt': u16('needle odd\nlast needle', true, true),
    'enc/u16be.txt': Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('needle be\n', 'utf16le').swap16()]),
    'enc/bom8.txt': Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('needle bom\n')]),
    'enc/kelvin.txt': 'a \u212A b\nſtop\n', 'enc/ls.txt': 'a\u2028b needle\u2028\nx\ry\n', 'enc/astral.txt': '😀\n😀😀 needle\n',
    'enc/cr.txt': 'needle\r\n\r\nneedle\rmid\r\n', 'enc/nonl.txt': 'no newline needle', 'enc/empty.txt': '',
    'enc/fffd.txt': 'valid \uFFFD needle\n', 'enc/nul.bin': Buffer.from('needle\0x'),
    'ctx/c.txt': 'a\nneedle 1\nb\nneedle 2\nc\nd\ne\nneedle 3\n',
    'long/l.txt': `${'y'.repeat(3000)}needle${'z'.repeat(3000)}\n`,
    'sub2/.gitignore': '/anch.txt\nd/*.txt\n**/deep.txt\nx/**\n*.TXT\n', 'sub2/anch.txt': 'needle\n', 'sub2/q/anch.txt': 'needle\n', 'sub2/d/e.txt': 'needle\n', 'sub2/d/f/e.txt': 'needle\n', 'sub2/z/y/deep.txt': 'needle\n', 'sub2/x/k.txt': 'needle\n', 'sub2/UP.TXT': 'needle\n', 'sub2/up.txt': 'needle\n',
    'p1/.ignore': 'p2/skip.txt\nskipname.txt\n', 'p1/p2/skip.txt': 'needle\n', 'p1/p2/skipname.txt': 'needle\n', 'p1/p2/ok.txt': 'needle\n',
    'rep/.git/x': '', 'rep/.gitignore': 'r.txt\n', 'rep/r.txt': 'needle\n', 'rep/inner/.git/y': '', 'rep/inner/r.txt': 'needle\n', 'rep/inner/s.log': 'needle\n',
    'g/a.ts': 'needle\n', 'g/b.tsx': 'needle\n', 'g/c/d.ts': 'needle\n', 'g/.h/e.ts': 'needle\n', 'g/{x}.ts': 'needle\n', 'g/[y].ts': 'needle\n',
  };
  for (const [rel, c] of Object.entries(files)) writeIn(d.dir, rel, c);
  mkdirSync(`${d.dir}/emptydir`);
  symlinkSync('g/a.ts', `${d.dir}/link.ts`);
  const h = new Harness([d.dir]);
  const qs: Array<Record<string, unknown>> = [];
  const pats = ['needle', 'k', 'S', 'a.b', '^', '$', '[^a]', '^.$', 'needle$', '^needle', 'b needle', 'y\\.', '..needle', 'needle|zz', '[[:upper:]]', 'x.y', '\\x{212A}', '(?i)K', 'ſ', 'ß', 'İ', '(?i)ss', '[^\\n]', '\\t', '\\.', '[]a]', '[^]a]', '\\A', '\\z', 'needle\\z', '^$', '(?:ne)edle', '(?P<n>ne)edle', '(ne)edle', '[a-c]', '[--/]', 'e\\x{0A}'];
  for (const p of pats) for (const mode of ['files_with_matches', 'content', 'count']) {
    qs.push({ pattern: p, output_mode: mode });
    qs.push({ pattern: p, output_mode: mode, ignore_case: true, hidden: true });
  }
  qs.push({ pattern: 'needle', output_mode: 'content', context: 2, path: 'ctx' });
  qs.push({ pattern: 'needle', output_mode: 'content', context: 1, path: 'ctx/c.txt' });
  for (const glob of ['*.ts', '**/*.ts', 'g/*.ts', 'c/**', '!c', '{x}.ts', '[[]y].ts', '*.{ts,tsx}', '!*.ts', 'd.ts', '/a.ts', 'c/', '**/c/*']) {
    qs.push({ pattern: 'needle', glob, path: 'g' }, { pattern: 'needle', glob, hidden: true }, { pattern: 'needle', glob });
  }
  for (const path of ['g/.h', 'sub2/x', 'ig/a.md', 'p1/p2', 'sub2', 'sub2/d', 'sub2/x', 'rep/inner', 'rep', 'nested', 'nested2', 'nested3', 'nested3/deeper', 'ig', 'ig2', 'sub', 'sub/dironly', 'enc/u16odd.txt', 'enc/nul.bin', 'x.log', 'enc', 'emptydir', 'link.ts']) {
    qs.push({ pattern: 'needle', path }, { pattern: 'needle', path, output_mode: 'content', hidden: true });
  }
  qs.push({ pattern: 'needle', sort: 'mtime' }, { pattern: 'needle', head_limit: 3, offset: 2, output_mode: 'content' }, { pattern: 'needle', type: 'ts' }, { pattern: 'needle', type: 'md', path: 'ig' });
  const diffs: string[] = [];
  let builtin = 0;
  for (const args of qs) {
    const a = await grep(h, 'auto', args);
    const r = await grep(h, 'rg', args);
    if (a.data?.engine === 'builtin') builtin++;
    try { assert.deepEqual(comparable(a), comparable(r)); } catch (e) { diffs.push(`${JSON.stringify(args)} [${a.data?.engine}]\n${(e as Error).message.split('\n').filter((l) => /^[+-] /.test(l.trim()) || /^\s*[+-]/.test(l)).slice(0, 12).join('\n')}`); }
  }
  h.close(); d.cleanup();
  assert.deepEqual(diffs.slice(0, 10), [], `${diffs.length} of ${qs.length} answers differ`);
  assert.ok(builtin > 50, `control: ${builtin} answers searched here`);
});

