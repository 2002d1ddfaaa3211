/** A tool's JSON Schemas as tools/list shows them. */
export interface ToolJsonSchemas {
  input: Record<string, unknown>;
  output: Record<string, unknown>;
}

// Set by scripts/build.mjs (esbuild `define`) to the built-in tools' schemas, computed from the
// same zod schemas at build time: zod's toJSONSchema over every tool cost ~15-20 ms of each
// start-up. Absent when running from source (tests under tsx): then defineTool computes them.
declare const __TOOLGATE_TOOL_SCHEMAS__: Record<string, ToolJsonSchemas> | undefined;

/** The key a tool's prebuilt schemas are stored under: name and version. */
export const schemaKey = (name: string, version: string) => `${name}@${version}`;

// Named once only: esbuild pastes the whole literal at every mention. Outside the bundle the
// name does not exist at all (ReferenceError).
const PREBUILT: Record<string, ToolJsonSchemas> | undefined = (() => {
  try {
    return __TOOLGATE_TOOL_SCHEMAS__;
  } catch {
    return undefined;
  }
})();

export function prebuiltSchemas(key: string): ToolJsonSchemas | undefined {
  return PREBUILT && Object.hasOwn(PREBUILT, key) ? PREBUILT[key] : undefined;
}
