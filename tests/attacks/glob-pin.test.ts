// glob's ripgrep engine re-checks what rg listed before returning it. A folder on the way to a
// match swapped for a link to the outside between the folder's check and the entry's check (and
// swapped back) must not let a name through whose file exists only outside: that would be an
// existence oracle for outside (and denied) paths.
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, renameSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { tempDir, whileSwapping } from '../../src/testing/helpers.js';
import { recheckCandidates, type Candidate } from '../../src/tools/glob/recheck.js';

const skipOffLinux = process.platform === 'linux' ? false : 'needs /proc/self/fd (Linux): elsewhere the re-check is by path';

function fixture() {
  const t = tempDir('tg-glob-pin-');
  const ws = path.join(t.dir, 'ws');
  const out = path.join(t.dir, 'outside');
  mkdirSync(path.join(ws, 'a', 'b'), { recursive: true });
  mkdirSync(path.join(out, 'b'), { recursive: true });
  writeFileSync(path.join(ws, 'a', 'b', 'inside.txt'), 'in\n');
  // Exist only outside: out/id_rsa (reached when a/b is a link to out), out/b/id_rsa (when a is).
  for (const f of ['id_rsa', 'inside.txt', 'b/id_rsa', 'b/inside.txt']) writeFileSync(path.join(out, f), 'secret\n');
  return { ...t, ws, out };
}

for (const swapRel of ['a/b', 'a', '']) {
  test(`a folder (${swapRel || 'the start'}) swapped for a link between its check and its entries' check lets no outside name through`, { skip: skipOffLinux }, (t) => {
    const f = fixture();
    t.after(f.cleanup);
    const base = swapRel === '' ? path.join(f.ws, 'a') : f.ws;
    const rel = (r: string) => (swapRel === '' ? r.slice(2) : r);
    const cands: Candidate[] = [{ rel: rel('a/b/inside.txt'), link: false }, { rel: rel('a/b/id_rsa'), link: false }];
    const p = swapRel === '' ? base : path.join(f.ws, swapRel);
    const target = swapRel === 'a/b' ? f.out : swapRel === 'a' ? f.out : f.out;
    let swapped = false;
    const r = recheckCandidates(base, cands, {
      afterFolder: () => {
        if (swapped) return;
        swapped = true;
        renameSync(p, `${p}.aside`);
        symlinkSync(target, p);
      },
    });
    assert.ok(swapped, 'the swap ran between the checks');
    // Swap back, as the attacker would.
    unlinkSync(p);
    renameSync(`${p}.aside`, p);
    assert.deepEqual(r.ok.map((c) => c.rel).filter((x) => x.endsWith('id_rsa')), [], 'a name that exists only outside passed');
    assert.equal(r.ok.length + r.moved, 2);
  });
}

test('controls: files and links that are there pass, missing/wrong-type entries do not; a deep tree (depth 60) works', { skip: skipOffLinux }, (t) => {
  const f = fixture();
  t.after(f.cleanup);
  const deep = Array.from({ length: 60 }, (_, i) => `d${i}`).join('/');
  mkdirSync(path.join(f.ws, deep), { recursive: true });
  writeFileSync(path.join(f.ws, deep, 'x.h'), '');
  writeFileSync(path.join(f.ws, 'top.h'), '');
  writeFileSync(path.join(f.ws, 'a-b.h'), '');
  symlinkSync(path.join(f.ws, 'top.h'), path.join(f.ws, 'a', 'l.h'));
  const cands: Candidate[] = [
    { rel: `${deep}/x.h`, link: false }, { rel: 'a/b/inside.txt', link: false }, { rel: 'top.h', link: false },
    { rel: 'a-b.h', link: false }, { rel: 'a/l.h', link: true }, { rel: 'd0/d1/x.h', link: false },
    { rel: 'a/l.h', link: false }, { rel: 'top.h', link: true }, { rel: 'a/b', link: false }, { rel: 'nope/x.h', link: false },
    { rel: 'd0/d1/d2/y.h', link: false },
  ];
  const before = readdirSync('/proc/self/fd').length;
  const r = recheckCandidates(f.ws, cands);
  assert.equal(readdirSync('/proc/self/fd').length, before, 'no descriptor leaked');
  assert.deepEqual(r.ok.map((c) => `${c.rel}:${c.link}`).sort(), [`${deep}/x.h:false`, 'a-b.h:false', 'a/b/inside.txt:false', 'a/l.h:true', 'top.h:false'].sort());
  assert.equal(r.moved, 6);
});

test('no descriptor leaks over many folders, nor when the start folder is a link', { skip: skipOffLinux }, (t) => {
  const f = fixture();
  t.after(f.cleanup);
  const cands: Candidate[] = [];
  for (let i = 0; i < 40; i++) for (let j = 0; j < 10; j++) {
    mkdirSync(path.join(f.ws, `p${i}`, `q${j}`), { recursive: true });
    writeFileSync(path.join(f.ws, `p${i}`, `q${j}`, 'f.h'), '');
    cands.push({ rel: `p${i}/q${j}/f.h`, link: false });
  }
  cands.reverse();
  const before = readdirSync('/proc/self/fd').length;
  assert.equal(recheckCandidates(f.ws, cands).ok.length, 400);
  symlinkSync(f.ws, path.join(path.dirname(f.ws), 'wslink'));
  const viaLink = recheckCandidates(path.join(path.dirname(f.ws), 'wslink'), cands);
  assert.deepEqual([viaLink.ok.length, viaLink.moved], [0, 400], 'a start folder that is a link is refused');
  assert.equal(readdirSync('/proc/self/fd').length, before, 'no descriptor leaked');
});

test('racing: a folder swapped for a link over and over never lets an outside name through', { skip: skipOffLinux }, async (t) => {
  const f = fixture();
  t.after(f.cleanup);
  let passed = 0;
  let inside = 0;
  await whileSwapping(path.join(f.ws, 'a', 'b'), f.out, 1500, () => {
    const r = recheckCandidates(f.ws, [{ rel: 'a/b/inside.txt', link: false }, { rel: 'a/b/id_rsa', link: false }]);
    for (const c of r.ok) if (c.rel.endsWith('id_rsa')) passed++; else inside++;
  });
  assert.equal(passed, 0, 'an outside-only name passed the re-check');
  assert.ok(inside > 0, 'control: the inside file passed at least once');
});

test('out of descriptors: the re-check fails loudly (IOError) instead of dropping entries as "changed place"', { skip: skipOffLinux }, async (t) => {
  const { spawnSync } = await import('node:child_process');
  const f = fixture();
  t.after(f.cleanup);
  for (let i = 0; i < 120; i++) {
    mkdirSync(path.join(f.ws, `d${i}`));
    writeFileSync(path.join(f.ws, `d${i}`, 'x.h'), '');
  }
  const script = path.join(f.dir, 'run.mts');
  const recheck = path.resolve('src/tools/glob/recheck.ts');
  writeFileSync(script, `
    import { recheckCandidates } from ${JSON.stringify(recheck)};
    const c = Array.from({ length: 120 }, (_, i) => ({ rel: 'd' + i + '/x.h', link: false }));
    try { const r = recheckCandidates(${JSON.stringify(f.ws)}, c); console.log('ok', r.ok.length, r.moved); }
    catch (e) { console.log('threw', e.code, e.message); }
  `);
  // A low open-file limit: Node and tsx use a few dozen; the re-check keeps up to 256 open.
  const r = spawnSync('bash', ['-c', `ulimit -n 80 && exec "${process.execPath}" --import tsx "${script}"`], { encoding: 'utf8', cwd: process.cwd() });
  const out = r.stdout.trim();
  if (/EMFILE|too many open files/i.test(r.stderr) && !out) return t.skip(`the runtime itself could not start under the limit: ${r.stderr.slice(0, 200)}`);
  assert.match(out, /^threw IOError .*file descriptors/, `${out}\n${r.stderr.slice(0, 500)}`);
});
