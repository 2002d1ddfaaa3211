/** The tree and helpers grep's tests share (grep.test.ts, small.test.ts). */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import type { Envelope } from '../../core/envelope.js';
import { Harness, tempDir, writeIn } from '../../testing/helpers.js';

export type Data = {
  output_mode: string; matches?: Array<{ file: string; line: number; text: string; before?: string[]; after?: string[] }>;
  files?: string[]; counts?: Array<{ file: string; count: number }>; total_files: number; total_matches?: number;
  totals_exact: boolean; truncated: boolean; capped: string | null; fallback_used: boolean; fallback_reason?: string | null; engine: string; notes?: string[];
};
export type Env = Envelope & { data: Data };

export const SECRET = 'TOPSECRET';

export const write = writeIn;

/** A workspace with every kind of entry grep must handle, plus an outside dir it must never reach. */
export function buildTree() {
  const t = tempDir('tg-grep-');
  const ws = path.join(t.dir, 'ws');
  const out = path.join(t.dir, 'outside');
  mkdirSync(ws);
  write(out, 'secret.txt', `needle ${SECRET} outside\n`);
  write(out, 'hardsrc.txt', `needle ${SECRET} via hard link\n`);
  const files: Record<string, string | Buffer> = {
    '.gitignore': 'ignored.txt\nbuild/\n*.log\n!keep.log\n',
    'a.ts': 'const needle = 1;\nfunction Foo() { return needle; }\nexport default Foo;\n',
    'b.js': '// needle in js\nNEEDLE upper\nlast line\n',
    'ignored.txt': 'needle but gitignored\n',
    'x.log': 'needle in a log\n',
    'keep.log': 'needle kept by a negation\n',
    'build/out.js': 'needle in build\n',
    '.hidden.ts': 'needle in a hidden file\n',
    '.hdir/inner.md': 'needle in a hidden dir\n',
    '.env': `API=${SECRET} needle\n`,
    'sub/.env.local': `LOCAL=${SECRET} needle\n`,
    'sub/id.pem': `-----BEGIN ${SECRET} needle\n`,
    'sub/.ignore': '*.tmp\n',
    'sub/t.tmp': 'needle in tmp\n',
    'sub/.gitignore': 'generated/\n',
    'sub/generated/g.ts': 'needle generated\n',
    'sub/deep/c.py': 'def needle():\n    return 1\n\ndef other():\n    return needle()\n',
    'sub/deep/d.md': '# Needle\nsome needle text\n\nfoo\nbar needle\n',
    'sub/a b/space.txt': 'needle with a space in the folder\n',
    'bin.dat': Buffer.from('needle\0binary\n'),
    'crlf.txt': 'needle\r\nnext needle\r\n',
    'uni.txt': 'ünïcode needle ✓\nnaïve\n',
    'long.txt': `${'x'.repeat(1000)}needle\n`,
    'a.txt': 'needle sorts after the a/ folder\n',
    'a/z.txt': 'needle in a/\n',
    '.git/HEAD': 'needle in git internals\n',
  };
  for (let i = 0; i < 30; i++) files[`many/f${String(i).padStart(2, '0')}.txt`] = `needle ${i}\nneedle again ${i}\n`;
  for (const [rel, c] of Object.entries(files)) write(ws, rel, c);
  symlinkSync(path.join(out, 'secret.txt'), path.join(ws, 'link-out.txt'));
  symlinkSync(out, path.join(ws, 'linkdir'));
  linkSync(path.join(out, 'hardsrc.txt'), path.join(ws, 'hard.txt'));
  execFileSync('mkfifo', [path.join(ws, 'pipe.ts')]);
  const h = new Harness([ws]);
  return { ws, out, h, done: () => { h.close(); t.cleanup(); } };
}

/**
 * One grep call with the engine set: 'rg' forces ripgrep (even on these small trees, which grep
 * searches itself by default), 'builtin' turns ripgrep off, 'auto' is the default choice
 * (ripgrep on PATH, small folders searched here).
 */
export async function grep(h: Harness, engine: 'rg' | 'builtin' | 'auto', args: Record<string, unknown>, env: Record<string, string> = {}): Promise<Env> {
  const saved = { ...process.env };
  process.env.TOOLGATE_RG = engine === 'builtin' ? 'off' : '';
  if (engine === 'rg') process.env.TOOLGATE_GREP_WALK_MAX = '0';
  else delete process.env.TOOLGATE_GREP_WALK_MAX;
  Object.assign(process.env, env);
  try {
    const res = await h.call('grep', args) as Env;
    assert.ok(h.rt.tools.get('grep')!.envelope.safeParse(res).success, 'envelope matches the output schema');
    return res;
  } finally {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  }
}

/** The part of a result both engines must agree on. */
export function comparable(e: Env) {
  if (!e.ok) return { error: e.error?.code };
  const { engine: _e, fallback_used: _f, fallback_reason: _r, ...data } = e.data;
  return { data, text: e.text.replace(/ Built-in search used: [^.]*\./, '') };
}

export const QUERIES: Array<Record<string, unknown>> = [
  { pattern: 'needle' },
  { pattern: 'needle', output_mode: 'content' },
  { pattern: 'needle', output_mode: 'count' },
  { pattern: 'needle', output_mode: 'content', context: 1, path: 'sub' },
  { pattern: 'NEEDLE', ignore_case: true, output_mode: 'count' },
  { pattern: '(?i)^needle', output_mode: 'content' },
  { pattern: 'Foo() {', fixed_strings: true, output_mode: 'content' },
  { pattern: '^def \\w+\\(', output_mode: 'content' },
  { pattern: 'needle$', output_mode: 'content' },
  { pattern: 'n[[:alpha:]]+dle \\d+', output_mode: 'count' },
  { pattern: 'needle', type: 'ts' },
  { pattern: 'needle', type: 'md', hidden: true },
  { pattern: 'needle', glob: '*.md' },
  { pattern: 'needle', glob: ['sub/**', '!**/deep/**'] },
  { pattern: 'needle', glob: ['!many', '!*.txt'] },
  { pattern: 'needle', hidden: true },
  { pattern: 'needle', hidden: true, glob: ['.env*', '*.pem', '**/.env'] },
  { pattern: 'needle\\(\\):\\n\\s+return', multiline: true, output_mode: 'content' },
  { pattern: 'needle \\d+\\nneedle', multiline: true, output_mode: 'count' },
  { pattern: 'needle', output_mode: 'content', head_limit: 5, offset: 3 },
  { pattern: 'needle', head_limit: 4 },
  { pattern: 'needle', path: 'sub/deep/d.md', output_mode: 'content', context: 2 },
  { pattern: 'needle', path: 'sub/deep', output_mode: 'count' },
  { pattern: 'needle', path: 'build', output_mode: 'content' },
  { pattern: 'nothing-matches-this' },
  { pattern: 'foo(' },
  { pattern: '(?=needle)x' },
  { pattern: 'needle\\nx' },
];

