import { UsageError } from './setup.js';

export function parseJsonArgs(text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`--args is not valid JSON (${(e as Error).message}); quote it in single quotes: --args '{"path":"a.txt"}'`);
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new UsageError('--args must be a JSON object, e.g. --args \'{"path":"a.txt"}\'');
  return v as Record<string, unknown>;
}
