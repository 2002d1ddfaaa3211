// Review 29: under bubblewrap a command gets a private, writable /tmp (--tmpfs /tmp) and a private,
// writable /dev (--dev /dev: a tmpfs, /dev/shm a plain folder in it). A PATH entry there is the
// command's to fill, whatever the host has at that path (yarn 1's /tmp/yarn--<ts>-<rnd>, yarn 2+'s
// /tmp/xfs-<hash>, bun's /tmp/bun-node-<sha>, bunx's /tmp/bunx-<uid>-<pkg>/node_modules/.bin are
// put in PATH by the tools that start servers). safePath kept such entries; the command's own /tmp
// and /dev now count as its to change (BWRAP_OWN_DIRS).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { safePath } from '../../src/exec/env.js';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';
import { BWRAP_OWN_DIRS, bwrapArgs, detectBwrap } from '../../src/exec/sandbox.js';

const keeps = (entry: string, ws: string) => safePath(`${entry}:/usr/bin`, [ws], BWRAP_OWN_DIRS).split(':').includes(entry);

test('BWRAP_OWN_DIRS names exactly the folders bwrapArgs makes private and writable (--dev, --tmpfs before the roots)', () => {
  const { args } = bwrapArgs({ bin: 'bwrap', roots: ['/ws'], cwd: '/ws', home: '/ws', network: false, protectedAbs: [], extraDeny: [], extraProtect: [] }, ['true']);
  const fresh = args.slice(0, args.indexOf('--bind'));
  // A tmpfs made read-only after (/run, the runtime folder: hidden, review 31) is nobody's to fill.
  const ro = new Set(args.flatMap((a, i) => (a === '--remount-ro' ? [args[i + 1]!] : [])));
  const own = fresh.flatMap((a, i) => (a === '--dev' || a === '--tmpfs' ? [fresh[i + 1]!] : [])).filter((d) => !ro.has(d));
  assert.deepEqual([...own].sort(), [...BWRAP_OWN_DIRS].sort());
});

const cases: Array<[string, (tag: string, D: string) => string, boolean]> = [
  ['an existing host folder in /tmp (yarn --> /tmp/xfs-…)', (tag) => { mkdirSync(`/tmp/xfs-${tag}`, { recursive: true }); return `/tmp/xfs-${tag}`; }, true],
  ['a missing folder in /tmp (bunx-<uid>-pkg/node_modules/.bin)', (tag) => `/tmp/bunx-0-${tag}/node_modules/.bin`, false],
  ['/dev/shm/<x>/bin', (tag) => `/dev/shm/tg-${tag}/bin`, false],
  ['a link outside the workspace to a folder in /tmp', (tag, D) => { symlinkSync(`/tmp/tgl-${tag}`, `${D}/out/tools`); return `${D}/out/tools`; }, false],
];

for (const [name, make] of cases) test(`bwrap: ${name} is the command's: safePath drops it`, async (t) => {
  if (!(await detectBwrap())) { t.skip('no usable bubblewrap'); return; }
  const { dir, cleanup } = tempDir('tg-rv29b-');
  t.after(cleanup);
  const D = realpathSync(dir);
  const ws = `${D}/ws`;
  mkdirSync(ws, { recursive: true });
  mkdirSync(`${D}/out`, { recursive: true });
  const tag = randomBytes(4).toString('hex');
  const entry = make(tag, D);
  t.after(() => { for (const p of [`/tmp/xfs-${tag}`, `/tmp/bunx-0-${tag}`, `/dev/shm/tg-${tag}`, `/tmp/tgl-${tag}`]) rmSync(p, { recursive: true, force: true }); });
  const kept = keeps(entry, ws);
  const saved = process.env.PATH;
  process.env.PATH = `${entry}:${saved}`;
  t.after(() => { process.env.PATH = saved; });
  const h = new Harness([ws], { policy: policyFromYaml(`sandbox: { backend: bwrap }\nrules:\n  - tool: run_command\n    decision: allow\n`) });
  t.after(() => h.close());
  // The command reads the entry from its own PATH, makes it in its private /tmp or /dev, and runs ls.
  const line = `d=\${PATH%%:*}; mkdir -p "$(readlink -m "$d")" && printf '#!/bin/sh\\necho PLANTED\\n' > "$d/ls" && chmod +x "$d/ls" && ls`;
  const env = await h.call('run_command', { command: line });
  const out = String((env.data as { output?: string } | null)?.output ?? '');
  assert.doesNotMatch(out, /PLANTED/, `the planted ls ran (safePath kept the entry: ${kept})`);
  assert.equal(kept, false, `safePath kept ${entry}`);
});
