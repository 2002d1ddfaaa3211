import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { spillGuard } from '../../core/gate-audit.js';
import type { Session } from '../../core/session.js';
import { PolicyPathGate } from '../../policy/gate.js';
import { ancestors, NAMES, pathGen, relUnder } from '../../testing/gen-paths.js';
import { policyFromYaml } from '../../testing/helpers.js';
import { DEFAULT_DENY, PathRules } from '../../workspace/path-rules.js';
import { Workspace } from '../../workspace/workspace.js';
import { EntryFilter, STATE_DIR_NAME, type EntryType } from './entry-filter.js';
import { IgnoreStack } from './ignore-stack.js';

// EntryFilter.folder(dir) must answer every name exactly as EntryFilter.check does with the
// entry's own paths: it takes the deny test's quick answer by parts, and the denied, state and
// spill lists by name. Generated deny lists, roots (nested), denied and protected paths, spill
// folders, policy rules, ignore rules and entry types; every verdict compared.

const { rnd, pick, randomPattern, randomAbs } = pathGen(20261124);
const TYPES: EntryType[] = ['file', 'dir', 'symlink', 'other'];
const IGNORE = ['*.e\n', 'a\n!ab\n', 'r/\n', '/w\n', '**/b/*\n', '.e*\n!.ea\n', 'é\n'];

test('EntryFilter.folder answers every entry exactly as check() does (generated rules, roots, lists, spills, policy, ignore rules)', () => {
  const bad: string[] = [];
  const seen = new Map<string, number>();
  let compared = 0;
  for (let k = 0; k < 1200 && bad.length < 5; k++) {
    const pats = [...(rnd(3) ? [] : DEFAULT_DENY), ...Array.from({ length: rnd(2) ? 0 : 1 + rnd(2) }, randomPattern)];
    // Entries, some inside a state dir's runs folder (spills) and some named like a state dir.
    const stateDir = `${pick(['', '/a', '/a/b', '/r'])}/${pick(['.toolgate', 'st', 'runs'])}`;
    const entries = Array.from({ length: 12 }, () => {
      const r = rnd(6);
      if (r === 0) return `${stateDir}/runs/${pick(NAMES)}${rnd(2) ? `/${pick(NAMES)}` : ''}`;
      if (r === 1) return pick([`${stateDir}/runs`, `${pick(['', '/a'])}/.toolgate/runs`, `${pick(['', '/a', '/a/b'])}/${pick([STATE_DIR_NAME, 'runs', 'xruns', pick(NAMES)])}`]);
      return randomAbs();
    });
    const listed = entries.filter(() => rnd(4) === 0);
    let rules: PathRules;
    try {
      rules = new PathRules(pats, [], entries.filter(() => rnd(5) === 0), false, listed, []);
      rules.denyMatch('x');
    } catch { continue; }
    const policy = rnd(2) ? null : policyFromYaml(`version: 1\nrules:\n  - { tool: glob, path: ${JSON.stringify(pick(['**/a', 'a/**', '**/*.e', 'r', '/w/**', '**/runs/**']))}, decision: ${pick(['deny', 'ask', 'ask'])} }\n  - { tool: "*", decision: allow }\n`);
    const session = { spills: new Set(entries.filter(() => rnd(3) === 0)) } as unknown as Session;
    const spills = rnd(4) ? spillGuard(stateDir, session, stateDir) : undefined;
    const opts = { hidden: rnd(2) === 0, gitignore: rnd(3) !== 0 };
    for (const abs of entries) {
      const anc = ancestors(abs);
      const root = pick(anc);
      const bases = [...new Set([root, ...anc.filter(() => rnd(3) === 0)])];
      const r = rules.withBases(bases);
      const gate = policy ? PolicyPathGate.for('glob', policy, bases) : undefined;
      const filter = new EntryFilter(new Workspace([root], r, undefined, gate, spills), opts);
      const dirAbs = path.posix.dirname(abs);
      const name = path.posix.basename(abs);
      // Now and then the root as the walk names it is not a folder of the path (reached through a
      // link): relToRoot is then not a tail of the path, and the quick answer must not be taken.
      const dirRel = rnd(3) ? relUnder(root, dirAbs) : randomAbs().slice(1);
      const relToRoot = dirRel === '' ? name : `${dirRel}/${name}`;
      const stack = rnd(3) ? IgnoreStack.empty().with('', [pick(IGNORE), null, rnd(2) ? pick(IGNORE) : null]) : null;
      const ff = filter.folder(dirRel, dirAbs);
      for (const type of TYPES) {
        compared++;
        // folder() takes a path without the needle as never blocked: blocks() must agree.
        if (spills?.blocks(abs) && !abs.includes(spills.needle)) bad.push(`${abs}: blocked without the needle ${spills.needle}`);
        const want = filter.check(name, relToRoot, abs, type, stack);
        const got = ff.check(name, type, stack);
        seen.set(String(want), (seen.get(String(want)) ?? 0) + 1);
        if (got !== want) bad.push(`${JSON.stringify({ pats, abs, root, bases, type, listed, stateDir, opts })}: check ${want}, folder ${got}`);
      }
    }
  }
  assert.deepEqual(bad, []);
  // Every verdict came up often enough to be compared.
  for (const v of ['null', 'denied', 'state', 'policy', 'hidden', 'ignored']) assert.ok((seen.get(v) ?? 0) > 200, `verdict ${v}: ${seen.get(v) ?? 0} (${JSON.stringify([...seen])}; ${compared} compared)`);
});

test('EntryFilter.folder: a listed path, a state dir and a spill in the folder are caught by name; one in another folder is not', () => {
  const root = '/w';
  const rules = new PathRules([], [], ['/w/a/.st'], false, ['/w/a/secret', '/w/b/other'], [root]);
  const session = { spills: new Set(['/w/a/runs/mine']) } as unknown as Session;
  const filter = new EntryFilter(new Workspace([root], rules, undefined, undefined, spillGuard('/w/a', session, '/w/a')), { hidden: true, gitignore: false });
  const a = filter.folder('a', '/w/a');
  assert.equal(a.check('secret', 'file', null), 'denied');
  assert.equal(a.check('other', 'file', null), null, 'denied in b/, not in a/');
  assert.equal(a.check('.st', 'dir', null), 'state');
  assert.equal(a.check('.st', 'file', null), null, 'a state dir is a folder');
  const runs = filter.folder('a/runs', '/w/a/runs');
  assert.equal(runs.check('theirs', 'file', null), 'denied', 'another session\'s spill');
  assert.equal(runs.check('mine', 'file', null), null, 'this session\'s spill');
  assert.equal(filter.folder('', '/w').check('secret', 'file', null), null, 'the same name at the root');
});
