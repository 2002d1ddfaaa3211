/**
 * npm run bench [-- --tree DIR] [-- --files N] [-- --quick]
 * Compares, in one run and on the same work: toolgate, the raw baseline (ripgrep, direct fs
 * calls) and the official MCP filesystem server. Prints medians and ratios.
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs, promisify } from 'node:util';
import { callOk, connect, FS_SERVER, REPO, TOOLGATE_CLI, type Connected } from './clients.js';
import { fmt, median, ratio, timeRuns } from './stats.js';
import { ensureTree, NEEDLE, resetEditFiles } from './tree.js';

const run = promisify(execFile);
const { values } = parseArgs({
  options: { tree: { type: 'string' }, files: { type: 'string' }, quick: { type: 'boolean' }, skip: { type: 'string', multiple: true } },
});
const quick = values.quick === true;
const skip = new Set(values.skip ?? []);
const DATA = path.join(REPO, 'bench', '.data');
mkdirSync(DATA, { recursive: true });

interface Row { group: string; op: string; toolgate?: number; baseline?: number; baselineName?: string; fsserver?: number; note?: string }
const rows: Row[] = [];
const rgPath = spawnSync('sh', ['-c', 'command -v rg']).stdout.toString().trim() || undefined;

function policyFile(): string {
  const file = path.join(DATA, 'bench-policy.yaml');
  writeFileSync(file, [
    'version: 1',
    'rules:',
    '  - tool: "*"',
    '    decision: allow',
    '  - tool: run_command',
    '    command: ["echo"]',
    '    decision: allow',
  ].join('\n') + '\n');
  return file;
}

async function startToolgate(root: string, env: Record<string, string> = {}): Promise<Connected> {
  return connect([TOOLGATE_CLI, '--workspace', root, '--policy', policyFile(), '--state-dir', path.join(DATA, 'state')], env);
}
async function startFs(root: string): Promise<Connected> {
  return connect([FS_SERVER, root]);
}

async function benchTree(label: string, root: string, info: ReturnType<typeof ensureTree> | null) {
  const g = `${label}`;
  const tg = await startToolgate(root);
  const fsS = await startFs(root);
  const tgFallback = await startToolgate(root, { TOOLGATE_RG: 'off' });
  const reps = quick ? 3 : 5;
  try {
    if (info && tg.tools.has('read_file')) {
      const n = quick ? 100 : 300;
      const abs = path.join(root, info.sampleFile4k);
      const t = await timeRuns(n, () => callOk(tg, 'read_file', { path: info.sampleFile4k }), 20);
      const f = await timeRuns(n, () => callOk(fsS, 'read_text_file', { path: abs }), 20);
      const b = await timeRuns(n, () => readFile(abs, 'utf8'), 20);
      rows.push({ group: g, op: `read_file 4 KB (p50 of ${n})`, toolgate: median(t), fsserver: median(f), baseline: median(b), baselineName: 'fs.readFile' });
    }
    if (info && tg.tools.has('list_dir')) {
      const dir = info.sampleDir;
      const abs = path.join(root, dir);
      const t = await timeRuns(50, () => callOk(tg, 'list_dir', { path: dir }), 5);
      const f = await timeRuns(50, () => callOk(fsS, 'list_directory', { path: abs }), 5);
      const b = await timeRuns(50, async () => {
        const es = await readdir(abs, { withFileTypes: true });
        await Promise.all(es.map((e) => stat(path.join(abs, e.name))));
      }, 5);
      rows.push({ group: g, op: 'list_dir 100 entries (p50 of 50)', toolgate: median(t), fsserver: median(f), baseline: median(b), baselineName: 'readdir+stat' });
    }
    if (tg.tools.has('glob')) {
      let counts = '';
      const t = await timeRuns(reps, async () => {
        const r = await callOk(tg, 'glob', { pattern: '**/*.ts', limit: 10_000 });
        counts = `toolgate ${String((r.data as { total?: number })?.total ?? ((r.data as { files?: unknown[] })?.files ?? []).length)}`;
      });
      const f = skip.has('fs-glob') ? [] : await timeRuns(reps, async () => {
        const r = await callOk(fsS, 'search_files', { path: root, pattern: '**/*.ts' });
        counts += `, fs ${String(r.content ?? '').split('\n').length}`;
      }, 0);
      const b = rgPath ? await timeRuns(reps, () => run(rgPath, ['--files', '-g', '*.ts'], { cwd: root, maxBuffer: 1 << 30 })) : [];
      rows.push({ group: g, op: 'glob **/*.ts (whole tree)', toolgate: median(t), fsserver: f.length ? median(f) : undefined, baseline: b.length ? median(b) : undefined, baselineName: 'rg --files', note: counts });
    }
    if (tg.tools.has('grep')) {
      const needle = info ? NEEDLE : 'TODO';
      const args = { pattern: needle, fixed_strings: true, output_mode: 'content', head_limit: 2000 };
      const t = await timeRuns(reps, () => callOk(tg, 'grep', args));
      const fb = await timeRuns(reps, () => callOk(tgFallback, 'grep', args));
      const b = rgPath ? await timeRuns(reps, () => run(rgPath, ['-n', '--no-heading', '-F', needle, '.'], { cwd: root, maxBuffer: 1 << 30 }).catch(() => null)) : [];
      rows.push({ group: g, op: `grep literal (whole tree, ripgrep engine)`, toolgate: median(t), baseline: b.length ? median(b) : undefined, baselineName: 'rg -n -F', note: 'filesystem server: no content search' });
      rows.push({ group: g, op: `grep literal (builtin fallback, no rg)`, toolgate: median(fb), baseline: b.length ? median(b) : undefined, baselineName: 'rg -n -F' });
    }
    if (info && tg.tools.has('edit_file')) {
      resetEditFiles(root);
      const small = info.smallEditFile;
      const absSmall = path.join(root, small);
      const n = quick ? 30 : 100;
      await callOk(tg, 'read_file', { path: small });
      const flip = (i: number) => (i % 2 === 0 ? ['line 5 alpha', 'line 5 ALPHA'] : ['line 5 ALPHA', 'line 5 alpha']);
      let k = 0;
      const t = await timeRuns(n, async () => { const [a, b] = flip(k++); await callOk(tg, 'edit_file', { path: small, old_string: a, new_string: b }); }, 0);
      resetEditFiles(root);
      k = 0;
      const f = await timeRuns(n, async () => { const [a, b] = flip(k++); await callOk(fsS, 'edit_file', { path: absSmall, edits: [{ oldText: a, newText: b }] }); }, 0);
      resetEditFiles(root);
      k = 0;
      const b = await timeRuns(n, async () => { const [a, c] = flip(k++); const s = await readFile(absSmall, 'utf8'); await writeFile(absSmall, s.replace(a!, c!)); }, 0);
      rows.push({ group: g, op: `edit_file small (p50 of ${n})`, toolgate: median(t), fsserver: median(f), baseline: median(b), baselineName: 'readFile+writeFile' });

      resetEditFiles(root);
      const big = info.bigEditFile;
      const absBig = path.join(root, big);
      const m = quick ? 3 : 10;
      await callOk(tg, 'read_file', { path: big, limit: 1 });
      k = 0;
      const flipBig = (i: number) => (i % 2 === 0 ? ['UNIQUE_TAIL_LINE', 'UNIQUE_TAIL_EDITED'] : ['UNIQUE_TAIL_EDITED', 'UNIQUE_TAIL_LINE']);
      const tb = await timeRuns(m, async () => { const [a, c] = flipBig(k++); await callOk(tg, 'edit_file', { path: big, old_string: a, new_string: c }); }, 0);
      resetEditFiles(root);
      k = 0;
      const fbg = await timeRuns(m, async () => { const [a, c] = flipBig(k++); await callOk(fsS, 'edit_file', { path: absBig, edits: [{ oldText: a, newText: c }] }); }, 0);
      resetEditFiles(root);
      k = 0;
      const bb = await timeRuns(m, async () => { const [a, c] = flipBig(k++); const s = await readFile(absBig, 'utf8'); await writeFile(absBig, s.replace(a!, c!)); }, 0);
      rows.push({ group: g, op: `edit_file 5 MB (median of ${m})`, toolgate: median(tb), fsserver: median(fbg), baseline: median(bb), baselineName: 'readFile+writeFile' });
      resetEditFiles(root);
    }
  } finally {
    await Promise.allSettled([tg.close(), fsS.close(), tgFallback.close()]);
  }
}

async function benchStartup(root: string) {
  const n = quick ? 3 : 9;
  // Spawn → initialize → tools/list answered; closing the client is not part of start-up.
  const upTo = async (start: () => Promise<Connected>) => {
    const out: number[] = [];
    for (let i = 0; i <= n; i++) {
      const t0 = performance.now();
      const c = await start();
      const dt = performance.now() - t0;
      await c.close();
      if (i > 0) out.push(dt);
    }
    return out;
  };
  const t = await upTo(() => startToolgate(root));
  const f = await upTo(() => startFs(root));
  const b = await timeRuns(n, () => run(process.execPath, ['-e', '0']), 1);
  rows.push({ group: 'server', op: 'start-up to tools/list', toolgate: median(t), fsserver: median(f), baseline: median(b), baselineName: 'node -e 0' });
}

async function optional(file: string, fn: (mod: any) => Promise<void>) {
  try {
    const mod = await import(file);
    await fn(mod);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND') return;
    console.error(`bench ${file}: ${(e as Error).message}`);
  }
}

async function main() {
  const files = Number(values.files ?? 50_000);
  console.error(`bench: generating/using a ${files}-file tree under bench/.data …`);
  const info = ensureTree(path.join(DATA, `tree-${files}`), files);
  resetEditFiles(info.root);
  console.error(`bench: ${info.files} files, needle in ${info.needleFiles}; ripgrep: ${rgPath ?? 'absent'}`);
  await benchStartup(info.root);
  await benchTree(`tree ${info.files} files`, info.root, info);
  if (values.tree) await benchTree(`tree ${values.tree}`, path.resolve(values.tree), null);

  await optional('./commands.js', async (m) => {
    for (const r of await m.benchCommands()) rows.push({ group: 'commands', op: r.name, toolgate: r.p50_ms, note: r.ratio ?? '' });
  });
  if (!skip.has('http')) {
    await optional('./http-load.js', async (m) => {
      const sessions = quick ? 5 : 20;
      const calls = quick ? 100 : 1000;
      const r = await m.benchHttpLoad({ sessions, callsPerSession: calls });
      rows.push({ group: 'http load', op: `${sessions} sessions × ${calls} mixed calls`, toolgate: r.p50_ms,
        note: `${r.calls_per_s.toFixed(0)} calls/s, p99 ${fmt(r.p99_ms)} ms, failed ${r.failed}, fds ${r.fds_before}→${r.fds_after}, rss ${r.rss_before_mb.toFixed(0)}→${r.rss_after_mb.toFixed(0)} MB` });
    });
  }
  print();
}

function print() {
  const head = ['group', 'operation', 'toolgate ms', 'baseline ms', 'fs-server ms', 'tg/baseline', 'fs-server/tg', 'notes'];
  const body = rows.map((r) => [
    r.group, r.op, fmt(r.toolgate),
    r.baseline !== undefined ? `${fmt(r.baseline)} (${r.baselineName})` : 'n/a',
    fmt(r.fsserver), ratio(r.toolgate, r.baseline), ratio(r.fsserver, r.toolgate), r.note ?? '',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ');
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('-|-'));
  for (const b of body) console.log(line(b));
  writeFileSync(path.join(DATA, 'last.json'), JSON.stringify({ date: new Date().toISOString(), node: process.version, rows }, null, 2));
  console.log(`\n(ratios: tg/baseline = toolgate time ÷ raw baseline; fs-server/tg = how many times faster toolgate is than the filesystem server. Full numbers: bench/.data/last.json)`);
}

main().catch((e) => { console.error(e); process.exit(1); });
