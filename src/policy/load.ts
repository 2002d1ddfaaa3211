import { readFile } from 'node:fs/promises';
import { LineCounter, parseDocument, isNode } from 'yaml';
import { z } from 'zod';
import { compilePolicy, PolicyError, type CompileOptions } from './compile.js';
import { policySchema, type PolicyData } from './schema.js';
import { loadShellParser } from '../shell/parser.js';
import { examplePartsWith } from '../shell/examples.js';
import type { CompiledPolicy } from './types.js';

export { PolicyError };

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') return `unknown key(s) ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
  // A bad name under upstreams:/tools: (a record key): say what a good one looks like.
  if (issue.code === 'invalid_key' && issue.issues[0]) return `bad name: ${issue.issues[0].message}`;
  return issue.message;
}

/** Parses and validates policy YAML; every problem names its line and key. */
export function parsePolicyText(text: string, origin: string): { data: PolicyData; lines: (p: (string | number)[]) => number | undefined } {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    const line = lc.linePos(e.pos[0]).line;
    throw new PolicyError(`${origin}:${line}: YAML error: ${e.message.split('\n')[0]}`, line);
  }
  const lines = (keyPath: (string | number)[]) => {
    for (let n = keyPath.length; n >= 0; n--) {
      const node = doc.getIn(keyPath.slice(0, n), true);
      if (isNode(node) && node.range) return lc.linePos(node.range[0]).line;
    }
    return undefined;
  };
  const raw = doc.toJS() ?? {};
  const parsed = policySchema.safeParse(raw);
  if (!parsed.success) {
    // A misspelt key usually explains a missing one: report unknown keys first.
    const issue = parsed.error.issues.find((i) => i.code === 'unrecognized_keys') ?? parsed.error.issues[0]!;
    const keyPath = issue.path.filter((k): k is string | number => typeof k !== 'symbol');
    const key = keyPath.join('.') || '(top level)';
    const line = lines(issue.code === 'unrecognized_keys' ? [...keyPath, issue.keys[0]!] : keyPath);
    const missing = issue.code !== 'unrecognized_keys' && doc.getIn(keyPath) === undefined;
    throw new PolicyError(`${origin}:${line ?? '?'}: ${key}: ${missing ? 'is required but missing' : describeIssue(issue)}`, line, key);
  }
  return { data: parsed.data, lines };
}

export async function loadPolicyFile(file: string, opts: Omit<CompileOptions, 'origin' | 'lines'> = {}): Promise<CompiledPolicy> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new PolicyError(`cannot read policy file ${file}: ${(e as Error).message}`);
  }
  const { data, lines } = parsePolicyText(text, file);
  // The bash grammar (~40 ms of wasm loading) is needed here only to check match/not_match
  // examples; a policy without them starts without it (run_command loads it on first use).
  const commandExamples = hasCommandExamples(data) ? examplePartsWith(await loadShellParser()) : undefined;
  try {
    return compilePolicy(data, { ...opts, origin: file, lines, commandExamples });
  } catch (e) {
    if (e instanceof PolicyError) throw new PolicyError(`${file}:${e.line ?? '?'}: ${e.message}`, e.line, e.key);
    throw e;
  }
}

/** Whether any rule (top level or in a profile) carries match/not_match examples. */
export function hasCommandExamples(data: PolicyData): boolean {
  const rules = [...data.rules, ...Object.values(data.profiles).flatMap((p) => p.rules)];
  return rules.some((r) => (r.match?.length ?? 0) > 0 || (r.not_match?.length ?? 0) > 0);
}

export function defaultPolicy(opts: Omit<CompileOptions, 'origin' | 'lines'> = {}): CompiledPolicy {
  return compilePolicy(policySchema.parse({}), { ...opts, origin: '(defaults)' });
}
