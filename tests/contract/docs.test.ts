// Docs a newcomer can follow: every link in README.md and docs/ stays inside the repository
// and points at something that exists; the quick start is exactly two commands, and the
// server command works on a machine without bubblewrap or ripgrep.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT, tempDir } from '../../src/testing/helpers.js';

const pages = ['README.md', ...readdirSync(path.join(REPO_ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

const slug = (heading: string) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s-]/gu, '').replace(/\s/g, '-');

function anchors(file: string): Set<string> {
  const text = readFileSync(path.join(REPO_ROOT, file), 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => slug(m[1]!)));
}

function links(text: string): string[] {
  const prose = text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
}

for (const page of pages) {
  test(`${page}: every link stays in the repository and points at something that exists`, () => {
    const text = readFileSync(path.join(REPO_ROOT, page), 'utf8');
    assert.ok(!/\.\.\/shared\//.test(text), 'no reference to ../shared (not in a clone)');
    for (const link of links(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // http(s)/mailto: outside by nature, not a repository file
      const [target, anchor] = link.split('#') as [string, string | undefined];
      const abs = target ? path.resolve(path.dirname(path.join(REPO_ROOT, page)), target) : path.join(REPO_ROOT, page);
      assert.ok(abs === REPO_ROOT || abs.startsWith(REPO_ROOT + path.sep), `${link} leaves the repository`);
      assert.ok(existsSync(abs), `${link} does not exist`);
      if (anchor && abs.endsWith('.md')) assert.ok(anchors(path.relative(REPO_ROOT, abs)).has(anchor), `${link}: no heading #${anchor}`);
    }
  });
}

function quickStart(): string[] {
  const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
  const section = /\n## Quick start\n([\s\S]*?)\n## /.exec(readme)?.[1] ?? '';
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return block.split('\n').map((l) => l.replace(/\s+#.*$/, '').trim()).filter(Boolean);
}

test('README quick start: exactly two commands — serve a folder, run the tests', () => {
  const cmds = quickStart();
  assert.equal(cmds.length, 2, cmds.join('\n'));
  assert.match(cmds[0]!, /--workspace /);
  assert.match(cmds[1]!, /npm test$/);
  for (const c of cmds) assert.match(c, /^npm install && /, 'each works alone on a fresh clone');
  assert.equal(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8').includes('"prepare": "node scripts/build.mjs"'), true, 'npm install builds dist/cli.js');
});

test('README quick start: the serve command answers over stdio without bubblewrap or ripgrep', async () => {
  const serve = quickStart()[0]!.replace(/^npm install && /, '');
  const words = serve.split(/\s+/);
  assert.equal(words[0], 'node');
  const { dir, cleanup } = tempDir('tg-qs-');
  try {
    writeFileSync(path.join(dir, 'hello.txt'), 'hello newcomer\n');
    const args = words.slice(1).map((w) => (w.startsWith('/path/') ? dir : w));
    const child = spawn(process.execPath, args, {
      cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, TOOLGATE_SANDBOX: 'none', TOOLGATE_RG: 'off', TOOLGATE_LOG_LEVEL: 'warn', XDG_STATE_HOME: path.join(dir, '.s'), XDG_RUNTIME_DIR: path.join(dir, '.r') },
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => { out += c.toString(); });
    const msgs = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'newcomer', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'grep', arguments: { pattern: 'newcomer', output_mode: 'content' } } },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'read_file', arguments: { path: 'hello.txt' } } },
    ];
    child.stdin.end(msgs.map((m) => JSON.stringify(m)).join('\n') + '\n');
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    assert.equal(code, 0);
    const replies = out.trim().split('\n').map((l) => JSON.parse(l));
    const grep = replies.find((r) => r.id === 2).result.structuredContent;
    assert.equal(grep.ok, true);
    assert.equal(grep.data.engine, 'builtin');
    assert.match(grep.data.fallback_reason, /TOOLGATE_RG=off/);
    assert.equal(replies.find((r) => r.id === 3).result.structuredContent.ok, true);
  } finally {
    cleanup();
  }
});
