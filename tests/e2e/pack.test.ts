import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT, tempDir } from '../../src/testing/helpers.js';

// `npm pack`, install the tarball in a fresh folder (dependencies come from the registry:
// about 10-20 s here), and run the installed `toolgate` through npx. Needs `npm run build`
// first. Set TOOLGATE_SKIP_PACK_TEST=1 where the npm registry cannot be reached.
const skip = process.env.TOOLGATE_SKIP_PACK_TEST === '1' ? 'TOOLGATE_SKIP_PACK_TEST=1' : false;

test('npx toolgate works from a packed tarball', { skip, timeout: 300_000 }, () => {
  const { dir, cleanup } = tempDir('tg-pack-');
  try {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';
    const quiet = { encoding: 'utf8' as const, env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' } };
    execFileSync(npm, ['pack', '--pack-destination', dir, '--silent'], { ...quiet, cwd: REPO_ROOT });
    const tgz = readdirSync(dir).find((f) => f.endsWith('.tgz'));
    assert.ok(tgz, 'npm pack produced a tarball');
    const app = path.join(dir, 'app');
    mkdirSync(app);
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'pack-check', version: '1.0.0', private: true }));
    execFileSync(npm, ['install', path.join(dir, tgz)], { ...quiet, cwd: app, stdio: ['ignore', 'pipe', 'pipe'] });

    const version = spawnSync(npx, ['--no-install', 'toolgate', '--version'], { ...quiet, cwd: app });
    assert.equal(version.status, 0, version.stderr);
    assert.match(version.stdout, /^toolgate \d+\.\d+\.\d+/);

    const ws = path.join(dir, 'ws');
    mkdirSync(ws);
    const tools = spawnSync(npx, ['--no-install', 'toolgate', 'tools', '--workspace', ws, '--json'], { ...quiet, cwd: app });
    assert.equal(tools.status, 0, tools.stderr);
    const names = (JSON.parse(tools.stdout) as Array<{ name: string }>).map((t) => t.name);
    for (const n of ['read_file', 'run_command', 'fetch_url', 'display']) assert.ok(names.includes(n), `${n} in ${names.join(', ')}`);

    // The shell parser's wasm must ship: a policy check of a command parses it.
    const check = spawnSync(npx, ['--no-install', 'toolgate', 'policy', 'check', 'run_command', '--workspace', ws, '--args', '{"command":"ls | wc -l"}'], { ...quiet, cwd: app });
    assert.ok(check.status === 0 || check.status === 1, check.stderr);
    assert.doesNotMatch(check.stderr, /Cannot find|ENOENT|wasm/i);
  } finally {
    cleanup();
  }
});
