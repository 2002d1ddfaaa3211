// Every tool's declaration, compared with a committed snapshot: any change to a name, schema,
// risk, permission, annotation or description shows up in review.
// Regenerate after an intended change:  UPDATE_SNAPSHOTS=1 node scripts/run-tests.mjs catalog
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { listEntry } from '../server/mcp-server.js';
import { allTools } from './index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const SNAPSHOT = path.join(here, 'catalog.snapshot.json');
const tools = allTools();

function declaration(t: (typeof tools)[number]) {
  return {
    name: t.name,
    version: t.version,
    title: t.title,
    risk: t.risk,
    permissions: t.permissions,
    side_effects: t.side_effects,
    annotations: t.annotations,
    aliases: t.aliases ?? {},
    timeout_ms: t.timeout_ms ?? null,
    description: t.description,
    input_schema: t.inputJsonSchema,
    output_schema: t.outputJsonSchema,
  };
}

const current = Object.fromEntries([...tools].sort((a, b) => a.name.localeCompare(b.name)).map((t) => [t.name, declaration(t)]));

test('the catalog matches the committed snapshot', () => {
  const text = JSON.stringify(current, null, 2) + '\n';
  if (process.env.UPDATE_SNAPSHOTS === '1' || !existsSync(SNAPSHOT)) {
    writeFileSync(SNAPSHOT, text);
    if (process.env.UPDATE_SNAPSHOTS !== '1') assert.fail(`no snapshot yet: wrote ${SNAPSHOT}; review and commit it`);
    return;
  }
  const saved = JSON.parse(readFileSync(SNAPSHOT, 'utf8')) as Record<string, unknown>;
  const added = Object.keys(current).filter((n) => !(n in saved));
  const removed = Object.keys(saved).filter((n) => !(n in current));
  assert.deepEqual({ added, removed }, { added: [], removed: [] }, 'tools were added or removed: UPDATE_SNAPSHOTS=1 node scripts/run-tests.mjs catalog');
  for (const name of Object.keys(current)) {
    assert.deepEqual(current[name], saved[name], `${name} changed: review, then UPDATE_SNAPSHOTS=1 node scripts/run-tests.mjs catalog`);
  }
});

describe('every tool declaration', () => {
  test('no two tools share a name', () => {
    assert.equal(new Set(tools.map((t) => t.name)).size, tools.length);
  });

  for (const t of tools) {
    describe(t.name, () => {
      test('a snake_case name', () => assert.match(t.name, /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/));
      test('a semver version', () => assert.match(t.version, /^\d+\.\d+\.\d+$/));
      test('a title', () => assert.ok(t.title.trim().length > 0));
      test('a non-empty description.md with an example', () => {
        assert.ok(t.description.trim().length > 80, 'description too short');
        assert.match(t.description, /example/i, 'the description has no example');
      });
      test('its folder holds description.md', () => {
        const folder = path.join(here, t.name.replace(/_/g, '-'));
        assert.ok(existsSync(path.join(folder, 'description.md')), `${folder}/description.md`);
        assert.equal(readFileSync(path.join(folder, 'description.md'), 'utf8').trim(), t.description);
      });
      test('risk and permissions from the closed sets', () => {
        assert.ok(['low', 'medium', 'high'].includes(t.risk));
        for (const p of t.permissions) assert.ok(['fs.read', 'fs.write', 'fs.delete', 'proc.exec', 'net.connect'].includes(p), p);
        assert.ok(t.side_effects.trim().length > 0);
      });
      test('annotations agree with risk and permissions', () => {
        for (const k of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) assert.equal(typeof t.annotations[k], 'boolean', k);
        const writes = t.permissions.some((p) => p === 'fs.write' || p === 'fs.delete');
        if (t.annotations.readOnlyHint) assert.ok(!writes, 'readOnlyHint with file write/delete permissions');
        if (t.permissions.includes('fs.delete')) assert.equal(t.annotations.destructiveHint, true, 'deletes without destructiveHint');
        if (t.permissions.includes('net.connect')) assert.equal(t.annotations.openWorldHint, true, 'network tool without openWorldHint');
        if (t.risk === 'low') assert.ok(!t.permissions.includes('fs.delete') && !t.permissions.includes('proc.exec'), 'a low-risk tool that deletes or executes');
      });
      test('input schema rejects unknown keys and describes every field', () => {
        const s = t.inputJsonSchema as { type: string; additionalProperties: unknown; properties?: Record<string, { description?: string }> };
        assert.equal(s.type, 'object');
        assert.equal(s.additionalProperties, false);
        for (const [k, v] of Object.entries(s.properties ?? {})) assert.ok(v.description && v.description.length > 0, `input "${k}" has no description`);
      });
      test('output schema is the envelope', () => {
        const props = (t.outputJsonSchema as { properties: Record<string, unknown> }).properties;
        for (const k of ['tool_call_id', 'trace_id', 'tool', 'version', 'ok', 'status', 'data', 'error', 'text', 'stats', 'artifacts', 'context']) assert.ok(k in props, k);
      });
      test('the tools/list entry carries _meta', () => {
        const e = listEntry(t);
        assert.deepEqual(e._meta, { 'toolgate/version': t.version, 'toolgate/risk': t.risk, 'toolgate/permissions': t.permissions, 'toolgate/side_effects': t.side_effects });
      });
      test('aliases rename to real input fields', () => {
        const props = Object.keys((t.inputJsonSchema as { properties?: Record<string, unknown> }).properties ?? {});
        for (const [oldName, newName] of Object.entries(t.aliases ?? {})) {
          assert.ok(props.includes(newName), `alias ${oldName} → ${newName}: no such field`);
          assert.ok(!props.includes(oldName), `alias ${oldName} shadows a field`);
        }
      });
    });
  }
});
