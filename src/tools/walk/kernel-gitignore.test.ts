import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { Envelope } from '../../core/envelope.js';
import { Harness, tempDir, withEngine } from '../../testing/helpers.js';
import { locateRg } from '../grep/rg.js';

// These tests compare the two engines on small trees: ripgrep runs even where glob and grep would
// search a folder this small themselves (TOOLGATE_GLOB_WALK_MAX, TOOLGATE_GREP_WALK_MAX; servers
// spawned here inherit them).
process.env.TOOLGATE_GLOB_WALK_MAX = '0';
process.env.TOOLGATE_GREP_WALK_MAX = '0';

/**
 * The Linux kernel's root .gitignore starts with `.*` (and re-includes a few dot-files). A
 * search from the workspace root must not treat the root itself (`.`) as hidden or ignored:
 * both grep engines, glob and list_dir must find what is there, and agree with `rg`.
 */
const KERNEL_GITIGNORE = [
  '# SPDX-License-Identifier: GPL-2.0-only',
  '#',
  '# NOTE! Don\'t add files that are generated in specific',
  '# subdirectories here.',
  '#',
  '# Normal rules (sorted alphabetically)',
  '#',
  '.*',
  '*.a',
  '*.o',
  '*.ko',
  '*.mod',
  '/linux',
  '/vmlinux*',
  '!.gitignore',
  '!.mailmap',
  '!.rustfmt.toml',
  '',
].join('\n');

const NEEDLE = 'kmem_cache_zalloc';

function build(hiddenParent: boolean) {
  const t = tempDir('tg-kernel-');
  // The workspace may itself live under a dot-folder (bench/.data, ~/.cache/...).
  const ws = path.join(t.dir, hiddenParent ? '.cache/linux' : 'linux');
  const files: Record<string, string> = {
    '.gitignore': KERNEL_GITIGNORE,
    '.mailmap': `${NEEDLE} in mailmap (re-included dot-file, but hidden)\n`,
    '.config': `${NEEDLE} in .config (ignored and hidden)\n`,
    'include/linux/slab.h': `static inline void *${NEEDLE}(void);\n`,
    'mm/slab.c': `void *p = ${NEEDLE}(c, GFP_KERNEL);\n`,
    'mm/slab.o': `${NEEDLE} object (ignored)\n`,
    'drivers/net/e1000.h': `#define X ${NEEDLE}\n`,
    'drivers/net/e1000.c': 'int main(void) { return 0; }\n',
    'vmlinux.lds': `${NEEDLE} (ignored, root-anchored)\n`,
    'Makefile': 'all:\n',
  };
  for (const [rel, c] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
    writeFileSync(path.join(ws, rel), c);
  }
  const h = new Harness([ws]);
  return { ws, h, done: () => { h.close(); t.cleanup(); } };
}

const EXPECTED_GREP = ['drivers/net/e1000.h', 'include/linux/slab.h', 'mm/slab.c'];

for (const hiddenParent of [false, true]) {
  const where = hiddenParent ? 'a workspace under a dot-folder' : 'a workspace';
  for (const engine of ['rg', 'builtin'] as const) {
    test(`grep (${engine}) from the root of ${where} whose .gitignore starts with .* finds the matches`, async (t) => {
      if (engine === 'rg' && !(await locateRg())) return t.skip('needs ripgrep (rg) on PATH');
      const { h, done } = build(hiddenParent);
      try {
        for (const args of [{}, { path: '.' }]) {
          const files = await withEngine(engine, async () => {
            const r = await h.call('grep', { pattern: NEEDLE, output_mode: 'files_with_matches', ...args }) as Envelope & { data: { files: string[]; engine: string } };
            assert.equal(r.ok, true, JSON.stringify(r.error));
            assert.equal(r.data.engine, engine === 'rg' ? 'ripgrep' : 'builtin');
            return r.data.files;
          });
          assert.deepEqual([...files].sort(), EXPECTED_GREP, `path ${JSON.stringify(args)}`);
          const content = await withEngine(engine, async () => {
            const r = await h.call('grep', { pattern: NEEDLE, output_mode: 'content', ...args }) as Envelope & { data: { matches: Array<{ file: string }> } };
            return r.data.matches.map((m) => m.file);
          });
          assert.deepEqual([...new Set(content)].sort(), EXPECTED_GREP);
        }
      } finally {
        done();
      }
    });
  }

  test(`glob and list_dir from the root of ${where} whose .gitignore starts with .* see the tree`, async () => {
    const { h, done } = build(hiddenParent);
    try {
      for (const engine of ['rg', 'builtin'] as const) {
        const g = await withEngine(engine, () => h.call('glob', { pattern: '**/*.h' })) as Envelope & { data: { files: string[] } };
        assert.deepEqual([...g.data.files].sort(), ['drivers/net/e1000.h', 'include/linux/slab.h']);
        const g2 = await withEngine(engine, () => h.call('glob', { pattern: '**/*.[ch]', path: '.' })) as Envelope & { data: { files: string[] } };
        assert.deepEqual([...g2.data.files].sort(), ['drivers/net/e1000.c', 'drivers/net/e1000.h', 'include/linux/slab.h', 'mm/slab.c']);
      }
      const l = await h.call('list_dir', { path: '.' }) as Envelope & { data: { entries: Array<{ name: string }> } };
      assert.deepEqual(l.data.entries.map((e) => e.name).sort(), ['Makefile', 'drivers', 'include', 'mm']);
    } finally {
      done();
    }
  });

  test(`grep agrees with rg -l on ${where} with the kernel's .gitignore`, async (t) => {
    const rg = await locateRg();
    if (!rg) return t.skip('needs ripgrep (rg) on PATH');
    const { ws, h, done } = build(hiddenParent);
    try {
      const raw = execFileSync(rg, ['--no-config', '--no-require-git', '-l', '-F', NEEDLE], { cwd: ws, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).split('\n').filter(Boolean).sort();
      // rg also searches a dot-file that an ignore file re-includes (!.mailmap); toolgate shows
      // dot-names only with hidden: true, then the same set as rg.
      assert.deepEqual(raw, ['.mailmap', ...EXPECTED_GREP], 'the raw tool sees the same files');
      for (const engine of ['rg', 'builtin'] as const) {
        const r = await withEngine(engine, () => h.call('grep', { pattern: NEEDLE, fixed_strings: true, output_mode: 'files_with_matches' })) as Envelope & { data: { files: string[] } };
        assert.deepEqual([...r.data.files].sort(), raw.filter((f) => !f.startsWith('.')), engine);
        const all = await withEngine(engine, () => h.call('grep', { pattern: NEEDLE, fixed_strings: true, output_mode: 'files_with_matches', hidden: true })) as Envelope & { data: { files: string[] } };
        assert.deepEqual([...all.data.files].sort(), raw, `${engine} with hidden: true`);
      }
    } finally {
      done();
    }
  });
}
