// Review of grep's small-folder path (small.ts): the default answer must equal ripgrep's, and the
// in-process search must not tell anything about what lies outside the workspace.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Harness, policyFromYaml, tempDir, writeIn } from '../../src/testing/helpers.js';
import { comparable, grep } from '../../src/tools/grep/grep-fixture.js';
import { locateRg } from '../../src/tools/grep/rg.js';

const rgHere = await locateRg({ ...process.env, TOOLGATE_RG: '' });
const needsRg = rgHere ? false : 'needs ripgrep (rg) on PATH: the small-folder choice only exists beside it';

async function same(h: Harness, args: Record<string, unknown>) {
  const auto = await grep(h, 'auto', args);
  const rg = await grep(h, 'rg', args);
  assert.deepEqual(comparable(auto), comparable(rg), `same answer for ${JSON.stringify(args)} (auto engine: ${auto.data?.engine})`);
  return auto;
}

test('ask rules: skipped_by_policy counts the same asked files and folders as ripgrep (hidden, ignored, unselected, links, empty folders)', { skip: needsRg }, async (t) => {
  const d = tempDir('tg-rs-ask-');
  t.after(d.cleanup);
  const files: Record<string, string> = {
    '.gitignore': 'ign/\n*.log\n',
    'a.txt': 'needle\n',
    'asked/q.txt': 'needle\n',
    'asked2/.h.txt': 'needle\n',
    'ign/asked/x.txt': 'needle\n',
    'x.log': 'needle\n',
    'q.md': 'needle\n',
    'sub/r.md': 'needle\n',
    '.hid/asked/z.txt': 'needle\n',
  };
  for (const [rel, c] of Object.entries(files)) writeIn(d.dir, rel, c);
  const { mkdirSync } = await import('node:fs');
  mkdirSync(`${d.dir}/emptyasked/asked`, { recursive: true });
  const pol = policyFromYaml(`
rules:
  - { tool: "*", path: "**/asked/**", decision: ask }
  - { tool: "*", path: "asked2/**", decision: ask }
  - { tool: "*", path: "**/*.log", decision: ask }
  - { tool: "*", path: "**/*.md", decision: ask }
`);
  const h = new Harness([d.dir], { policy: pol });
  t.after(() => h.close());
  for (const args of [{ pattern: 'needle' }, { pattern: 'needle', hidden: true }, { pattern: 'needle', glob: '*.txt' }, { pattern: 'needle', type: 'ts' }]) {
    await same(h, args);
  }
});
