// The built-in engine's worker for patterns JavaScript may backtrack on: the same answers as the
// in-thread search, and a runaway match never holds the server's thread — the time cap, a cancel
// or the end of the search stop it (the worker is ended with it).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { Workspace } from '../../workspace/workspace.js';
import { PathRules } from '../../workspace/path-rules.js';
import { builtinSearchDir } from './fallback.js';
import { toJsPattern } from './regex.js';
import { EXPIRED, needsWorker, RegexMatcher } from './regex-matcher.js';
import { searchText } from './search-text.js';
import { DenyFilter, Selection } from './select.js';
import type { OutputMode, Query } from './types.js';
import { confirmContent } from './verify.js';

const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'tg-rxw-')));
after(() => rmSync(base, { recursive: true, force: true }));
const code = (e: unknown) => (e as { code?: string }).code;
const query = (pattern: string, mode: OutputMode = 'content'): Query =>
  ({ pattern, fixed_strings: false, ignore_case: false, multiline: false, context: 0, mode, hidden: false, globs: [], typeGlobs: [] }) as Query;
/** A line `(a+)+b` takes about 2^n steps on: never finishes within a test. */
const RUNAWAY = `${'a'.repeat(40)}!\n`;
/** Turns of the event loop while `p` is pending: a search on this thread would allow none. */
async function turnsWhile<T>(p: Promise<T>): Promise<{ value: T; turns: number }> {
  let turns = 0;
  let done = false;
  const spin = (async () => { while (!done) { await new Promise((r) => setImmediate(r)); turns++; } })();
  try {
    return { value: await p, turns };
  } finally {
    done = true;
    await spin;
  }
}

test('needsWorker: literal text and patterns without repetition stay in the thread; the rest go to the worker', () => {
  const js = (pattern: string, fixed_strings = false) => toJsPattern({ ...query(pattern), fixed_strings });
  assert.equal(needsWorker(js('(a+)+b', true)), false);
  assert.equal(needsWorker(js('foo_bar')), false);
  assert.equal(needsWorker(js('fo[o]b.r')), false);
  assert.equal(needsWorker(js('^\\x41\\p{L}\\pN$')), false, '\\u{…} and \\p{…} braces are no repetition');
  for (const p of ['(a+)+b', 'a.*b', '\\w+', 'x{2,}', '(ab|cd)e']) assert.equal(needsWorker(js(p)), true, p);
  // Judged on the translation: in "[[:alpha:])]" the ")" is in the class, so the groups after it are groups.
  assert.equal(needsWorker(js('[[:alpha:])](a|a)(a|a)x')), true);
});

test('the worker answers as the in-thread search does (content, count, files; flags and multi-byte text)', async () => {
  const texts = ['alpha beta\nbeta gamma beta\n', 'ünïcödé aab ab\nab\n', 'no match here\n', `${'x'.repeat(5000)}abab${'y'.repeat(300)}\n`];
  for (const pattern of ['(ab)+', 'b.*a', '\\w+a\\b', 'be(ta|tb)', '[ü-ü]n.+é']) {
    for (const mode of ['content', 'count', 'files_with_matches'] as const) {
      const q = query(pattern, mode);
      const pat = toJsPattern(q);
      const m = new RegexMatcher(pat, q, new AbortController().signal, Date.now() + 60_000);
      try {
        for (const text of texts) assert.deepEqual(await m.search(text), searchText(text, pat, false, mode, 0), `${pattern} ${mode}`);
      } finally {
        m.close();
      }
    }
  }
});

test('a runaway match: the event loop keeps turning, and the time cap ends the worker', { timeout: 30_000 }, async () => {
  const q = query('(a+)+b');
  const m = new RegexMatcher(toJsPattern(q), q, new AbortController().signal, Date.now() + 1500);
  const { value, turns } = await turnsWhile(m.search(RUNAWAY));
  assert.equal(value, EXPIRED);
  assert.ok(turns > 10, `the loop turned ${turns} times while the match ran`);
  assert.equal((m as unknown as { worker: unknown }).worker, null, 'the worker was ended');
  assert.equal(await m.search('ab'), EXPIRED, 'after the cap, nothing more is searched');
});

test('a runaway match: the call\'s cancel rejects at once with Cancelled and ends the worker', { timeout: 30_000 }, async () => {
  const q = query('(a+)+b');
  const ctrl = new AbortController();
  const m = new RegexMatcher(toJsPattern(q), q, ctrl.signal, Date.now() + 600_000);
  const p = m.search(RUNAWAY);
  setTimeout(() => ctrl.abort(), 300);
  await assert.rejects(p, (e) => code(e) === 'Cancelled');
  assert.equal((m as unknown as { worker: unknown }).worker, null);
});

function tree(name: string): { dir: string; ws: Workspace } {
  const dir = path.join(base, name);
  mkdirSync(path.join(dir, 'sub'), { recursive: true });
  writeFileSync(path.join(dir, 'a-ok.txt'), 'aab\n');
  writeFileSync(path.join(dir, 'sub', 'runaway.txt'), RUNAWAY);
  writeFileSync(path.join(dir, 'z-ok.txt'), 'xab\n');
  return { dir, ws: new Workspace([dir], PathRules.withDefaults()) };
}

test('the built-in walk with a backtracking pattern: other work goes on, the time cap gives a partial answer, a cancel stops it', { timeout: 30_000 }, async () => {
  const { dir, ws } = tree('walk');
  const q = query('(a+)+b');
  const root = { abs: dir, path: dir, wsRoot: dir, relToRoot: '' };
  const common = { q, pat: toJsPattern(q), select: new Selection(q), deny: new DenyFilter(ws, '', dir), needed: 101, allowHardlinks: false, visitCap: 1e6 };
  const { value, turns } = await turnsWhile(builtinSearchDir(root, { ...common, deadline: Date.now() + 1500, signal: new AbortController().signal }));
  assert.equal(value.capped, 'time');
  assert.equal(value.complete, false);
  assert.ok(turns > 10, `the loop turned ${turns} times`);
  assert.deepEqual(value.hits.map((h) => h.rel), ['a-ok.txt'], 'what was found before the runaway file, in walk order');

  const ctrl = new AbortController();
  const p = builtinSearchDir(root, { ...common, deadline: Date.now() + 600_000, signal: ctrl.signal });
  setTimeout(() => ctrl.abort(), 300);
  await assert.rejects(p, (e) => code(e) === 'Cancelled');
});

test('ripgrep\'s hits re-checked with a backtracking pattern (confirmContent): in the worker, expired at the time cap', { timeout: 30_000 }, async () => {
  const { dir } = tree('confirm');
  for (const mode of ['files_with_matches', 'count'] as const) {
    const q = query('(a+)+b', mode);
    const hits = ['a-ok.txt', 'sub/runaway.txt'].map((rel) => ({ rel, count: 1, records: [] }));
    const check = { mode, pat: toJsPattern(q), multiline: false, allowHardlinks: false, signal: new AbortController().signal, deadline: Date.now() + 1500 };
    const { value: c, turns } = await turnsWhile(confirmContent(hits, dir, 10, check));
    assert.equal(c.expired, true, mode);
    assert.deepEqual(c.hits.map((h) => h.rel), ['a-ok.txt'], `${mode}: the unconfirmed file is left out`);
    assert.ok(turns > 10, `${mode}: the loop turned ${turns} times`);
  }
});
