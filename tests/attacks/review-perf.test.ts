import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import picomatch from 'picomatch';
import { Harness, policyFromYaml, settle, tempDir, withEngine } from '../../src/testing/helpers.js';
import { locateRg } from '../../src/tools/grep/rg.js';
import { compileGlobs, requiredLiterals } from '../../src/workspace/path-rules.js';
import { GENESIS, hashLine } from '../../src/audit/record.js';
import { verifyAudit } from '../../src/audit/verify.js';

// These tests compare the two engines on small trees: ripgrep runs even where glob and grep would
// search a folder this small themselves (TOOLGATE_GLOB_WALK_MAX, TOOLGATE_GREP_WALK_MAX; servers
// spawned here inherit them).
process.env.TOOLGATE_GLOB_WALK_MAX = '0';
process.env.TOOLGATE_GREP_WALK_MAX = '0';

// review-perf: an attack review of what the performance work changed (issue 11).

// ---------------------------------------------------------------------------------------------
// 1. Deny lists: the literal pre-check in compileGlobs must never say "no" where picomatch says "yes".

/** compileGlobs without the pre-check: plain picomatch, one pattern. */
function plain(p0: string): (p: string) => boolean {
  const p = p0.length > 1 ? p0.replace(/\/+$/, '') : p0;
  return p.includes('/') ? picomatch(p.replace(/^\/+/, ''), { dot: true }) : picomatch(p, { dot: true, basename: true });
}

// [deny pattern, a path plain picomatch matches]
const QUOTED: Array<[string, string]> = [
  ['"secret".pem', 'secret.pem'], // picomatch drops the quotes: the literal `"secret".pem` is in no path
  ['**/"id_rsa"', 'home/.ssh/id_rsa'],
  ['"*.key"', '*.key'],
  ['keys/"a b"/*', 'keys/a b/x'],
  ['"', ''],
];

test('deny globs: a quoted run (picomatch drops the quotes) is still denied', () => {
  for (const [pat, p] of QUOTED) {
    if (!p) continue;
    assert.equal(plain(pat)(p), true, `control: picomatch matches ${pat} on ${p}`);
    assert.equal(compileGlobs([pat])(p), true, `${pat} on ${p}`);
    assert.equal(compileGlobs(['*.nothing', pat])(p), true, `${pat} among others on ${p}`);
  }
  assert.deepEqual(requiredLiterals('"a".pem'), []);
});

test('deny globs: a generated table of patterns and paths answers exactly as plain picomatch', () => {
  const A = ['a', 'b', '.', '/', '*', '?', '**', '"', '$', '^', '~', '#', "'", '-', ' ', 'é', 'e\u0301', '%', '=', ':', './', '\n', 'A'];
  const P = ['a', 'b', '.', '/', '"', '$', '^', '~', '#', "'", '-', ' ', 'é', 'e\u0301', '%', '=', ':', './', '\n', 'A', '\r'];
  let seed = 7;
  const r = (n: number) => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed % n; };
  const bad: string[] = [];
  let compared = 0;
  for (let i = 0; i < 6000 && bad.length < 5; i++) {
    let pat = '';
    for (let j = 1 + r(5); j > 0; j--) pat += A[r(A.length)];
    let ours: (p: string) => boolean; let ref: (p: string) => boolean;
    try { ours = compileGlobs([pat]); ref = plain(pat); } catch { continue; }
    const cands = [pat, pat.replace(/"/g, ''), pat.replace(/\*+|\?/g, 'a').replace(/"/g, ''), `x/${pat.replace(/"/g, '')}`];
    for (let k = 0; k < 20; k++) { let s = ''; for (let j = 1 + r(6); j > 0; j--) s += P[r(P.length)]; cands.push(s); }
    for (const c of cands) {
      compared++;
      if (ours(c) !== ref(c)) bad.push(`${JSON.stringify(pat)} on ${JSON.stringify(c)}: ours ${ours(c)}`);
    }
  }
  assert.ok(compared > 50_000, `compared ${compared}`);
  assert.deepEqual(bad, []);
});

// ---------------------------------------------------------------------------------------------
// 2. glob's ripgrep engine: odd names, names like options, ignore files the model writes.

interface GlobData { files: string[]; total: number; skipped_by_policy?: number; engine: string; fallback_reason: string | null; truncated: boolean }

async function globWith(h: Harness, engine: 'rg' | 'builtin' | 'index', args: Record<string, unknown>) {
  // The index answers from folders unchanged for a moment (else glob walks): let the tree settle.
  if (engine === 'index') await settle(h.workspace);
  return withEngine(engine, async () => {
    const env = await h.call('glob', args) as { ok: boolean; data: GlobData; error?: { code: string } };
    // An .ignore above the start that re-includes (this tree's root one does) sends the ripgrep engine's call to the walker.
    const reIncluded = engine === 'rg' && env.ok && env.data.engine === 'builtin' && /re-includes/.test(env.data.fallback_reason ?? '') && typeof args.path === 'string';
    if (env.ok && !reIncluded) assert.equal(env.data.engine, engine === 'rg' ? 'ripgrep' : engine, `${JSON.stringify(args)}: ${env.data.fallback_reason}`);
    return env;
  });
}

const ODD_POLICY = `
rules:
  - { tool: "*", path: "priv/**", decision: deny }
  - { tool: "*", path: "ask/**", decision: ask }
`;

function oddTree() {
  const t = tempDir('tg-rp-glob-');
  const ws = path.join(t.dir, 'ws');
  const out = path.join(t.dir, 'out');
  mkdirSync(out);
  writeFileSync(path.join(out, 'OUTSIDE-rp.h'), '');
  const w = (rel: string | Buffer, content = '') => {
    const abs = Buffer.isBuffer(rel) ? Buffer.concat([Buffer.from(`${ws}/`), rel]) : path.join(ws, rel);
    if (!Buffer.isBuffer(rel)) mkdirSync(path.dirname(abs as string), { recursive: true });
    writeFileSync(abs, content);
  };
  mkdirSync(ws, { recursive: true });
  for (const n of ['ok.h', 'nl\nname.h', 'cr\rname.h', '-x.h', '--files.h', '-name.h', '(.h', '-o.h', `${'L'.repeat(250)}.h`, ' sp .h',
    'sub/-type/y.h', 'sub/--/z.h', 'nl\ndir/w.h', '.gitignore', 'ign.h', 'ign2.h',
    // secrets and denied/asked places whose names try the same tricks
    '.env', 'x/.env\n.h', 'k\n.pem', '-k.pem', 'priv/p.h', 'priv/-x.h', 'priv/nl\n.h', 'ask/a.h', 'ask/-b.h']) w(n);
  writeFileSync(path.join(ws, '.gitignore'), 'ign.h\nign2.h\n');
  // A model-written .ignore trying to reveal what .gitignore hides, or a denied file (.rgignore: see below).
  writeFileSync(path.join(ws, '.ignore'), '!.env\n!priv/\n!*.pem\n');
  writeFileSync(path.join(ws, 'sub', '.ignore'), '!*\n');
  w(Buffer.from([0xff, 0xfe, 0x2e, 0x68])); // "\xff\xfe.h": not UTF-8
  w(Buffer.from([0x6b, 0xff, 0x2e, 0x70, 0x65, 0x6d])); // "k\xff.pem": a secret name, not UTF-8
  symlinkSync(out, path.join(ws, '-L'));
  symlinkSync(path.join(out, 'OUTSIDE-rp.h'), path.join(ws, '-out.h'));
  symlinkSync(path.join(ws, 'nowhere'), path.join(ws, 'nl\ndangling.h'));
  symlinkSync(out, path.join(ws, 'priv', 'out-link'));
  const h = new Harness([ws], { policy: policyFromYaml(ODD_POLICY), stateDir: path.join(t.dir, 'state') });
  return { ws, h, done: () => { h.close(); t.cleanup(); } };
}

const NEVER = ['OUTSIDE-rp', '.env"', '.pem"', 'priv/', 'ask/', '-L/', 'ign.h', 'ign2.h'];

test('glob engines on odd names: newlines, \\r, leading -, option-like names, non-UTF-8, long names; same answers, no leaks', async (t) => {
  const rg = await locateRg({ ...process.env, TOOLGATE_RG: '' });
  const s = oddTree();
  t.after(s.done);
  const cases: Array<Record<string, unknown>> = [
    { pattern: '**/*.h' }, { pattern: '**/*' }, { pattern: '**', hidden: true }, { pattern: '-*' }, { pattern: '**/*.pem', hidden: true, gitignore: false },
    { pattern: '**/*', path: 'sub' }, { pattern: '**/*.h', path: '-L' }, { pattern: '-L/**' }, { pattern: 'nl\n*/*' }, { pattern: '../out/*' },
    { pattern: '**/ign*' }, { pattern: '**/*', hidden: true, gitignore: false },
  ];
  for (const args of cases) {
    const b = await globWith(s.h, 'builtin', args);
    const ix = await globWith(s.h, 'index', args);
    // The index answers as the walker does, except for a name that is not UTF-8: the walker
    // returns it with U+FFFD; the index, as ripgrep, checks each name on disk, where that one names nothing.
    const strict = (e: typeof b) => (e.ok ? { files: e.data.files.filter((f) => !f.includes('\uFFFD')), total: e.data.total - e.data.files.filter((f) => f.includes('\uFFFD')).length, skipped: e.data.skipped_by_policy } : e.error?.code);
    assert.deepEqual(strict(ix), strict(b), `${JSON.stringify(args)}: index vs walker`);
    assert.ok(!ix.ok || !ix.data.files.some((f) => f.includes('\uFFFD')), 'the index returns no name that is not UTF-8');
    const engines = rg ? [b, await globWith(s.h, 'rg', args), ix] : [b, ix];
    for (const e of engines) {
      if (!e.ok) continue;
      const listed = JSON.stringify(e.data.files);
      for (const x of NEVER) {
        if (x.startsWith('ign') && args.gitignore === false) continue;
        assert.ok(!listed.includes(x), `${JSON.stringify(args)} (${e.data.engine}) leaks ${x}: ${listed}`);
      }
    }
    if (rg) {
      const [x, y] = engines as [typeof b, typeof b];
      // Documented difference: a name that is not UTF-8 is returned with U+FFFD by the walker only.
      const view = (e: typeof b) => (e.ok ? { files: e.data.files.filter((f) => !f.includes('\uFFFD')).sort(), total: e.data.total - e.data.files.filter((f) => f.includes('\uFFFD')).length, skipped: e.data.skipped_by_policy ?? 0 } : e.error?.code);
      assert.deepEqual(view(y), view(x), `${JSON.stringify(args)}: ripgrep vs walker`);
    }
  }
  const all = await globWith(s.h, rg ? 'rg' : 'builtin', { pattern: '**/*.h' });
  assert.ok(all.ok && all.data.files.includes('nl\nname.h') && all.data.files.includes('-x.h') && all.data.files.includes('--files.h'), 'control: odd names are listed');
  if (!rg) t.diagnostic('ripgrep engine not compared: needs rg on PATH');
});

test('glob: a model-written .rgignore cannot reveal a denied or secret file to any engine', async (t) => {
  const rg = await locateRg({ ...process.env, TOOLGATE_RG: '' });
  const s = oddTree();
  t.after(s.done);
  writeFileSync(path.join(s.ws, '.rgignore'), '!.env\n!priv/\n!*.pem\n!ign.h\n');
  for (const engine of rg ? (['rg', 'builtin', 'index'] as const) : (['builtin', 'index'] as const)) {
    for (const args of [{ pattern: '**/*', hidden: true }, { pattern: '**/*.pem', hidden: true }, { pattern: 'priv/**' }]) {
      const e = await globWith(s.h, engine, args);
      const listed = JSON.stringify(e.ok ? e.data.files : []);
      for (const x of ['OUTSIDE-rp', '.env"', '.pem"', 'priv/', 'ask/']) assert.ok(!listed.includes(x), `${engine} ${JSON.stringify(args)} leaks ${x}: ${listed}`);
    }
  }
});

// The walker reads .rgignore as rg does (glob walks small folders itself even when rg is present,
// so the engines must agree on it); .gitignore is no policy boundary, so this is consistency, not a leak.
test('glob engines agree when a .rgignore re-includes a gitignored file', async (t) => {
  const rg = await locateRg({ ...process.env, TOOLGATE_RG: '' });
  if (!rg) return t.skip('needs ripgrep (rg) on PATH to compare the engines');
  const s = oddTree();
  t.after(s.done);
  writeFileSync(path.join(s.ws, '.rgignore'), '!ign.h\n');
  const a = await globWith(s.h, 'rg', { pattern: '**/ign*' });
  const b = await globWith(s.h, 'builtin', { pattern: '**/ign*' });
  const c = await globWith(s.h, 'index', { pattern: '**/ign*' });
  assert.ok(a.ok && a.data.files.some((f) => f.endsWith('ign.h')), `rg lists the re-included file: ${JSON.stringify(a.data)}`);
  assert.deepEqual(a.ok && a.data.files, b.ok && b.data.files);
  assert.deepEqual(c.ok && c.data.files, b.ok && b.data.files);
});

// ---------------------------------------------------------------------------------------------
// 6. audit verify now accepts an unfinished last line and one whole record past the head: someone
// who can append to or cut the file (not rewrite .head) must still not hide an acknowledged record.

function chain(n: number, prev = GENESIS): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) { const l = JSON.stringify({ seq: i, tool: 'write_file', decision: i === n - 1 ? 'allow' : 'deny', prev_hash: prev }); out.push(l); prev = hashLine(l); }
  return out;
}

const AUDIT_ATTACKS: Array<[string, (acked: string[]) => string]> = [
  ['the acknowledged last record cut to a partial line', (l) => `${l.slice(0, -1).join('\n')}\n${l.at(-1)!.slice(0, 30)}`],
  ['the acknowledged last record replaced by a partial forged one', (l) => `${l.slice(0, -1).join('\n')}\n{"seq":4,"tool":"read_file"`],
  ['the acknowledged last record replaced by a whole forged one chained to the one before', (l) => `${[...l.slice(0, -1), chain(1, hashLine(l.at(-2)!))[0]!].join('\n')}\n`],
  ['the acknowledged last record replaced by a forged one, plus a cut line after it', (l) => `${[...l.slice(0, -1), chain(1, hashLine(l.at(-2)!))[0]!].join('\n')}\n{"seq":`],
  ['the last two records removed, one forged record appended', (l) => `${[...l.slice(0, -2), chain(1, hashLine(l.at(-3)!))[0]!].join('\n')}\n`],
  ['a middle record removed, the tail kept', (l) => `${[...l.slice(0, 2), ...l.slice(3)].join('\n')}\n`],
];

test('audit verify: cutting or appending cannot hide an acknowledged record (the head names it)', async (t) => {
  const tmp = tempDir('tg-rp-audit-');
  t.after(tmp.cleanup);
  const file = path.join(tmp.dir, 'audit.jsonl');
  const acked = chain(5);
  const reset = () => { writeFileSync(file, `${acked.join('\n')}\n`); writeFileSync(`${file}.head`, `${hashLine(acked.at(-1)!)} 5\n`); };
  reset();
  assert.deepEqual(await verifyAudit(file), { ok: true, records: 5 }, 'control');
  appendFileSync(file, '{"seq":5,"to');
  assert.equal((await verifyAudit(file)).ok, true, 'control: a cut unacknowledged record after the head passes with a note');
  for (const [what, tamper] of AUDIT_ATTACKS) {
    reset();
    writeFileSync(file, tamper(acked));
    const v = await verifyAudit(file);
    assert.equal(v.ok, false, `${what}: ${JSON.stringify(v)}`);
  }
});
