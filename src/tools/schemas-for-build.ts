// Entry point of the build's first pass (scripts/build.mjs): the built-in tools' JSON Schemas,
// which the bundle then carries prebuilt instead of deriving them at every start-up.
import { computeJsonSchemas } from '../core/define-tool.js';
import { schemaKey, type ToolJsonSchemas } from '../core/tool-schemas.js';
import { allTools } from './index.js';

export function builtInToolSchemas(): Record<string, ToolJsonSchemas> {
  const out: Record<string, ToolJsonSchemas> = {};
  for (const t of allTools()) out[schemaKey(t.name, t.version)] = computeJsonSchemas(t.input, t.envelope);
  return out;
}
