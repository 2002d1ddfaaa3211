import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { Envelope } from '../../src/core/envelope.js';
import { detectBwrap } from '../../src/exec/sandbox.js';
import { Harness, policyFromYaml, tempDir } from '../../src/testing/helpers.js';

/**
 * Issue 8 §3: a user's path rule holds in run_command — statically (cwd, cd, readers, writers,
 * ln targets) and, under bubblewrap, by masking every denied path and binding every protected
 * path read-only at any depth. Each attack must be refused or see nothing; each control works.
 */

// The server's own probe: honours TOOLGATE_SANDBOX=none (CI's second pass) exactly as the server does.
const hasBwrap = (await detectBwrap()) !== null;
const hasPython = spawnSync('python3', ['-c', '0']).status === 0;

const MARKERS = ['PRIV_CONTENT_1', 'PRIV_CONTENT_2', 'DEEP_DENIED_3', 'SECRET_BY_NAME_4'];
/** Names that exist only inside denied areas: no output may list them. */
const HIDDEN_NAMES = ['never-named-1', 'never-named-2'];
// (Names an attack itself spells may come back in error messages or the audit log a command reads: that is the model's own text.)

function tree(dir: string): void {
  const w = (rel: string, text: string) => { mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true }); writeFileSync(path.join(dir, rel), text); };
  w('priv/x.txt', 'PRIV_CONTENT_1\n');
  w('priv/deep/inner-y.txt', 'PRIV_CONTENT_2\n');
  w('a/b/hidden/inner-z.txt', 'DEEP_DENIED_3\n');
  w('priv/deep/never-named-1.txt', 'PRIV_CONTENT_1\n');
  w('a/b/hidden/sub/never-named-2.txt', 'DEEP_DENIED_3\n');
  w('a/b/visible.txt', 'VISIBLE_OK\n');
  w('pub/ok.txt', 'PUBLIC_OK\n');
  w('pub/k.secret', 'SECRET_BY_NAME_4\n');
  w('sub/.git/config', '[core]\n\tbare = false\n');
  w('sub/.git/HEAD', 'ref: refs/heads/main\n');
  mkdirSync(path.join(dir, 'sub/.git/hooks'), { recursive: true });
  w('sub/.vscode/settings.json', '{}\n');
  w('sub/file.txt', 'SUB_FILE_OK\n');
}

const policyYaml = (backend: string) => `mode: ci
sandbox: { backend: ${backend} }
commands: { prefer_tools: false }
rules:
  - { tool: "*", path: "priv/**", decision: deny }
  - { tool: run_command, path: "a/b/hidden/**", decision: deny }
  - { tool: "*", path: "*.secret", decision: deny }
  - { tool: run_command, decision: allow }
`;

interface Attack { command: string; cwd?: string; bwrapOnly?: boolean; needs?: 'python' }

const READ_ATTACKS: Attack[] = [
  { command: 'cat priv/x.txt' },
  { command: 'head -5 priv/x.txt' },
  { command: 'tail priv/deep/inner-y.txt' },
  { command: 'grep -r PRIV .' },
  { command: 'grep -r PRIV priv' },
  { command: 'grep -rl CONTENT' },
  { command: 'rg PRIV' },
  { command: 'cp priv/x.txt pub/copy.txt' },
  { command: 'cp -r priv pub/privcopy' },
  { command: 'tar cf - priv | tar tvf -' },
  { command: 'rsync -a priv/ pub/r/' },
  { command: 'sed -n p priv/x.txt' },
  { command: 'awk 1 priv/x.txt' },
  { command: 'sort priv/x.txt' },
  { command: 'cat < priv/x.txt' },
  { command: 'sh -c "cat priv/x.txt"' },
  { command: 'bash -c "cat priv/deep/inner-y.txt"' },
  { command: 'cd priv && cat x.txt' },
  { command: 'cd priv; ls -la' },
  { command: 'cat x.txt', cwd: 'priv' },
  { command: 'ls', cwd: 'priv' },
  { command: 'cat inner-y.txt', cwd: 'priv/deep' },
  { command: 'echo hi', cwd: 'priv/missing-dir' },
  { command: 'ls priv' },
  { command: 'ls priv/deep' },
  { command: 'ln -s priv l && cat l/x.txt' },
  { command: 'ln -s priv/x.txt pub/link && cat pub/link' },
  { command: 'cat pr*/x.txt' },
  { command: 'cat priv/*' },
  { command: 'd=priv; cat $d/x.txt' },
  { command: 'cat $(echo priv)/x.txt' },
  { command: 'find . -type f -exec cat {} +' },
  { command: 'find priv -type f | xargs cat' },
  { command: 'find . -name "*.txt"' },
  { command: 'ls -R' },
  { command: 'du -a' },
  { command: 'cat a/b/hidden/inner-z.txt' },
  { command: 'grep -r DEEP a' },
  { command: 'cat inner-z.txt', cwd: 'a/b/hidden' },
  { command: 'cat pub/k.secret' },
  { command: 'grep -r SECRET_BY_NAME pub' },
  { command: 'cat pub/*' },
  { command: 'python3 -c "print(open(\'priv/x.txt\').read())"', bwrapOnly: true, needs: 'python' },
  { command: 'python3 -c "import os; print(os.listdir(\'priv/deep\'))"', bwrapOnly: true, needs: 'python' },
  { command: 'node -e "console.log(require(\'fs\').readFileSync(\'priv/x.txt\',\'utf8\'))"', bwrapOnly: true },
  { command: 'node -e "console.log(require(\'fs\').readFileSync(\'a/b/hidden/inner-z.txt\',\'utf8\'))"', bwrapOnly: true },
  { command: 'cat "$(printf pri)v/x.txt"', bwrapOnly: true },
];

const PROTECT_ATTACKS: Attack[] = [
  { command: 'echo x > sub/.git/config' },
  { command: 'echo x >> sub/.vscode/settings.json' },
  { command: 'echo "#!/bin/sh" > sub/.git/hooks/pre-commit' },
  { command: 'git -C sub config core.hooksPath x' },
  { command: 'cd sub && git config core.hooksPath x' },
  { command: 'git config core.hooksPath x', cwd: 'sub' },
  { command: 'ln -s sub/.vscode v && echo "{}" > v/settings.json' },
  { command: 'ln -s sub/.git/hooks h && echo x > h/post-checkout' },
  { command: 'cp pub/ok.txt sub/.git/hooks/post-checkout' },
  { command: 'rm -rf sub' },
  { command: 'rm -r sub/.git' },
  { command: 'mv sub z' },
  { command: 'mv sub/.vscode sub/vs' },
  { command: 'sh -c "echo x > sub/.git/config"' },
  { command: 'python3 -c "open(\'sub/.git/config\',\'w\').write(\'x\')"', bwrapOnly: true, needs: 'python' },
  { command: 'node -e "require(\'fs\').writeFileSync(\'sub/.vscode/settings.json\',\'x\')"', bwrapOnly: true },
  { command: 'node -e "require(\'fs\').rmSync(\'sub\',{recursive:true,force:true})"', bwrapOnly: true },
  { command: 'd=sub; echo x > $d/.git/config', bwrapOnly: true },
];

const CONTROLS: Array<{ command: string; cwd?: string; expect?: RegExp; bwrapOnly?: boolean }> = [
  { command: 'cat pub/ok.txt', expect: /PUBLIC_OK/ },
  { command: 'grep PUBLIC pub/ok.txt', expect: /PUBLIC_OK/ },
  // Without a sandbox a recursive search is refused whenever path rules deny something to commands.
  { command: 'grep -r PUBLIC pub', expect: /PUBLIC_OK/, bwrapOnly: true },
  { command: 'cat a/b/visible.txt', expect: /VISIBLE_OK/ },
  { command: 'cat visible.txt', cwd: 'a/b', expect: /VISIBLE_OK/ },
  { command: 'ls pub', expect: /ok\.txt/ },
  { command: 'cd sub && cat file.txt', expect: /SUB_FILE_OK/ },
  { command: 'cat sub/.git/config', expect: /bare/ },
  { command: 'echo made > pub/new.txt && cat pub/new.txt', expect: /made/ },
  { command: 'echo y > sub/file2.txt && rm sub/file2.txt' },
  { command: 'mkdir -p pub/d && rm -r pub/d' },
  { command: 'echo hi', expect: /hi/ },
];

function allFiles(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) allFiles(p, out);
    else if (e.isFile()) out.push(p);
  }
  return out;
}

function leaks(env: Envelope): string[] {
  const all = JSON.stringify(env);
  const found = MARKERS.filter((m) => all.includes(m));
  const output = String((env.data as { output?: string } | null)?.output ?? '');
  found.push(...HIDDEN_NAMES.filter((n) => output.includes(n)));
  return found;
}

for (const backend of ['bwrap', 'none'] as const) {
  const skip = backend === 'bwrap' && !hasBwrap ? 'needs bubblewrap (bwrap) working here' : false;

  test(`command rules (${backend}): reads of denied paths are refused or see nothing`, { skip }, async () => {
    const { dir, cleanup } = tempDir('tg-cmdrules-');
    const h = new Harness([dir], { policy: policyFromYaml(policyYaml(backend)) });
    try {
      tree(dir);
      const failures: string[] = [];
      for (const a of READ_ATTACKS) {
        if (a.bwrapOnly && backend === 'none') continue;
        if (a.needs === 'python' && !hasPython) continue;
        const env = await h.call('run_command', { command: a.command, ...(a.cwd ? { cwd: a.cwd } : {}) });
        const l = leaks(env);
        if (l.length) failures.push(`${a.command}${a.cwd ? ` (cwd ${a.cwd})` : ''} leaked ${l.join(', ')}`);
      }
      // Nothing copied out of a denied area either (a later read would leak it).
      for (const f of allFiles(dir)) {
        const rel = path.relative(dir, f);
        if (rel.startsWith('priv/') || rel.startsWith('a/b/hidden/') || rel.endsWith('.secret') || rel.startsWith('.toolgate/')) continue;
        const text = readFileSync(f, 'utf8');
        for (const m of MARKERS) if (text.includes(m)) failures.push(`${rel} holds ${m} after the attacks`);
      }
      assert.deepEqual(failures, []);
    } finally {
      h.close();
      cleanup();
    }
  });

  test(`command rules (${backend}): a cwd refusal is the same for an existing, a missing and a file path`, { skip }, async () => {
    const { dir, cleanup } = tempDir('tg-cmdrules-');
    const h = new Harness([dir], { policy: policyFromYaml(policyYaml(backend)) });
    try {
      tree(dir);
      const shape = async (cwd: string) => {
        const env = await h.call('run_command', { command: 'echo hi', cwd });
        return { code: env.error?.code, message: env.error?.message.replaceAll(cwd, 'CWD') };
      };
      const a = await shape('priv/deep');
      assert.equal(a.code, 'ToolNotAllowed');
      assert.deepEqual(await shape('priv/nope'), a);
      assert.deepEqual(await shape('priv/x.txt'), a);
    } finally {
      h.close();
      cleanup();
    }
  });

  test(`command rules (${backend}): protected paths at any depth stay unchanged`, { skip }, async () => {
    const { dir, cleanup } = tempDir('tg-cmdrules-');
    const h = new Harness([dir], { policy: policyFromYaml(policyYaml(backend)) });
    try {
      tree(dir);
      const snapshot = () => ({
        config: readFileSync(path.join(dir, 'sub/.git/config'), 'utf8'),
        settings: readFileSync(path.join(dir, 'sub/.vscode/settings.json'), 'utf8'),
        hooks: readdirSync(path.join(dir, 'sub/.git/hooks')).sort(),
        sub: statSync(path.join(dir, 'sub')).isDirectory(),
      });
      const before = snapshot();
      const failures: string[] = [];
      for (const a of PROTECT_ATTACKS) {
        if (a.bwrapOnly && backend === 'none') continue;
        if (a.needs === 'python' && !hasPython) continue;
        await h.call('run_command', { command: a.command, ...(a.cwd ? { cwd: a.cwd } : {}) });
        let now;
        try { now = snapshot(); } catch (e) { failures.push(`${a.command}: ${(e as Error).message}`); break; }
        if (JSON.stringify(now) !== JSON.stringify(before)) { failures.push(`${a.command} changed ${JSON.stringify(now)}`); break; }
      }
      assert.equal(existsSync(path.join(dir, 'z')), false, 'mv sub z did not run');
      assert.deepEqual(failures, []);
    } finally {
      h.close();
      cleanup();
    }
  });

  test(`command rules (${backend}): controls next to the denied areas still work`, { skip }, async () => {
    const { dir, cleanup } = tempDir('tg-cmdrules-');
    const h = new Harness([dir], { policy: policyFromYaml(policyYaml(backend)) });
    try {
      tree(dir);
      for (const c of CONTROLS) {
        if (c.bwrapOnly && backend === 'none') continue;
        const env = await h.call('run_command', { command: c.command, ...(c.cwd ? { cwd: c.cwd } : {}) });
        assert.equal(env.ok, true, `${c.command}: ${JSON.stringify(env.error)}`);
        if (c.expect) assert.match(String((env.data as { output: string }).output), c.expect, c.command);
      }
    } finally {
      h.close();
      cleanup();
    }
  });
}
