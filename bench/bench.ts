/**
 * npm run bench [-- --tree DIR [--tree-glob SUB]… [--tree-read FILE] [--tree-list SUB]] [-- --files N] [-- --quick]
 * Compares, in one run and on the same work: toolgate, the raw baseline (ripgrep, direct fs
 * calls) and the official MCP filesystem server. Prints medians and ratios.
 */
import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { globby } from 'globby';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs, promisify } from 'node:util';
import { callOk, connect, FS_SERVER, peakRssMb, REPO, TOOLGATE_CLI, toolgatePeakRssMb, type Connected } from './clients.js';
import { fmt, median, ratio, timeInterleaved, timeRuns } from './stats.js';
import { ensureTree, NEEDLE, resetEditFiles } from './tree.js';

const run = promisify(execFile);
const { values } = parseArgs({
  options: {
    tree: { type: 'string' }, files: { type: 'string' }, quick: { type: 'boolean' }, skip: { type: 'string', multiple: true }, scale: { type: 'string' },
    // On a real tree (--tree): the folders to glob **/*.h in (default: its root), a file to read, a folder to list.
    'tree-glob': { type: 'string', multiple: true }, 'tree-read': { type: 'string' }, 'tree-list': { type: 'string' },
  },
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

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const checks: string[] = [];
/** Records an answer check: toolgate's count must equal the raw tool's. */
function check(what: string, toolgate: number, raw: number, rawName: string): string {
  const ok = toolgate === raw;
  checks.push(`${ok ? 'OK  ' : 'FAIL'} ${what}: toolgate ${toolgate}, ${rawName} ${raw}`);
  return `${ok ? 'answer OK' : 'ANSWER DIFFERS'}: ${toolgate} vs ${raw}`;
}
const rgLines = async (args: string[], cwd: string) => {
  const r = await run(rgPath!, args, { cwd, maxBuffer: 1 << 30 }).catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }));
  return String(r.stdout).split('\n').filter(Boolean);
};
const peak = { toolgate: 0, fsserver: 0 };
function notePeak(tg: Connected, fsS?: Connected) {
  peak.toolgate = Math.max(peak.toolgate, toolgatePeakRssMb(tg.pid) ?? 0);
  if (fsS) peak.fsserver = Math.max(peak.fsserver, peakRssMb(fsS.pid) ?? 0);
}

async function benchTree(label: string, root: string, info: ReturnType<typeof ensureTree> | null) {
  const g = `${label}`;
  const tg = await startToolgate(root);
  const fsS = await startFs(root);
  const tgFallback = await startToolgate(root, WALKER_ENV);
  const tgRg = await startToolgate(root, { TOOLGATE_GLOB_ENGINE: 'ripgrep' });
  const reps = quick ? 3 : 5;
  try {
    const readRel = info?.sampleFile4k ?? values['tree-read'];
    const listRel = info?.sampleDir ?? values['tree-list'];
    if (readRel && tg.tools.has('read_file')) {
      const n = quick ? 100 : 300;
      const abs = path.join(root, readRel);
      const [t, f] = await timeInterleaved(n, [() => callOk(tg, 'read_file', { path: readRel }), () => callOk(fsS, 'read_text_file', { path: abs })], 20);
      const b = await timeRuns(n, () => readFile(abs, 'utf8'), 20);
      rows.push({ group: g, op: `read_file ${info ? '4 KB' : readRel} (p50 of ${n})`, toolgate: median(t), fsserver: median(f), baseline: median(b), baselineName: 'fs.readFile' });

      const par = (c: () => Promise<unknown>) => timeRuns(quick ? 10 : 30, () => Promise.all(Array.from({ length: 50 }, c)), 3);
      const fifty = (c: () => Promise<unknown>) => () => Promise.all(Array.from({ length: 50 }, c));
      const [tp, fp] = await timeInterleaved(quick ? 10 : 30, [fifty(() => callOk(tg, 'read_file', { path: readRel })), fifty(() => callOk(fsS, 'read_text_file', { path: abs }))], 3);
      const bp = await par(() => readFile(abs, 'utf8'));
      rows.push({ group: g, op: '50 concurrent read_file (wall, p50)', toolgate: median(tp), fsserver: median(fp), baseline: median(bp), baselineName: '50 × fs.readFile',
        note: `50 sequential toolgate reads ≈ ${fmt(median(t) * 50)} ms` });
    }
    if (listRel && tg.tools.has('list_dir')) {
      const dir = listRel;
      const abs = path.join(root, dir);
      let counts = '';
      // The fs server's listing with sizes stats every entry, as list_dir does (size and mtime).
      const sized = fsS.tools.has('list_directory_with_sizes');
      // As many calls as the read rows: p50 of 50 moved by ±20 % between runs.
      const nl = quick ? 100 : 300;
      const [t, f, fs2] = await timeInterleaved(nl, [
        async () => { const r = await callOk(tg, 'list_dir', { path: dir }); counts = `toolgate ${(r.data as { entries: unknown[] }).entries.length} entries (name, type, size, mtime)`; },
        () => callOk(fsS, 'list_directory', { path: abs }),
        ...(sized ? [() => callOk(fsS, 'list_directory_with_sizes', { path: abs })] : []),
      ], 20);
      const b = await timeRuns(nl, async () => {
        const es = await readdir(abs, { withFileTypes: true });
        await Promise.all(es.map((e) => stat(path.join(abs, e.name))));
      }, 20);
      rows.push({ group: g, op: `list_dir ${info ? '~100 entries' : dir} (p50 of ${nl})`, toolgate: median(t), fsserver: median(f), baseline: median(b), baselineName: 'readdir+stat', note: `${counts}; fs server: names and [FILE]/[DIR] only` });
      if (fs2) rows.push({ group: g, op: 'list_dir, against the fs server listing with sizes', toolgate: median(t), fsserver: median(fs2), baseline: median(b), baselineName: 'readdir+stat', note: 'fs server: list_directory_with_sizes (a stat per entry, as list_dir)' });
    }
    if (tg.tools.has('glob')) for (const sub of info ? ['pkg000'] : values['tree-glob'] ?? ['.']) await globRow(g, root, tg, tgFallback, fsS, sub, reps, tgRg);
    if (tg.tools.has('grep')) await grepRow(g, root, tg, tgFallback, info ? NEEDLE : 'TODO', reps);
    if (info && tg.tools.has('edit_file')) {
      resetEditFiles(root);
      const small = info.smallEditFile;
      const absSmall = path.join(root, small);
      const n = quick ? 30 : 100;
      const flip = (i: number) => (i % 2 === 0 ? ['line 5 alpha', 'line 5 ALPHA'] : ['line 5 ALPHA', 'line 5 alpha']);
      let k = 0;
      let content = readFileSync(absSmall, 'utf8');
      // One call per edit: expected_sha256 stands in for a prior read_file.
      const t = await timeRuns(n, async () => {
        const [a, b] = flip(k++);
        await callOk(tg, 'edit_file', { path: small, old_string: a, new_string: b, expected_sha256: sha(content) });
        content = content.replace(a!, b!);
      }, 0);
      resetEditFiles(root);
      k = 0;
      const f = await timeRuns(n, async () => { const [a, b] = flip(k++); await callOk(fsS, 'edit_file', { path: absSmall, edits: [{ oldText: a, newText: b }] }); }, 0);
      resetEditFiles(root);
      k = 0;
      const b = await timeRuns(n, async () => { const [a, c] = flip(k++); const s = await readFile(absSmall, 'utf8'); await writeFile(absSmall, s.replace(a!, c!)); }, 0);
      rows.push({ group: g, op: `edit_file small, expected_sha256 (p50 of ${n})`, toolgate: median(t), fsserver: median(f), baseline: median(b), baselineName: 'readFile+writeFile' });

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
      // A 5 MB read: memory stays bounded (peak RSS row below).
      // (The filesystem server's connection closes on a 5 MB read_text_file, so only toolgate reads it.)
      await callOk(tg, 'read_file', { path: big });
      resetEditFiles(root);
    }
    notePeak(tg, fsS);
  } finally {
    await Promise.allSettled([tg.close(), fsS.close(), tgFallback.close(), tgRg.close()]);
  }
}

/** The walker servers: grep without ripgrep, glob on its built-in walker (not the index). */
const WALKER_ENV = { TOOLGATE_RG: 'off', TOOLGATE_GLOB_ENGINE: 'walker' };

async function globRow(g: string, root: string, tg: Connected, tgFallback: Connected, fsS: Connected | null, sub: string, reps: number, tgRg?: Connected) {
  let n = 0;
  let stopped: string | null = null;
  let engine = '';
  const args = { pattern: '**/*.h', path: sub, limit: 10_000 };
  // The first call of this pattern on this server (the index reads every folder it has not seen).
  const first = (await timeRuns(1, () => callOk(tg, 'glob', args), 0))[0]!;
  const tgCall = async () => { const r = await callOk(tg, 'glob', args); n = (r.data as { total: number }).total; stopped = (r.data as { stopped: string | null }).stopped; engine = (r.data as { engine: string }).engine; };
  // toolgate and rg take turns (as grepRow): a drift during the row falls on both.
  const [t, b = []] = await timeInterleaved(reps, rgPath ? [tgCall, () => run(rgPath, ['--files', '-g', '*.h', sub], { cwd: root, maxBuffer: 1 << 30 })] : [tgCall]);
  const viaRg = tgRg && rgPath ? await timeRuns(reps, () => callOk(tgRg, 'glob', args)) : [];
  const fb = await timeRuns(reps, () => callOk(tgFallback, 'glob', args));
  const f = fsS && !skip.has('fs-glob') ? await timeRuns(Math.min(reps, 3), () => callOk(fsS, 'search_files', { path: path.join(root, sub), pattern: '**/*.h' }), 0) : [];
  const gb = await timeRuns(reps, () => globby('**/*.h', { cwd: path.join(root, sub), gitignore: true, followSymbolicLinks: false }));
  let note = '';
  if (rgPath) {
    // glob also returns symbolic links, which rg --files never lists: find counts those (dot-folders pruned, as glob does).
    const links = await run('find', [sub, '-mindepth', '1', '(', '-type', 'd', '-name', '.*', '-prune', ')', '-o', '-type', 'l', '-name', '*.h', '-print'], { cwd: root, maxBuffer: 1 << 30 })
      .then((r) => String(r.stdout).split('\n').filter(Boolean).length, () => 0);
    note = check(`${g}: glob **/*.h in ${sub}${stopped ? ` (toolgate stopped: ${stopped})` : ''}`, n, (await rgLines(['--files', '--no-require-git', '-g', '*.h', sub], root)).length + links, 'rg --files + find -type l');
  }
  rows.push({ group: g, op: `glob **/*.h in ${sub}/`, toolgate: median(t), fsserver: f.length ? median(f) : undefined, baseline: b.length ? median(b) : undefined, baselineName: 'rg --files -g', note: [note, `engine ${engine}`, `first call ${fmt(first)} ms`].filter(Boolean).join('; ') });
  if (viaRg.length) rows.push({ group: g, op: 'glob, ripgrep engine (TOOLGATE_GLOB_ENGINE=ripgrep)', toolgate: median(viaRg), baseline: b.length ? median(b) : undefined, baselineName: 'rg --files -g', note: 'rg --files lists, every entry judged and re-checked' });
  rows.push({ group: g, op: 'glob, built-in walker (no rg)', toolgate: median(fb), baseline: median(gb), baselineName: 'globby in-process', note: 'globby: gitignore, no symlinks, no sandbox checks' });
}

async function grepRow(g: string, root: string, tg: Connected, tgFallback: Connected, needle: string, reps: number) {
  const args = { pattern: needle, fixed_strings: true, output_mode: 'files_with_matches', head_limit: 2000 };
  let n = 0;
  let nb = 0;
  let capped: string | null = null;
  let engine = '';
  const tgCall = async () => { const r = await callOk(tg, 'grep', args); n = (r.data as { total_files: number }).total_files; engine = (r.data as { engine: string }).engine; };
  // toolgate and rg take turns (ABC, CBA, …): a drift of the machine (page cache, another load)
  // during the row falls on both sides, not on whichever ran last.
  const rgPlain = () => run(rgPath!, ['-l', '-F', needle, '.'], { cwd: root, maxBuffer: 1 << 30 }).catch(() => null);
  // Outside a git repository plain rg reads no .gitignore; toolgate does (SPEC: list_dir, glob and grep honour it).
  const rgSame = () => run(rgPath!, ['--no-require-git', '-l', '-F', needle, '.'], { cwd: root, maxBuffer: 1 << 30 }).catch(() => null);
  const [t, b = [], same = []] = await timeInterleaved(reps, rgPath ? [tgCall, rgPlain, rgSame] : [tgCall]);
  const fb = await timeRuns(reps, async () => { const r = await callOk(tgFallback, 'grep', args); nb = (r.data as { total_files: number }).total_files; capped = (r.data as { capped: string | null }).capped; });
  let note = 'filesystem server: no content search';
  if (rgPath) {
    const raw = (await rgLines(['--no-require-git', '-l', '-F', needle, '.'], root)).length;
    note = `${check(`${g}: grep -l -F (default engine: ${engine})`, n, raw, 'rg -l -F')}; engine ${engine}`;
    check(`${g}: grep -l -F (built-in engine)${capped ? ` (toolgate capped: ${capped})` : ''}`, nb, raw, 'rg -l -F');
  }
  rows.push({ group: g, op: 'grep -l literal from the root (default: rg, in-process if small)', toolgate: median(t), baseline: b.length ? median(b) : undefined, baselineName: 'rg -l -F', note });
  if (same.length) rows.push({ group: g, op: 'grep -l literal, against rg with the same ignore rules', toolgate: median(t), baseline: median(same), baselineName: 'rg --no-require-git -l -F', note: existsSync(path.join(root, '.git')) ? 'a git repository: plain rg reads .gitignore too' : 'no .git here: plain rg skips .gitignore, toolgate and this rg apply it' });
  rows.push({ group: g, op: 'grep -l literal (built-in engine, no rg)', toolgate: median(fb), baseline: b.length ? median(b) : undefined, baselineName: 'rg -l -F' });
}

/** p50 of server-everything's `echo` called directly and through toolgate (mounted as an upstream). */
async function benchUpstream(root: string) {
  const everything = path.join(REPO, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
  const op = 'upstream echo: through toolgate vs the upstream directly (p50 of 200)';
  const policy = path.join(DATA, 'bench-upstream-policy.yaml');
  writeFileSync(policy, `upstreams:\n  everything:\n    command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(everything)}, "stdio"]\nrules:\n  - { tool: "everything__*", decision: allow }\n`);
  const xdg = { XDG_STATE_HOME: path.join(DATA, 'xdg-state'), XDG_RUNTIME_DIR: path.join(DATA, 'xdg-run') };
  mkdirSync(xdg.XDG_STATE_HOME, { recursive: true });
  mkdirSync(xdg.XDG_RUNTIME_DIR, { recursive: true });
  let tg: Connected | undefined;
  let direct: Connected | undefined;
  try {
    tg = await connect([TOOLGATE_CLI, '--workspace', root, '--policy', policy], xdg);
    direct = await connect([everything, 'stdio']);
    // The upstream's tools may appear after start-up (tools/list_changed): wait for them.
    for (let i = 0; i < 100 && !tg.tools.has('everything__echo'); i++) {
      await new Promise((r) => setTimeout(r, 100));
      tg.tools = new Set((await tg.client.listTools()).tools.map((t) => t.name));
    }
    if (!tg.tools.has('everything__echo')) throw new Error('everything__echo never appeared in tools/list');
    const t = await timeRuns(200, () => callOk(tg!, 'everything__echo', { message: 'hi' }), 20);
    const d = await timeRuns(200, () => direct!.client.callTool({ name: 'echo', arguments: { message: 'hi' } }), 20);
    rows.push({ group: 'upstream', op, toolgate: median(t), baseline: median(d), baselineName: 'direct SDK call', note: `overhead ${fmt(median(t) - median(d))} ms per call` });
  } catch (e) {
    rows.push({ group: 'upstream', op, note: `n/a (${(e as Error).message.slice(0, 120)})` });
  } finally {
    await Promise.allSettled([tg?.close(), direct?.close()]);
  }
}

/** glob, grep and `echo hi` under bubblewrap on trees of growing size: the cost should not grow with the tree for commands. */
async function benchScaling(sizes: number[]) {
  const m = await import('./commands.js');
  for (const size of sizes) {
    const info = ensureTree(path.join(DATA, `ktree-${size}`), size);
    const g = `scaling ${info.files} files`;
    const tg = await startToolgate(info.root);
    const tgFallback = await startToolgate(info.root, WALKER_ENV);
    try {
      await globRow(g, info.root, tg, tgFallback, null, '.', quick ? 2 : 3);
      await grepRow(g, info.root, tg, tgFallback, NEEDLE, quick ? 2 : 3);
      notePeak(tg);
    } finally {
      await Promise.allSettled([tg.close(), tgFallback.close()]);
    }
    const echo = await m.benchEcho(info.root, 'bwrap', quick ? 10 : 20);
    rows.push({ group: g, op: 'run_command "echo hi" (bubblewrap)', toolgate: echo ?? undefined, note: echo === null ? 'bwrap absent' : '' });
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
  console.error(`bench: generating/using a ${files}-file kernel-like tree under bench/.data …`);
  const info = ensureTree(path.join(DATA, `ktree-${files}`), files);
  resetEditFiles(info.root);
  console.error(`bench: ${info.files} files, needle in ${info.needleFiles}; ripgrep: ${rgPath ?? 'absent'}`);
  await benchStartup(info.root);
  await benchTree(`tree ${info.files} files`, info.root, info);
  if (values.tree) await benchTree(`tree ${values.tree}`, path.resolve(values.tree), null);

  await optional('./commands.js', async (m) => {
    for (const r of await m.benchCommands()) rows.push({ group: 'commands', op: r.name, toolgate: r.p50_ms, note: r.ratio ?? '' });
  });
  rows.push({ group: 'server', op: 'peak RSS (MB, VmHWM, whole bench)', toolgate: peak.toolgate || undefined, fsserver: peak.fsserver || undefined, note: 'MB, not ms; includes a 5 MB read and edit; toolgate = server + the private memory of its starter process (rg and commands)' });
  if (!skip.has('upstream')) await benchUpstream(info.root);
  if (!skip.has('scale')) {
    const sizes = (values.scale ?? (quick ? '10,50000' : '10,50000,200000')).split(',').map(Number);
    console.error(`bench: scaling rows on ${sizes.join(' / ')} files …`);
    await benchScaling(sizes);
  }
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
  console.log('\nanswer checks (toolgate result count == raw tool\'s):');
  for (const c of checks) console.log(`  ${c}`);
  if (checks.some((c) => c.startsWith('FAIL'))) process.exitCode = 1;
}

function print() {
  const head = ['group', 'operation', 'toolgate ms', 'baseline ms', 'fs-server ms', 'tg/baseline', 'tg/fs-server', 'notes'];
  const body = rows.map((r) => [
    r.group, r.op, fmt(r.toolgate),
    r.baseline !== undefined ? `${fmt(r.baseline)} (${r.baselineName})` : 'n/a',
    fmt(r.fsserver), ratio(r.toolgate, r.baseline), ratio(r.toolgate, r.fsserver), r.note ?? '',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ');
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('-|-'));
  for (const b of body) console.log(line(b));
  writeFileSync(path.join(DATA, 'last.json'), JSON.stringify({ date: new Date().toISOString(), node: process.version, rows }, null, 2));
  console.log(`\n(ratios: tg/baseline = toolgate ÷ raw baseline; tg/fs-server = toolgate ÷ the official filesystem server (below 1 = toolgate faster). Full numbers: bench/.data/last.json)`);
}

main().catch((e) => { console.error(e); process.exit(1); });
