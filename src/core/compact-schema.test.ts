import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { z } from 'zod';
import { compactSchema } from './compact-schema.js';
import { jsonSchema } from './define-tool.js';
import { allTools } from '../tools/index.js';

const ajv = new AjvJsonSchemaValidator();
const accepts = (schema: unknown, v: unknown) => ajv.getValidator(schema as never)(v).valid;

/** The same verdict from the schema as zod emits it and as compacted, for every instance. */
function sameVerdicts(schema: Record<string, unknown>, instances: unknown[]) {
  const compact = compactSchema(schema);
  for (const v of instances) assert.equal(accepts(compact, v), accepts(schema, v), `${JSON.stringify(v)} against ${JSON.stringify(compact)}`);
  return compact as Record<string, unknown>;
}

test('a nullable object becomes one node with type [object, null], and keeps its verdicts', () => {
  const raw = z.toJSONSchema(z.object({ a: z.object({ n: z.number().min(1) }).strict().nullable(), m: z.record(z.string(), z.number()) }), { target: 'draft-7' }) as Record<string, unknown>;
  const c = sameVerdicts(raw, [
    { a: null, m: {} }, { a: { n: 2 }, m: { x: 1 } }, { a: { n: 0 }, m: {} }, { a: { n: 2, extra: 1 }, m: {} },
    { a: 'x', m: {} }, { a: [], m: {} }, { a: null, m: { x: 'y' } }, { m: {} }, { a: null }, null, [],
  ]);
  const a = (c.properties as Record<string, Record<string, unknown>>).a!;
  assert.deepEqual(a.type, ['object', 'null']);
  assert.equal(a.anyOf, undefined);
  assert.equal((c.properties as Record<string, Record<string, unknown>>).m!.propertyNames, undefined);
});

test('an enum, a const or a union of two real types is never merged with null', () => {
  for (const inner of [z.enum(['x', 'y']), z.literal('k'), z.union([z.string(), z.number()]), z.string().refine(() => true)]) {
    const raw = z.toJSONSchema(z.object({ v: inner.nullable() }), { target: 'draft-7' }) as Record<string, unknown>;
    const c = sameVerdicts(raw, [{ v: null }, { v: 'x' }, { v: 'k' }, { v: 'z' }, { v: 3 }, { v: true }, {}]);
    // enum/const apply to null too: merging would refuse null.
    if (!(inner instanceof z.ZodUnion) && inner.def.type !== 'string') assert.ok((c.properties as Record<string, Record<string, unknown>>).v!.anyOf, 'kept as anyOf');
  }
});

test('outer keywords other than annotations keep the anyOf (a null must satisfy them too)', () => {
  const s = { anyOf: [{ type: 'string', minLength: 2 }, { type: 'null' }], not: { const: null } };
  const c = sameVerdicts(s, [null, 'ab', 'a', 3]) as Record<string, unknown>;
  assert.ok(c.anyOf);
  const alone = { description: 'd', anyOf: [{ type: 'null' }, { type: 'string', minLength: 2 }] };
  const c2 = sameVerdicts(alone, [null, 'ab', 'a', 3]) as Record<string, unknown>;
  assert.deepEqual(c2, { type: ['string', 'null'], minLength: 2, description: 'd' });
});

test('property names that look like keywords are schemas of their own, not keywords', () => {
  const s = { type: 'object', properties: { enum: { anyOf: [{ type: 'number' }, { type: 'null' }] }, propertyNames: { type: 'string' }, additionalProperties: {} } };
  const c = sameVerdicts(s, [{ enum: null }, { enum: 2 }, { enum: 'x' }, { propertyNames: 3 }, { propertyNames: 'x' }, { additionalProperties: 1 }]) as { properties: Record<string, unknown> };
  assert.deepEqual(Object.keys(c.properties), ['enum', 'propertyNames', 'additionalProperties']);
  assert.deepEqual(c.properties.propertyNames, { type: 'string' });
  assert.deepEqual(c.properties.additionalProperties, {});
});

test('every built-in outputSchema keeps its verdicts on real and broken envelopes', () => {
  for (const tool of allTools()) {
    const raw = z.toJSONSchema(tool.envelope, { target: 'draft-7', io: 'output', unrepresentable: 'any' }) as Record<string, unknown>;
    delete raw.$schema;
    const base = { tool_call_id: 'tc_1', trace_id: 'tr_1', tool: tool.name, version: tool.version, ok: false, status: 'error', data: null, text: 't', stats: { duration_ms: 1 }, artifacts: { files_changed: [], commands_run: [] }, context: { cwd: '.', args: {} } };
    const err = { code: 'NotFound', message: 'm' };
    sameVerdicts(raw, [
      { ...base, error: err }, { ...base, error: null }, { ...base, error: { ...err, code: 'Nope' } }, { ...base, error: { ...err, details: { a: 1 } } },
      { ...base, error: err, stats: { x: 'y' } }, { ...base, error: err, data: {} }, { ...base, error: err, data: 3 }, { ...base, error: err, extra: 1 },
      { ...base, error: err, warnings: ['w'] }, { ...base, error: err, warnings: [1] }, { ...base, error: err, status: 'maybe' },
    ]);
    assert.deepEqual(jsonSchema(tool.envelope, 'output'), compactSchema(raw), `${tool.name}: tools/list shows the compacted schema`);
  }
});
