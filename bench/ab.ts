/**
 * Per-call A/B on a shared machine: the per-call rows (read_file 4 KB, 50 concurrent reads,
 * list_dir ~100 entries, edit_file small) for several servers, interleaved round by round so
 * that machine noise hits every server alike. Medians over all rounds.
 *
 *   node --import tsx bench/ab.ts [--rounds 8] [--warm 0] [--cli dist/base.js --cli dist/cli.js] [--no-fs]
 *
 * --warm N first gives each server N rounds of 50 concurrent reads, so that V8 has compiled their
 * hot paths: the steady state of a long session rather than its first minutes.
 *
 * With no --cli, compares dist/cli.js with the official filesystem server. A --cli can carry
 * environment: `--cli dist/cli.js:TOOLGATE_X=1`.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { callOk, connect, FS_SERVER, REPO, type Connected } from './clients.js';
import { fmt, median } from './stats.js';
import { ensureTree, resetEditFiles } from './tree.js';

const { values } = parseArgs({ options: {
  rounds: { type: 'string' }, cli: { type: 'string', multiple: true }, 'no-fs': { type: 'boolean' }, files: { type: 'string' },
  only: { type: 'string', multiple: true }, warm: { type: 'string' },
} });
const rounds = Number(values.rounds ?? 8);
/** Rounds of 50 concurrent reads each server gets before the first measured round (V8 warm-up). */
const warm = Number(values.warm ?? 0);
const DATA = path.join(REPO, 'bench', '.data');
const info = ensureTree(path.join(DATA, `ktree-${values.files ?? 50000}`), Number(values.files ?? 50000));
const root = info.root;
const only = new Set(values.only ?? []);
const want = (row: string) => only.size === 0 || only.has(row);

function policyFile(): string {
  const file = path.join(DATA, 'bench-policy.yaml');
  writeFileSync(file, 'version: 1\nrules:\n  - tool: "*"\n    decision: allow\n');
  return file;
}

interface Server { name: string; kind: 'tg' | 'fs'; start(): Promise<Connected> }
const servers: Server[] = (values.cli ?? ['dist/cli.js']).map((spec) => {
  const [file, ...envs] = spec.split(':');
  const env = Object.fromEntries(envs.map((e) => e.split('=') as [string, string]));
  return {
    name: spec, kind: 'tg' as const,
    start: () => connect([path.resolve(REPO, file!), '--workspace', root, '--policy', policyFile(), '--state-dir', path.join(DATA, 'state')], env),
  };
});
if (!values['no-fs']) servers.push({ name: 'fs-server', kind: 'fs', start: () => connect([FS_SERVER, root]) });

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

type Rows = Record<string, number[]>;
/** One read_file of the 4 KB sample, through either server's own tool. */
const read4k = (s: Server, c: Connected) => (s.kind === 'tg' ? callOk(c, 'read_file', { path: info.sampleFile4k }) : callOk(c, 'read_text_file', { path: path.join(root, info.sampleFile4k) }));

async function oneRound(s: Server, c: Connected, out: Rows) {
  const push = (k: string, xs: number[]) => { (out[k] ??= []).push(...xs); };
  const time = async (n: number, fn: () => Promise<unknown>) => {
    const xs: number[] = [];
    for (let i = 0; i < n; i++) { const t = performance.now(); await fn(); xs.push(performance.now() - t); }
    return xs;
  };
  const read = () => read4k(s, c);
  if (want('read')) { await time(10, read); push('read_file 4 KB', await time(100, read)); }
  if (want('par')) push('50 concurrent read_file', await time(5, () => Promise.all(Array.from({ length: 50 }, read))));
  if (want('list')) {
    const list = () => (s.kind === 'tg' ? callOk(c, 'list_dir', { path: info.sampleDir }) : callOk(c, 'list_directory', { path: path.join(root, info.sampleDir) }));
    await time(3, list);
    push('list_dir ~100 entries', await time(30, list));
  }
  if (want('edit')) {
    resetEditFiles(root);
    const abs = path.join(root, info.smallEditFile);
    let content = readFileSync(abs, 'utf8');
    let k = 0;
    const edit = async () => {
      const [a, b] = k++ % 2 === 0 ? ['line 5 alpha', 'line 5 ALPHA'] : ['line 5 ALPHA', 'line 5 alpha'];
      if (s.kind === 'tg') await callOk(c, 'edit_file', { path: info.smallEditFile, old_string: a, new_string: b, expected_sha256: sha(content) });
      else await callOk(c, 'edit_file', { path: abs, edits: [{ oldText: a, newText: b }] });
      content = content.replace(a!, b!);
    };
    await time(2, edit);
    push('edit_file small', await time(20, edit));
  }
}

async function main() {
  const conns = await Promise.all(servers.map((s) => s.start()));
  const results: Rows[] = servers.map(() => ({}));
  try {
    for (const [i, s] of servers.entries()) {
      for (let k = 0; k < warm; k++) await Promise.all(Array.from({ length: 50 }, () => read4k(s, conns[i]!)));
    }
    for (let r = 0; r < rounds; r++) {
      // Alternate the order each round as well.
      const order = servers.map((_, i) => i);
      if (r % 2) order.reverse();
      for (const i of order) await oneRound(servers[i]!, conns[i]!, results[i]!);
      process.stderr.write(`round ${r + 1}/${rounds}\n`);
    }
  } finally {
    await Promise.allSettled(conns.map((c) => c.close()));
    resetEditFiles(root);
  }
  const rowNames = Object.keys(results[0]!);
  const fsIdx = servers.findIndex((s) => s.kind === 'fs');
  console.log(['row', ...servers.map((s) => s.name), ...(fsIdx >= 0 ? servers.filter((s) => s.kind === 'tg').map((s) => `${s.name}/fs`) : [])].join(' | '));
  for (const row of rowNames) {
    const meds = results.map((r) => median(r[row] ?? []));
    const ratios = fsIdx >= 0 ? servers.map((s, i) => (s.kind === 'tg' ? `${(meds[i]! / meds[fsIdx]!).toFixed(2)}×` : null)).filter(Boolean) : [];
    console.log([row, ...meds.map(fmt), ...ratios].join(' | '));
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
