// The path attacks end to end: the built server over stdio, a real MCP client, and a canary
// outside the workspace that must never come back in any result.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connectStdio } from '../../src/testing/helpers.js';
import { attackPaths, attackTree, CANARY, oddNames, type AttackTree } from './paths-fixture.js';

type CallResult = Awaited<ReturnType<Client['callTool']>>;

let tree: AttackTree;
let client: Client;
let close: () => Promise<void>;
let toolNames: string[] = [];

before(async () => {
  tree = attackTree();
  ({ client, close } = await connectStdio(['--workspace', tree.ws]));
  toolNames = (await client.listTools()).tools.map((t) => t.name);
});
after(async () => {
  await close?.();
  tree?.cleanup();
});

async function call(name: string, args: Record<string, unknown>): Promise<CallResult> {
  return client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 });
}

function assertNoCanary(r: CallResult, what: string): void {
  const all = JSON.stringify(r);
  assert.ok(!all.includes(CANARY), `${what}: the outside canary leaked: ${all.slice(0, 400)}`);
}

function envelope(r: CallResult): { ok: boolean; error: { code: string; message: string } | null; data: any } {
  return r.structuredContent as never;
}

const REFUSALS = new Set(['PathTraversalBlocked', 'PathDenied', 'NotFound', 'InvalidArguments']);

describe('read_file never returns what lies outside', () => {
  test('every attack path is refused, and the canary never appears', async (t) => {
    assert.ok(toolNames.includes('read_file'), 'read_file is not registered');
    for (const [name, p] of attackPaths(tree)) {
      await t.test(name, async () => {
        const r = await call('read_file', { path: p });
        assertNoCanary(r, name);
        const env = envelope(r);
        assert.equal(env.ok, false, `${name}: admitted`);
        assert.equal(r.isError, true);
        assert.ok(REFUSALS.has(env.error!.code), `${name}: ${env.error!.code} ${env.error!.message}`);
      });
    }
  });

  test('legitimate odd names still read', async (t) => {
    for (const [p] of oddNames()) {
      await t.test(JSON.stringify(p), async () => {
        const r = await call('read_file', { path: p });
        const env = envelope(r);
        assert.equal(env.ok, true, `${JSON.stringify(p)}: ${env.error?.code} ${env.error?.message}`);
        assert.match(env.data.content, /odd /);
      });
    }
  });

  test('an absolute path inside the workspace reads', async () => {
    const env = envelope(await call('read_file', { path: `${tree.ws}/a.txt` }));
    assert.equal(env.ok, true);
    assert.match(env.data.content, /hello/);
  });
});

describe('list_dir never shows what lies outside', () => {
  const dirs = (t: AttackTree): Array<[string, string]> => [
    ['bare ..', '..'],
    ['symlinked dir out', 'outlink'],
    ['symlinked dir out with trailing slash', 'outlink/'],
    ['symlink then ..', 'outdirlink/..'],
    ['link to the parent', 'up'],
    ['prefix sibling', `${t.ws}-evil`],
    ['quote sibling', `${t.ws}'`],
    ['absolute /', '/'],
    ['.. after a missing dir', 'missing/../outlink'],
    ['secret dir', 'a/.ssh'],
    ['secret dir through an innocent link', 'keys'],
    ['.aws', '.aws'],
  ];
  test('every attack directory is refused', async (t) => {
    assert.ok(toolNames.includes('list_dir'), 'list_dir is not registered');
    for (const [name, p] of dirs(tree)) {
      await t.test(name, async () => {
        const r = await call('list_dir', { path: p, hidden: true });
        assertNoCanary(r, name);
        assert.equal(envelope(r).ok, false, `${name}: admitted`);
      });
    }
  });

  test('the root listing shows no secret and nothing from outside', async () => {
    const r = await call('list_dir', { path: '.', hidden: true, gitignore: false });
    assertNoCanary(r, 'root');
    const env = envelope(r);
    assert.equal(env.ok, true);
    const names: string[] = env.data.entries.map((e: { name: string }) => e.name);
    assert.ok(names.includes('a.txt'));
    for (const secret of ['.env', '.env.local', 'x.pem', 'k.key', '.netrc', '.npmrc']) assert.ok(!names.includes(secret), `${secret} listed`);
  });
});

describe('glob and grep never walk out', () => {
  test('glob ** from the root finds nothing outside', async () => {
    if (!toolNames.includes('glob')) return;
    const r = await call('glob', { pattern: '**/*' });
    assertNoCanary(r, 'glob **');
    assert.equal(envelope(r).ok, true);
  });

  test('glob refuses a base path outside', async (t) => {
    if (!toolNames.includes('glob')) return;
    for (const p of ['..', 'outlink', `${tree.ws}-evil`, 'outdirlink/..']) {
      await t.test(p, async () => {
        const r = await call('glob', { pattern: '**', path: p });
        assertNoCanary(r, p);
        assert.equal(envelope(r).ok, false);
      });
    }
  });

  test('grep for the canary across the root finds nothing (secrets, links out and hard links skipped)', async () => {
    if (!toolNames.includes('grep')) return;
    // A piece of the canary, so the echoed arguments do not hold the whole of it.
    const r = await call('grep', { pattern: CANARY.slice(8), path: '.', output_mode: 'content' });
    const env = envelope(r);
    assert.equal(env.ok, true, JSON.stringify(env.error));
    assertNoCanary(r, 'grep');
  });

  test('grep refuses a base path outside', async (t) => {
    if (!toolNames.includes('grep')) return;
    for (const p of ['..', 'outlink', 'outfile', 'hard.txt', '.env', `${tree.ws}'`]) {
      await t.test(p, async () => {
        const r = await call('grep', { pattern: 'secret', path: p });
        assertNoCanary(r, p);
        assert.equal(envelope(r).ok, false);
      });
    }
  });
});
