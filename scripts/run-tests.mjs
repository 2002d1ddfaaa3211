// Runs every *.test.ts under src/ (unit tests beside the code) and tests/ (end-to-end, attack,
// contract and client suites) with Node's test runner (TypeScript through tsx).
// Skipped tests (a tool missing here: bubblewrap, ripgrep, a browser, a Docker engine) are listed by
// name at the end. Usage: node scripts/run-tests.mjs [substring …]  — only files whose path contains one of them.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Lists the skipped tests by name at the end of the run (after spec's summary).
const SKIP_REPORTER = fileURLToPath(new URL('./skip-reporter.mjs', import.meta.url));

function walk(dir, out = []) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const filters = process.argv.slice(2);
const files = [...walk('src'), ...walk('tests')].sort().filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)));
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
// Servers spawned by tests register in the runtime dir and read stored grants: never the real ones.
const userDirs = mkdtempSync(join(tmpdir(), 'tg-test-user-'));
const r = spawnSync(process.execPath, [
  '--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=120000',
  '--test-reporter=spec', '--test-reporter-destination=stdout',
  `--test-reporter=${SKIP_REPORTER}`, '--test-reporter-destination=stdout', ...files,
], { stdio: 'inherit', env: {
  ...process.env, TOOLGATE_LOG_LEVEL: process.env.TOOLGATE_LOG_LEVEL ?? 'warn', TOOLGATE_NOTIFY: 'off',
  TOOLGATE_CHECK_ENVELOPE: process.env.TOOLGATE_CHECK_ENVELOPE ?? '1',
  XDG_RUNTIME_DIR: join(userDirs, 'run'), XDG_STATE_HOME: join(userDirs, 'state'),
} });
rmSync(userDirs, { recursive: true, force: true });
process.exit(r.status ?? 1);
