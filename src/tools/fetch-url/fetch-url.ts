import { z } from 'zod';
import { coveredByGrants } from '../../core/approval.js';
import { defineTool, descriptionBeside, type Tool } from '../../core/define-tool.js';
import { ToolError } from '../../core/errors.js';
import { limitText, sha256 } from '../../core/output.js';
import type { PlanTarget, ToolContext } from '../../core/types.js';
import { urlHost } from '../../net/address.js';
import { guardedFetch, type GuardedResponse, type Resolver } from '../../net/guarded-fetch.js';
import { evaluate } from '../../policy/evaluate.js';

const input = z.strictObject({
  url: z.string().min(1).max(8192).describe('The http:// or https:// URL to fetch.'),
  method: z.enum(['GET', 'POST']).default('GET').describe('HTTP method (default GET).'),
  headers: z.record(z.string(), z.string()).optional().describe('Request headers, e.g. {"accept": "application/json"}. Host, Content-Length and connection headers cannot be set.'),
  body: z.string().max(1024 * 1024).optional().describe('Request body for POST.'),
  max_bytes: z.number().int().positive().optional().describe('Read at most this many bytes of the body (never more than the policy\'s network.max_bytes).'),
});

const output = z.object({
  url: z.string().describe('The final URL, after redirects.'),
  status: z.number().int(),
  status_text: z.string(),
  content_type: z.string().nullable(),
  content: z.string().nullable().describe('The body as text (cut to the output limits), or null for a binary body.'),
  binary: z.boolean(),
  bytes: z.number().int().describe('Bytes of body received (at most max_bytes).'),
  truncated: z.boolean().describe('True when the body was cut (by max_bytes or the output limits).'),
  redirects: z.array(z.string()),
  sha256: z.string().describe('sha256 of the body received.'),
});

type Args = z.output<typeof input>;

const TEXT_TYPES = /^(text\/|application\/(json|[\w.+-]*\+json|xml|[\w.+-]*\+xml|javascript|ecmascript|x-www-form-urlencoded|x-ndjson|yaml|x-yaml|toml|graphql|sql))/i;

function isText(contentType: string | null, body: Buffer): boolean {
  if (contentType) return TEXT_TYPES.test(contentType.trim());
  // No type: text when it decodes as UTF-8 without NULs.
  if (body.includes(0)) return false;
  return !new TextDecoder('utf-8', { fatal: false }).decode(body.subarray(0, 4096)).includes('\uFFFD');
}

function decode(body: Buffer, contentType: string | null): string {
  const cs = /charset\s*=\s*"?([\w.-]+)/i.exec(contentType ?? '')?.[1];
  try {
    return new TextDecoder(cs ?? 'utf-8').decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

function parseTarget(url: string): PlanTarget {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new ToolError('InvalidArguments', `fetch_url: "${url}" is not a valid URL; give an absolute http:// or https:// URL.`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new ToolError('InvalidArguments', `fetch_url: only http and https URLs are fetched, not ${u.protocol}`);
  }
  return { kind: 'domain', host: urlHost(u).host, url: u.href };
}

export interface FetchUrlDeps {
  /** Name resolution; real DNS by default. Tests inject one. */
  resolve?: Resolver;
}

/** Builds the tool; `deps` lets tests inject name resolution (no ambient state). */
export function createFetchUrlTool(deps: FetchUrlDeps = {}): Tool<typeof input, z.output<typeof output>> {
  const tool = defineTool({
    name: 'fetch_url',
    version: '1.0.0',
    title: 'Fetch a URL',
    description: descriptionBeside(import.meta.url),
    input,
    output,
    risk: 'high',
    permissions: ['net.connect'],
    side_effects: 'network request to an allow-listed domain (a POST may change remote state)',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    aliases: { uri: 'url' },
    plan(args: Args) {
      const t = parseTarget(args.url);
      return { targets: [t], summary: `${args.method} ${t.kind === 'domain' ? t.url : args.url}` };
    },
    async execute(args: Args, _plan, ctx: ToolContext) {
      const net = ctx.policy.data.network;
      const maxBytes = Math.min(args.max_bytes ?? net.max_bytes, net.max_bytes);
      const judgeUrl = (u: URL, hop: number) => {
        if (hop === 0) return; // the pipeline judged (and, if asked, approved) the first URL
        const t: PlanTarget = { kind: 'domain', host: urlHost(u).host, url: u.href };
        const v = evaluate(tool, [t], ctx.policy);
        if (v.decision === 'allow') return;
        if (v.decision === 'ask' && coveredByGrants({ tool, plan: { targets: [t], summary: '' }, policy: ctx.policy, session: ctx.session })) return;
        throw new ToolError('NetworkDenied', `Refused the redirect to ${u.href}: the policy ${v.decision === 'deny' ? 'denies' : 'does not allow without asking'} ${t.host} (${v.rule}). Fetch that URL directly if you need it, or add a fetch_url domain rule.`,
          { details: { url: u.href, host: t.host, decision: v.decision, rule: v.rule } });
      };
      const res: GuardedResponse = await guardedFetch(
        { url: args.url, method: args.method, headers: args.headers, body: args.body },
        { allowPrivate: net.allow_private, maxBytes, timeoutMs: net.timeout_ms, signal: ctx.signal, resolve: deps.resolve, judgeUrl },
      );
      const contentType = res.headers['content-type'] ?? null;
      const hash = sha256(res.body);
      const base = { url: res.url, status: res.status, status_text: res.statusText, content_type: contentType, bytes: res.body.length, redirects: res.redirects, sha256: hash };
      const head = `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''} from ${res.url}${res.redirects.length ? ` after ${res.redirects.length} redirect(s)` : ''}`;
      if (!isText(contentType, res.body)) {
        const ref = res.body.length ? await ctx.spill(res.body, 'bin') : undefined;
        return {
          data: { ...base, content: null, binary: true, truncated: res.truncated },
          text: `${head}: binary body (${contentType ?? 'unknown type'}, ${res.body.length} bytes${res.truncated ? ', cut at max_bytes' : ''}), not shown${ref ? '; saved in storage_ref' : ''}.`,
          status: res.truncated ? 'partial' : 'ok',
          stats: { bytes: res.body.length, redirects: res.redirects.length },
          ...(ref ? { storage_ref: ref.storage_ref, sha256: ref.sha256 } : {}),
        };
      }
      const full = decode(res.body, contentType);
      const cut = limitText(full, ctx.limits, 'head');
      const truncated = cut.truncated || res.truncated;
      const ref = truncated ? await ctx.spill(full, 'txt') : undefined;
      return {
        data: { ...base, content: cut.text, binary: false, truncated },
        text: `${head}: ${contentType ?? 'text'}, ${res.body.length} bytes${res.truncated ? ' (cut at max_bytes)' : ''}${cut.truncated ? `; showing ${Buffer.byteLength(cut.text)} bytes, the rest is in storage_ref` : ''}.`,
        status: truncated ? 'partial' : 'ok',
        stats: { bytes: res.body.length, redirects: res.redirects.length },
        ...(ref ? { storage_ref: ref.storage_ref, sha256: ref.sha256 } : {}),
      };
    },
  });
  return tool;
}

export const fetchUrlTool = createFetchUrlTool();
