import { z } from 'zod';
import { upstreamsSchema } from '../upstream/config.js';
import { customToolsSchema } from '../tools/custom/config.js';
import { DEFAULT_DENY_PROGRAMS, DEFAULT_INTERACTIVE, DEFAULT_REPL } from '../shell/guard-defaults.js';

const decision = z.enum(['allow', 'ask', 'deny']);
const stringOrList = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);

export const ruleSchema = z.strictObject({
  tool: z.string().min(1),
  path: stringOrList.optional(),
  command: stringOrList.optional(),
  domain: stringOrList.optional(),
  decision,
  /** Commands only: let the matched command reach the network inside the sandbox. */
  network: z.boolean().optional(),
  match: z.array(z.string()).optional(),
  not_match: z.array(z.string()).optional(),
  reason: z.string().optional(),
});

export const PERMISSIONS = ['fs.read', 'fs.write', 'fs.delete', 'proc.exec', 'net.connect', 'upstream', 'git.write'] as const;

export const profileSchema = z.strictObject({
  base: z.enum(['readonly', 'edit', 'full']).default('full'),
  permissions: z.array(z.enum(PERMISSIONS)).optional(),
  rules: z.array(ruleSchema).default([]),
});

export const policySchema = z.strictObject({
  version: z.literal(1).default(1),
  profile: z.string().min(1).default('full'),
  mode: z.enum(['interactive', 'ci']).default('interactive'),
  profiles: z.record(z.string(), profileSchema).default({}),
  paths: z.strictObject({
    deny: z.array(z.string().min(1)).default([]),
    protect: z.array(z.string().min(1)).default([]),
    allow_hardlinks: z.boolean().default(false),
  }).default({ deny: [], protect: [], allow_hardlinks: false }),
  rules: z.array(ruleSchema).default([]),
  limits: z.strictObject({
    timeout_ms: z.number().int().positive().max(24 * 3600_000).default(120_000),
    output_bytes: z.number().int().positive().default(51_200),
    output_lines: z.number().int().positive().default(2000),
    max_processes: z.number().int().positive().max(256).default(8),
    max_file_bytes: z.number().int().positive().default(10 * 1024 * 1024),
  }).default({ timeout_ms: 120_000, output_bytes: 51_200, output_lines: 2000, max_processes: 8, max_file_bytes: 10 * 1024 * 1024 }),
  sandbox: z.strictObject({
    backend: z.enum(['auto', 'bwrap', 'none']).default('auto'),
    network: z.enum(['deny', 'allow']).default('deny'),
  }).default({ backend: 'auto', network: 'deny' }),
  /** Command guardrails (seed 004): see policy.example.yaml. A list given here replaces the default list. */
  commands: z.strictObject({
    prefer_tools: z.boolean().default(true),
    deny_programs: z.array(z.string().min(1)).default(DEFAULT_DENY_PROGRAMS),
    interactive: z.array(z.string().min(1)).default(DEFAULT_INTERACTIVE),
    repl: z.array(z.string().min(1)).default(DEFAULT_REPL),
  }).default({ prefer_tools: true, deny_programs: DEFAULT_DENY_PROGRAMS, interactive: DEFAULT_INTERACTIVE, repl: DEFAULT_REPL }),
  env: z.strictObject({
    allow: z.array(z.string().min(1)).default([]),
    set: z.record(z.string(), z.string()).default({}),
  }).default({ allow: [], set: {} }),
  network: z.strictObject({
    allow_private: z.boolean().default(false),
    max_bytes: z.number().int().positive().default(5 * 1024 * 1024),
    timeout_ms: z.number().int().positive().default(30_000),
  }).default({ allow_private: false, max_bytes: 5 * 1024 * 1024, timeout_ms: 30_000 }),
  /** The decision for a call no rule covers, by the tool's risk (SPEC §7); one value sets all three. */
  defaults: z.union([decision, z.strictObject({
    low: decision.default('allow'),
    medium: decision.default('ask'),
    high: decision.default('ask'),
  })]).default({ low: 'allow', medium: 'ask', high: 'ask' }),
  approvals: z.strictObject({
    timeout_ms: z.number().int().positive().default(300_000),
    /** An answer given after the call stopped waiting applies once to a retry within this window. */
    retry_window_ms: z.number().int().positive().max(24 * 3600_000).default(600_000),
  }).default({ timeout_ms: 300_000, retry_window_ms: 600_000 }),
  audit: z.strictObject({
    path: z.string().min(1).optional(),
    fsync: z.boolean().default(false),
  }).default({ fsync: false }),
  /** Other MCP servers mounted behind the gate (SPEC §12). */
  upstreams: upstreamsSchema,
  /** Custom tools: a fixed argv, no shell (SPEC §12). */
  tools: customToolsSchema,
});

export type PolicyInput = z.input<typeof policySchema>;
export type PolicyData = z.output<typeof policySchema>;
export type RuleData = z.output<typeof ruleSchema>;
export type Decision = z.output<typeof decision>;
