/**
 * The JSON Schemas zod emits, rewritten to the same meaning in fewer nodes. A client that checks
 * structuredContent (the SDK's Client, with ajv) compiles every outputSchema of tools/list at each
 * connection: toolgate's 16 envelopes cost it 35-110 ms there, the main part of start-up as such a
 * client sees it. Each rewrite keeps the set of accepted instances under draft-07:
 * - `propertyNames: {type: "string"}`: every JSON object key is a string;
 * - `additionalProperties: {}`: the empty schema accepts anything, as does its absence;
 * - `anyOf: [X, {type: "null"}]` (either order) becomes X with `type: [T, "null"]`, when X has
 *   one type T and only keywords that apply to that type alone (a null instance passes them all):
 *   never with `enum`, `const`, `not`, `anyOf`/`oneOf`/`allOf`, `$ref` or `if`.
 * Descriptions stay: they document the data for the people and models that read them.
 */
const TYPE_ONLY = new Set([
  'type', 'description', 'title', 'default', 'examples',
  'properties', 'required', 'additionalProperties', 'patternProperties', 'minProperties', 'maxProperties',
  'items', 'minItems', 'maxItems', 'uniqueItems',
  'minLength', 'maxLength', 'pattern', 'format',
  'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf',
]);

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
const isNullOnly = (s: unknown) => isObj(s) && s.type === 'null' && Object.keys(s).length === 1;
const mergeable = (s: unknown): s is Record<string, unknown> =>
  isObj(s) && typeof s.type === 'string' && s.type !== 'null' && Object.keys(s).every((k) => TYPE_ONLY.has(k));

/** Keys whose value is a map of names to schemas (not a schema itself). */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', 'definitions', '$defs']);

export function compactSchema(s: unknown): unknown {
  if (Array.isArray(s)) return s.map(compactSchema);
  if (!isObj(s)) return s;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === 'propertyNames' && isObj(v) && v.type === 'string' && Object.keys(v).length === 1) continue;
    if (k === 'additionalProperties' && isObj(v) && Object.keys(v).length === 0) continue;
    if (SCHEMA_MAPS.has(k) && isObj(v)) out[k] = Object.fromEntries(Object.entries(v).map(([name, sub]) => [name, compactSchema(sub)]));
    else if (k === 'enum' || k === 'const' || k === 'required' || k === 'examples' || k === 'default') out[k] = v;
    else out[k] = compactSchema(v);
  }
  const any = out.anyOf;
  if (Array.isArray(any) && any.length === 2) {
    const [a, b] = any as unknown[];
    const x = isNullOnly(b) ? a : isNullOnly(a) ? b : undefined;
    // The outer keys must not say anything a null would have to satisfy either: only annotations.
    const outerOk = Object.keys(out).every((k) => k === 'anyOf' || k === 'description' || k === 'title');
    if (outerOk && mergeable(x)) {
      const { anyOf: _drop, ...outer } = out;
      return { ...x, ...outer, type: [x.type, 'null'] };
    }
  }
  return out;
}
