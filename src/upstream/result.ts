import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ToolError } from '../core/errors.js';
import { limitText } from '../core/output.js';
import type { ExtraContent, ToolContext, ToolResult } from '../core/types.js';

/** Images larger than this are kept out of the reply (described in the text instead). */
const MAX_IMAGE_BYTES = 2 * 1024 * 1024;

function blockText(b: CallToolResult['content'][number]): string | undefined {
  if (b.type === 'text') return b.text;
  if (b.type === 'resource_link') return `[resource link: ${b.uri}${b.name ? ` (${b.name})` : ''}]`;
  if (b.type === 'resource') {
    const r = b.resource as { uri: string; text?: string; mimeType?: string };
    return typeof r.text === 'string' ? `[resource ${r.uri}]\n${r.text}` : `[binary resource ${r.uri}${r.mimeType ? `, ${r.mimeType}` : ''}]`;
  }
  if (b.type === 'audio') return `[audio, ${b.mimeType}]`;
  return undefined;
}

/**
 * An upstream's CallToolResult as toolgate's result: its structuredContent (or its text) in
 * `data`, its text and images as content blocks, cut to the output limits with the whole of it
 * spilled to disk. An `isError` result is an IOError carrying the upstream's own message.
 */
export async function fromUpstreamResult(upstream: string, tool: string, res: CallToolResult, ctx: Pick<ToolContext, 'limits' | 'spill'>): Promise<ToolResult<unknown>> {
  const blocks = Array.isArray(res.content) ? res.content : [];
  const text = blocks.map(blockText).filter((x): x is string => x !== undefined).join('\n');
  if (res.isError) {
    const msg = limitText(text || '(no message)', { output_bytes: 4000, output_lines: 40 }).text;
    throw new ToolError('IOError', `Upstream "${upstream}" reports that tool "${tool}" failed: ${msg}`, { details: { upstream, tool } });
  }
  const images: ExtraContent[] = [];
  for (const b of blocks) {
    if (b.type === 'image' && b.data.length * 0.75 <= MAX_IMAGE_BYTES) images.push({ type: 'image', data: b.data, mimeType: b.mimeType });
  }
  const shown = limitText(text, ctx.limits, 'head');
  let storage: { storage_ref?: string; sha256?: string } = {};
  const structured = res.structuredContent;
  let data: unknown;
  const extra: ExtraContent[] = [];
  if (structured && typeof structured === 'object') {
    const json = JSON.stringify(structured);
    if (Buffer.byteLength(json) > ctx.limits.output_bytes) {
      storage = await ctx.spill(json, 'json');
      data = { truncated: true, content: limitText(json, ctx.limits, 'head').text };
    } else {
      data = structured;
    }
    if (text) extra.push({ type: 'text', text: shown.text });
  } else {
    data = shown.truncated ? { content: shown.text, truncated: true } : { content: shown.text };
  }
  if (shown.truncated && !storage.storage_ref) storage = await ctx.spill(text, 'txt');
  const cut = shown.truncated || (data as { truncated?: boolean }).truncated === true;
  const summary = `${upstream}/${tool} answered: ${blocks.length} content block(s)${images.length ? `, ${images.length} image(s)` : ''}${structured ? ', structured content in data' : ''}${cut ? `; cut to the output limits, the whole answer is in storage_ref` : ''}.`;
  return {
    data, text: summary, status: cut ? 'partial' : 'ok',
    content: [...extra, ...images],
    stats: { content_blocks: blocks.length, bytes: Buffer.byteLength(text) },
    ...storage,
  };
}
