// TOCTOU on the write path: a child process keeps exchanging a folder `d` with a symlink
// `d.alt` pointing outside the workspace (renameat2 RENAME_EXCHANGE through python3 when it is
// there, else two plain renames), while delete_file, apply_patch and write_file hammer paths
// under `d`. Whatever the envelopes say, nothing outside may be deleted, changed or created.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';

const N = 60;
const MS = Number(process.env.TOOLGATE_RACE_MS ?? 1500);

// Keeps the real folder filled with f0..f{N-1} so the deletes always have something to aim at.
const PY_SWAPPER = `
import os, sys, ctypes
libc = ctypes.CDLL(None, use_errno=True)
ws, out, N = sys.argv[1], sys.argv[2], int(sys.argv[3])
d, alt = ws + '/d', ws + '/d.alt'
def fill(p):
    try:
        os.makedirs(p, exist_ok=True)
        for i in range(N):
            if not os.path.lexists(f'{p}/f{i}'):
                with open(f'{p}/f{i}', 'w') as f: f.write('x')
    except OSError: pass
n = 0
while True:
    if libc.renameat2(-100, d.encode(), -100, alt.encode(), 2) != 0:
        for p in (d, alt):
            if not os.path.lexists(p):
                other = alt if p == d else d
                try:
                    if os.path.islink(other): fill(p)
                    else: os.symlink(out, p)
                except OSError: pass
        continue
    n += 1
    if n % 20 == 0: fill(alt if os.path.islink(d) else d)
`;

// Fallback without renameat2: the same swap in two steps through a parking name.
const NODE_SWAPPER = `
const fs = require('node:fs');
const [ws, out, N] = process.argv.slice(1);
const d = ws + '/d', park = ws + '/d.park', alt = ws + '/d.alt';
let n = 0;
for (;;) {
  try { fs.renameSync(d, park); fs.renameSync(alt, d); fs.renameSync(d, alt); fs.renameSync(park, d); } catch {}
  if (++n % 20 === 0) { try { for (let i = 0; i < Number(N); i++) { const p = d + '/f' + i; if (!fs.existsSync(p)) fs.writeFileSync(p, 'x'); } } catch {} }
}`;

let base: { dir: string; cleanup: () => void };
let ws: string;
let out: string;
let swapper: ChildProcess | undefined;
let h: Harness;
let outsideBefore: string[];

function hasRenameat2(): boolean {
  const r = spawnSync('python3', ['-c', 'import ctypes; ctypes.CDLL(None).renameat2'], { stdio: 'ignore' });
  return r.status === 0;
}

before(() => {
  base = tempDir('tg-wrace-');
  ws = path.join(base.dir, 'ws');
  out = path.join(base.dir, 'outside');
  mkdirSync(path.join(ws, 'd'), { recursive: true });
  mkdirSync(out);
  for (let i = 0; i < N; i++) {
    writeFileSync(path.join(out, `f${i}`), 'x'); // same content as inside: a patch deleting d/fK would apply to it
    writeFileSync(path.join(ws, 'd', `f${i}`), 'x');
  }
  outsideBefore = readdirSync(out).sort();
  h = new Harness([ws], { policy: policyFromYaml('rules:\n  - tool: "*"\n    decision: allow\n') });
  symlinkSync(out, path.join(ws, 'd.alt'));
  swapper = hasRenameat2()
    ? spawn('python3', ['-c', PY_SWAPPER, ws, out, String(N)], { stdio: 'ignore' })
    : spawn(process.execPath, ['-e', NODE_SWAPPER, ws, out, String(N)], { stdio: 'ignore' });
});

after(() => {
  if (swapper?.pid && swapper.exitCode === null) swapper.kill('SIGKILL');
  h?.close();
  base?.cleanup();
});

function checkOutside(what: string): void {
  const now = readdirSync(out).sort();
  assert.deepEqual(now, outsideBefore, `${what}: the outside folder changed (deleted or created entries)`);
  for (const n of now) assert.equal(readFileSync(path.join(out, n), 'utf8'), 'x', `${what}: ${n} outside was changed`);
}

const rnd = (k: number) => Math.floor(Math.random() * k);

const CALLS: Array<[string, () => [string, Record<string, unknown>]]> = [
  ['delete_file of d/fK', () => ['delete_file', { path: `d/f${rnd(N)}` }]],
  ['delete_file of d, recursive', () => ['delete_file', { path: 'd', recursive: true }]],
  ['apply_patch deleting d/fK', () => ['apply_patch', { patch: `--- a/d/f${rnd(N)}\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n\\ No newline at end of file\n` }]],
  ['apply_patch adding d/nK/x.txt', () => ['apply_patch', { patch: `--- /dev/null\n+++ b/d/n${rnd(1e9)}/x.txt\n@@ -0,0 +1 @@\n+PWN\n` }]],
  ['write_file d/newK.txt', () => ['write_file', { path: `d/new${rnd(1e9)}.txt`, content: 'PWN' }]],
  ['write_file d/subK/x.txt with create_dirs', () => ['write_file', { path: `d/sub${rnd(1e9)}/x.txt`, content: 'PWN', create_dirs: true }]],
];

for (const [what, make] of CALLS) {
  test(`${what} while d flips between a folder and a link out: nothing outside deleted or created`, async () => {
    const codes = new Map<string, number>();
    const t0 = Date.now();
    while (Date.now() - t0 < MS) {
      const batch = Array.from({ length: 4 }, () => { const [tool, args] = make(); return h.call(tool, args); });
      for (const env of await Promise.all(batch)) {
        const c = env.ok ? 'ok' : env.error!.code;
        codes.set(c, (codes.get(c) ?? 0) + 1);
      }
      checkOutside(`${what} ${JSON.stringify(Object.fromEntries(codes))}`);
    }
    assert.ok([...codes.values()].reduce((a, b) => a + b, 0) > 0);
  });
}
