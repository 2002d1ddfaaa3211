import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import pino from 'pino';
import { runCall } from '../../src/core/pipeline.js';
import { Runtime } from '../../src/core/runtime.js';
import { Session } from '../../src/core/session.js';
import { lookupTool } from '../../src/core/tool-lookup.js';
import { listEntry } from '../../src/server/mcp-server.js';
import { SessionRoots } from '../../src/server/session-roots.js';
import { CLI, policyFromYaml, REPO_ROOT, tempDir } from '../../src/testing/helpers.js';
import { allTools } from '../../src/tools/index.js';
import { loadCustomTools } from '../../src/tools/custom/index.js';
import { upstreamSchema } from '../../src/upstream/config.js';
import { connectUpstream } from '../../src/upstream/connect.js';

/**
 * Attacks on three changes made on main the same day: anchored custom-tool `pattern`s, the
 * 16 MiB cap on one stdio upstream message, and name collisions compared as lookup folds names.
 */

function custom(yaml: string) {
  const { dir, cleanup } = tempDir('tg-revx-');
  const policy = policyFromYaml(yaml);
  const builtIn = allTools();
  const rt = new Runtime({ tools: [...builtIn, ...loadCustomTools(policy, builtIn.map((t) => t.name))], policy, log: pino({ level: 'silent' }), replay: { command: ['node', CLI], flags: [] } });
  const roots = new SessionRoots(rt, [dir], new Session());
  const call = async (name: string, args: unknown) => (await runCall(rt, roots, name, args, { signal: new AbortController().signal })).envelope as { ok: boolean; error: { code: string } | null; data: { output: string } };
  return { rt, call, cleanup: () => { rt.close(); cleanup(); } };
}

/** [pattern, value, passes?]: the whole value must match; anything else is InvalidArguments before any process starts. */
const PATTERN_ROWS: Array<[string, string, boolean]> = [
  ['a|b.*', 'a', true],
  ['a|b.*', 'bxyz', true],
  ['a|b.*', 'a; rm -rf ~', false], // the unanchored "a" alternative must not let a tail through
  ['a|b.*', 'xa', false],
  ['a|b.*', 'x\nbq', false], // a newline does not start a new "line" for ^
  ['b.*|a', 'ab', false],
  ['(a)|(b)', 'ab', false],
  ['(?:a)|b', 'ba', false],
  ['[a-z]+', 'abc\n', false], // $ does not match before a trailing newline
  ['[a-z]+', 'abc\r', false],
  ['[a-z]+', 'abc\u2028', false],
  ['[a-z]+', 'ａｂｃ', false], // full-width letters are not [a-z]
  ['[a-z]+', 'abc\u0301', false], // a combining mark
  ['\\w+', 'é', false], // \w is ASCII even with the u flag
  ['\\p{L}+', 'éü', true],
  ['\\p{L}+', 'é ü', false],
  ['[^;&|]+', 'ok $(id)', true], // no shell: the whole value is one argv word, printed as is
  ['[^;&|]+', '-rf', false], // a leading "-" is refused whatever the pattern
  ['.*', 'a\nb', false], // "." does not match a newline
  ['[\\s\\S]*', 'a\nb', true],
  ['x*', '', true],
  ['a$|b', 'ab', false],
  ['^a|b$', 'ab', false],
];

test('custom tool patterns: alternations, anchors, newlines and unicode never let a partial match through', async () => {
  const tools = PATTERN_ROWS.map(([p], i) => `  t${i}:\n    description: "x"\n    argv: ["printf", "<%s>", "{f}"]\n    args: { f: { type: string, pattern: ${JSON.stringify(p)} } }\n    risk: low`).join('\n');
  const h = custom(`sandbox: { backend: none }\ntools:\n${tools}\n`);
  try {
    const wrong: string[] = [];
    for (const [i, [p, v, ok]] of PATTERN_ROWS.entries()) {
      const env = await h.call(`t${i}`, { f: v });
      if (ok && (!env.ok || env.data.output !== `<${v}>`)) wrong.push(`${p} ${JSON.stringify(v)} should pass: ${JSON.stringify(env.error)}`);
      if (!ok && env.error?.code !== 'InvalidArguments') wrong.push(`${p} ${JSON.stringify(v)} should be InvalidArguments, got ${JSON.stringify(env.error ?? env.data)}`);
      // What the model is shown is what holds: the listed pattern, compiled with the u flag, gives the same answer.
      const listed = (listEntry(h.rt.tools.get(`t${i}`)!).inputSchema as unknown as { properties: { f: { pattern: string } } }).properties.f.pattern;
      const byListed = new RegExp(listed, 'u').test(v) && !v.startsWith('-');
      if (byListed !== ok) wrong.push(`${p} ${JSON.stringify(v)}: the listed pattern ${listed} says ${byListed}`);
    }
    assert.deepEqual(wrong, []);
  } finally { h.cleanup(); }
});

test('tool names that fold alike (case, "-" as "_") are load errors, as lookup would confuse them', () => {
  const builtIn = allTools().map((t) => t.name);
  const load = (yaml: string) => () => loadCustomTools(policyFromYaml(yaml), builtIn);
  const tool = (name: string) => `tools:\n  ${name}:\n    description: "d"\n    argv: ["true"]\n`;
  // Two upstreams whose prefixes fold alike: a call to "MY-GH__x" was taken as my_gh's tool.
  assert.throws(load('upstreams:\n  my-gh:\n    command: ["x"]\n  my_gh:\n    command: ["y"]\n'), /differ only in case or "-"/);
  assert.throws(load('upstreams:\n  My-Gh:\n    command: ["x"]\n  my_gh:\n    command: ["y"]\n'), /differ only in case or "-"/);
  // A custom tool under an upstream's prefix as folded: while my-gh restarts, "my-gh__x" ran the custom tool.
  assert.throws(load(`upstreams:\n  my-gh:\n    command: ["x"]\n${tool('my_gh__x')}`), /prefix of upstream my-gh/);
  assert.throws(load(`upstreams:\n  MY-GH:\n    command: ["x"]\n${tool('my_gh__x')}`), /prefix of upstream MY-GH/);
  // Controls: different names stay fine.
  assert.equal(load(`upstreams:\n  my-gh:\n    command: ["x"]\n${tool('my_ghx')}`)().length, 1);
  assert.equal(load('upstreams:\n  my-gh:\n    command: ["x"]\n  my.gh:\n    command: ["y"]\n')().length, 0);
  // The fold is lookup's own: the call name below resolves to the other upstream's tool when both exist.
  const m = new Map([['my_gh__x', allTools()[0]!]]);
  assert.equal(lookupTool(m, 'MY-GH__x').tool, allTools()[0], 'lookup folds "-" and case');
});

const FIXTURE = path.join(REPO_ROOT, 'tests', 'fixtures', 'upstream-fixture.mjs');

test('upstream line cap: "\\r" does not end a line (closed at the cap); many short lines past the cap in total are not one long line', async (t) => {
  const warnings: string[] = [];
  const log = pino({ level: 'warn' }, { write: (l: string) => { warnings.push(l); } });
  const cfg = upstreamSchema.parse({ command: [process.execPath, FIXTURE] });
  const connect = async () => {
    const conn = await connectUpstream('fx', cfg, { env: process.env, log, timeoutMs: 10_000, setup: () => {}, maxLineBytes: 1024 * 1024 });
    t.after(() => conn.client.close().catch(() => {}));
    return conn;
  };
  // 4 MiB of 1 KiB junk lines, each ended by "\n": every line is short, nothing is closed.
  const a = await connect();
  const ok = await a.client.callTool({ name: 'flood_sep', arguments: { kib: 4096, sep: '\n' } }, undefined, { timeout: 30_000 });
  assert.match(JSON.stringify(ok.content), /flooded/);
  assert.ok(!warnings.some((w) => /longer than/.test(w)), 'short lines never trip the cap');
  // 4 MiB with "\r" every KiB: JSON-RPC lines end at "\n" only, so this is one 4 MiB line.
  const b = await connect();
  await assert.rejects(b.client.callTool({ name: 'flood_sep', arguments: { kib: 4096, sep: '\r' } }, undefined, { timeout: 20_000 }), /closed|Connection/i);
  assert.ok(warnings.some((w) => /longer than 1048576 bytes/.test(w)), warnings.join('\n'));
});
