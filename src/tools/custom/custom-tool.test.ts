import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import pino from 'pino';
import { runCall } from '../../core/pipeline.js';
import { Runtime } from '../../core/runtime.js';
import { Session } from '../../core/session.js';
import { SessionRoots } from '../../server/session-roots.js';
import { PolicyError } from '../../policy/compile.js';
import { CLI, policyFromYaml, tempDir } from '../../testing/helpers.js';
import { allTools } from '../index.js';
import { loadCustomTools } from './index.js';
import { listEntry } from '../../server/mcp-server.js';
import { upstreamArgv } from '../../upstream/config.js';

function harness(yaml: string) {
  const { dir, cleanup } = tempDir('tg-custom-');
  const policy = policyFromYaml(yaml);
  const builtIn = allTools();
  const rt = new Runtime({ tools: [...builtIn, ...loadCustomTools(policy, builtIn.map((t) => t.name))], policy, log: pino({ level: 'silent' }), replay: { command: ['node', CLI], flags: [] } });
  const roots = new SessionRoots(rt, [dir], new Session());
  const call = async (name: string, args: unknown) => (await runCall(rt, roots, name, args, { signal: new AbortController().signal })).envelope as any;
  return { dir, rt, call, cleanup: () => { rt.close(); cleanup(); } };
}

const base = `
sandbox: { backend: none }
tools:
  show_args:
    description: "Print each argument on its own line."
    argv: ["printf", "[%s]\\\\n", "fixed", "{word}", "{count}", "{flag}", "{opt}"]
    args:
      word: { type: string, maxLength: 40 }
      count: { type: integer, minimum: 1, maximum: 5, default: 2 }
      flag: { type: boolean, default: false }
      opt: { type: string, enum: ["a", "b c"], default: "a" }
    risk: low
`;

test('placeholders become exactly one argv word each — spaces, quotes, $() and ; are data, never a shell', async () => {
  const h = harness(base);
  const hostile = `a b'"; touch pwned; $(id) \`id\` *`;
  const r = await h.call('show_args', { word: hostile, opt: 'b c' });
  assert.equal(r.ok, true, JSON.stringify(r.error));
  assert.equal(r.data.output, `[fixed]\n[${hostile}]\n[2]\n[false]\n[b c]\n`);
  assert.equal(r.data.sandbox, 'none');
  h.cleanup();
});

test('args are validated strictly: unknown keys, bounds, enums, lengths, required, option-looking values', async () => {
  const h = harness(base);
  const bad: Array<[Record<string, unknown>, RegExp]> = [
    [{ word: 'x', extra: 1 }, /extra/],
    [{}, /word/],
    [{ word: 'x', count: 9 }, /count/],
    [{ word: 'x', count: 1.5 }, /count/],
    [{ word: 'x', opt: 'c' }, /opt/],
    [{ word: 'y'.repeat(41) }, /word/],
    [{ word: '--output=/etc/passwd' }, /option/],
    [{ word: 'x', flag: 'yes' }, /flag/],
  ];
  for (const [args, re] of bad) {
    const r = await h.call('show_args', args);
    assert.equal(r.error?.code, 'InvalidArguments', JSON.stringify(args));
    assert.match(r.error.message, re);
  }
  h.cleanup();
});

test('listed like a built-in: _meta risk/permissions, annotations from risk, strict input schema; judged by rules on its own name', async () => {
  const h = harness(`${base}
  deploy:
    description: "Deploy."
    argv: ["true"]
    risk: high
rules:
  - { tool: show_args, decision: deny }
`);
  const deploy = h.rt.tools.get('deploy')!;
  const e = listEntry(deploy);
  assert.equal(e._meta['toolgate/risk'], 'high');
  assert.deepEqual(e._meta['toolgate/permissions'], ['proc.exec']);
  assert.equal(e.annotations.destructiveHint, true);
  assert.equal((e.inputSchema as any).additionalProperties, false);
  assert.match(e.description, /Runs \(no shell/);
  assert.ok(!h.rt.listed().some((t) => t.name === 'show_args'), 'a deny rule on its name hides it');
  assert.equal((await h.call('show_args', { word: 'x' })).error?.code, 'ToolNotAllowed');
  assert.equal((await h.call('deploy', {})).error?.code, 'ApprovalRequired', 'high risk asks by default');
  h.cleanup();
});

test('an empty string value leaves its word out; a failing program is ExitNonZero with its exit code; a slow one times out', async () => {
  const h = harness(`
sandbox: { backend: none }
tools:
  maybe:
    description: "x"
    argv: ["printf", "<%s>", "{f}"]
    args: { f: { type: string, pattern: "^[a-z]*$", default: "" } }
    risk: low
  loose:
    description: "x"
    argv: ["printf", "<%s>", "{f}"]
    args: { f: { type: string, pattern: "[a-z]+" } }
    risk: low
  alt:
    description: "x"
    argv: ["printf", "<%s>", "{f}"]
    args: { f: { type: string, pattern: "a|b" } }
    risk: low
  fails:
    description: "x"
    argv: ["sh", "-c", "echo oops; exit 3"]
    risk: low
  slow:
    description: "x"
    argv: ["sleep", "5"]
    risk: low
    timeout_ms: 300
`);
  assert.equal((await h.call('maybe', {})).data.output, '<>');
  assert.equal((await h.call('maybe', { f: 'ab' })).data.output, '<ab>');
  assert.equal((await h.call('maybe', { f: 'a;b' })).error?.code, 'InvalidArguments');
  // A pattern is anchored whether or not it says ^…$: a value that merely contains a match is refused.
  const loose = await h.call('loose', { f: 'ab; rm -rf ~' });
  assert.equal(loose.error?.code, 'InvalidArguments');
  assert.match(loose.error!.message, /whole value/);
  assert.equal((await h.call('loose', { f: 'abc' })).data.output, '<abc>');
  assert.equal((await h.call('loose', { f: 'a|b' })).error?.code, 'InvalidArguments');
  assert.equal((await h.call('alt', { f: 'b' })).data.output, '<b>');
  assert.equal((await h.call('alt', { f: 'ab' })).error?.code, 'InvalidArguments');
  assert.equal((listEntry(h.rt.tools.get('loose')!).inputSchema as any).properties.f.pattern, '^(?:[a-z]+)$', 'the model sees the anchored pattern');
  const f = await h.call('fails', {});
  assert.equal(f.error?.code, 'ExitNonZero');
  assert.equal(f.error.details.exit_code, 3);
  assert.match(f.data.output, /oops/);
  const t0 = Date.now();
  const s = await h.call('slow', {});
  assert.equal(s.error?.code, 'Timeout');
  assert.ok(Date.now() - t0 < 3000);
  h.cleanup();
});

test('bad custom tools are policy load errors naming the key: placeholder inside a word, unknown placeholder, bad pattern, bad default, name clashes', () => {
  const rows: Array<[string, RegExp]> = [
    ['argv: ["npm", "--filter={f}"]\n    args: { f: { type: string } }', /whole word/],
    ['argv: ["npm", "{nope}"]', /names no argument/],
    ['argv: ["{f}"]\n    args: { f: { type: string } }', /argv\[0\]/],
    ['argv: ["x", "{f}"]\n    args: { f: { type: string, pattern: "([" } }', /pattern is not a valid/],
    ['argv: ["x", "{f}"]\n    args: { f: { type: integer, maximum: 3, default: 7 } }', /default does not satisfy/],
    ['argv: ["x"]\n    args: { f: { type: number } }', /type/],
  ];
  for (const [body, re] of rows) {
    assert.throws(() => policyFromYaml(`tools:\n  t1:\n    description: "d"\n    ${body}\n`), (e: Error) => e instanceof PolicyError && re.test(e.message) && /tools\.t1/.test(e.message), body);
  }
  const builtIn = allTools().map((t) => t.name);
  assert.throws(() => loadCustomTools(policyFromYaml('tools:\n  read_file:\n    description: "d"\n    argv: ["true"]\n'), builtIn), /name of a built-in/);
  assert.throws(() => loadCustomTools(policyFromYaml('upstreams:\n  gh:\n    command: ["x"]\ntools:\n  gh__x:\n    description: "d"\n    argv: ["true"]\n'), builtIn), /prefix of upstream gh/);
  // Without case too: a name with no exact match is looked up case-insensitively.
  assert.throws(() => loadCustomTools(policyFromYaml('upstreams:\n  GH:\n    command: ["x"]\ntools:\n  gh__x:\n    description: "d"\n    argv: ["true"]\n'), builtIn), /prefix of upstream GH/);
  assert.throws(() => loadCustomTools(policyFromYaml('upstreams:\n  GH:\n    command: ["x"]\n  gh:\n    command: ["y"]\n'), builtIn), /differ only in case/);
  assert.equal(loadCustomTools(policyFromYaml('upstreams:\n  gh:\n    command: ["x"]\ntools:\n  ghx:\n    description: "d"\n    argv: ["true"]\n'), builtIn).length, 1, 'control: no clash');
  assert.throws(() => policyFromYaml('tools:\n  Bad-Name:\n    description: "d"\n    argv: ["true"]\n'), /snake_case/);
});

test('upstream config errors: both or neither of command/url, env on a url upstream, a name with "__"', () => {
  assert.throws(() => policyFromYaml('upstreams:\n  a:\n    command: ["x"]\n    url: "http://127.0.0.1:1/mcp"\n'), /exactly one of command/);
  assert.throws(() => policyFromYaml('upstreams:\n  a: {}\n'), /exactly one of command/);
  assert.throws(() => policyFromYaml('upstreams:\n  a:\n    url: "http://127.0.0.1:1/mcp"\n    env: { X: "1" }\n'), /env and cwd are for stdio/);
  assert.throws(() => policyFromYaml('upstreams:\n  a__b:\n    command: ["x"]\n'), /__/);
  assert.throws(() => policyFromYaml('upstreams:\n  a:\n    command: ["x"]\n    sampling: "yes"\n'), /sampling/);
  const ok = policyFromYaml('upstreams:\n  docs:\n    url: "https://mcp.example.com/mcp"\n    headers: { Authorization: "Bearer ${env:DOCS_TOKEN}" }\n    tools: ["search_*"]\n');
  assert.deepEqual(ok.data.upstreams.docs!.tools, ['search_*']);
  // The mcpServers shape is accepted too: command as a program, args beside it.
  const mcp = policyFromYaml('upstreams:\n  fs:\n    command: npx\n    args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]\n');
  assert.deepEqual(upstreamArgv(mcp.data.upstreams.fs!), ['npx', '-y', '@modelcontextprotocol/server-filesystem', '/tmp']);
  assert.throws(() => policyFromYaml('upstreams:\n  a:\n    url: "http://127.0.0.1:1/mcp"\n    args: ["x"]\n'), /args go with command/);
  writeFileSync(path.join(tempDir().dir, 'x'), '');
});
