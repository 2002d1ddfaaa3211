// Review of 6e53252 (globTooCostly for glob's pattern and list_dir's ignore): picomatch passes
// some glob text on as raw regex, and the limit counted only "*", "{" and extglob openers per
// segment. Each of these held the server's thread for seconds before glob-cost.ts refused them:
// a plain group `(a+)+b` (nested quantifiers: 2^n), `+` after a class `[a]+[a]+…` (also from a
// .gitignore line), `+(a|[a])` (past picomatch's own extglob check), a quoted `"["` that the
// scan read as a class opener, a run of four backslashes (picomatch leaves the next character
// unescaped: `\\\\+` is the regex `\\+`), and segments that multiply (`*a*a*a/*a*b`).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Harness, tempDir, writeIn } from '../../src/testing/helpers.js';
import { longestStall } from '../../src/testing/stall.js';

const STALL_MS = 1000;
const A = (n: number) => 'a'.repeat(n);

type Result = { ok: boolean; error?: { code: string; message: string }; text: string; data: { files?: string[]; entries?: Array<{ name: string }> } };

function setup(t: { after: (f: () => void) => void }, files: Record<string, string>) {
  const d = tempDir('tg-review-globcost-');
  t.after(d.cleanup);
  for (const [name, text] of Object.entries(files)) writeIn(d.dir, name, text);
  const h = new Harness([d.dir]);
  t.after(() => h.close());
  return h;
}

async function refusedFast(h: Harness, tool: string, args: Record<string, unknown>) {
  const { value, stall } = await longestStall(() => h.call(tool, args));
  const r = value as unknown as Result;
  assert.ok(stall < STALL_MS, `${tool} ${JSON.stringify(args)}: the event loop stalled ${stall.toFixed(0)} ms`);
  assert.equal(r.error?.code, 'InvalidArguments', `${tool} ${JSON.stringify(args)}: ${r.text}`);
}

test('glob, grep and list_dir refuse globs picomatch turns into backtracking regex syntax', { timeout: 300_000 }, async (t) => {
  const h = setup(t, {
    [A(28)]: 'x\n',
    [`[${A(90)}]`]: 'x\n',
    [`${A(26)}!`]: 'x\n',
    [`${A(200)}/${A(200)}c`]: 'x\n',
    [`x/${'\\'.repeat(60)}!`]: 'x\n',
  });
  const patterns = ['(a+)+b', '[a]+[a]+[a]+[a]+[a]+[a]+b', '+(a|[a])b', '"["*a*a*a*a*a*b]', '*a*a*a/*a*b', `x/${'\\\\\\\\+'.repeat(6)}b`];
  for (const pattern of patterns) await refusedFast(h, 'glob', { pattern });
  await refusedFast(h, 'grep', { pattern: 'x', glob: '(a+)+b' });
  await refusedFast(h, 'list_dir', { path: '.', ignore: ['(a+)+b'] });
  // Controls: ordinary globs still run.
  const ok = await h.call('glob', { pattern: '*a*a/*a*c' }) as unknown as Result;
  assert.deepEqual(ok.data.files, [`${A(200)}/${A(200)}c`], ok.text);
  const ts = await h.call('glob', { pattern: '**/*.{ts,tsx}' }) as unknown as Result;
  assert.equal(ts.ok, true, ts.text);
});

test('a .gitignore line with "+" after a class is left out, not matched for seconds by grep\'s own walk', { timeout: 120_000 }, async (t) => {
  const h = setup(t, { '.gitignore': '[a]+[a]+[a]+[a]+[a]+[a]+b\n', [A(100)]: 'x\n' });
  const saved = process.env.TOOLGATE_RG;
  process.env.TOOLGATE_RG = 'off';
  try {
    const { value, stall } = await longestStall(() => h.call('grep', { pattern: 'x', output_mode: 'files_with_matches' }));
    const r = value as unknown as Result;
    assert.ok(stall < STALL_MS, `the event loop stalled ${stall.toFixed(0)} ms`);
    assert.equal(r.ok, true, r.text);
  } finally {
    if (saved === undefined) delete process.env.TOOLGATE_RG; else process.env.TOOLGATE_RG = saved;
  }
});
