export interface TextLimits { output_bytes: number; output_lines: number }
/** The SPEC's defaults for text returned to the model (policy `limits:` may change them). */
export const DEFAULT_TEXT_LIMITS: TextLimits = { output_bytes: 51_200, output_lines: 2000 };

/** Bytes and lines of the text block kept for what is not the file list (summary, warnings, the storage_ref line). */
export const TEXT_RESERVE = { bytes: 4096, lines: 16 };

/** The limits less what other text already uses (never below one line and zero bytes). */
export function lessUsed(limits: TextLimits, bytes: number, lines: number): TextLimits {
  return { output_bytes: Math.max(0, limits.output_bytes - bytes), output_lines: Math.max(1, limits.output_lines - lines) };
}

/**
 * As many paths as fit the text limits (the closing line included), then one line saying where
 * the rest are. A glob may return up to 10,000 paths in structuredContent; the text block stays
 * a bounded read (SPEC §3). `saved`: the full list is in storage_ref (else only structuredContent).
 */
export function filesWithin(files: string[], limits: TextLimits, saved = true): string[] {
  let all = 0;
  for (const f of files) all += Buffer.byteLength(f) + 1;
  if (files.length <= limits.output_lines && all - (files.length ? 1 : 0) <= limits.output_bytes) return files;
  const more = (n: number) => `… ${files.length - n} more of these ${files.length} paths are not shown here (text limit: ${limits.output_lines} lines / ${limits.output_bytes} bytes): all are in structuredContent.data.files${saved ? ', and the full list in storage_ref' : ''}.`;
  // The closing line is longest with n = 0 (most digits): reserve that.
  const room = limits.output_bytes - Buffer.byteLength(more(0));
  let bytes = 0;
  let n = 0;
  for (; n < files.length && n < limits.output_lines - 1; n++) {
    bytes += Buffer.byteLength(files[n]!) + 1;
    if (bytes > room) break;
  }
  return [...files.slice(0, n), more(n)];
}

/**
 * The readable payload of a result, for the text content block. Many clients hand the model
 * only `content`, not `structuredContent`: without this, a model would be told "read 40
 * lines" and never see them. Rendered from the well-known `data` keys, already bounded by
 * each tool's output limits; the envelope JSON itself is never dumped here.
 */
export function renderBody(data: unknown, limits: TextLimits = DEFAULT_TEXT_LIMITS, saved = true): string {
  if (!data || typeof data !== 'object') return '';
  const d = data as Record<string, unknown>;
  const parts: string[] = [];
  if (typeof d.content === 'string' && d.content && d.encoding !== 'base64') parts.push(d.content);
  if (typeof d.output === 'string' && d.output) parts.push(d.output);
  if (typeof d.diff === 'string' && d.diff) parts.push(d.diff);
  if (Array.isArray(d.matches)) {
    for (const m of d.matches as Array<{ file?: string; line?: number; text?: string; before?: string[]; after?: string[] }>) {
      if (!m || typeof m !== 'object') continue;
      const line = m.line ?? 0;
      (m.before ?? []).forEach((t, i, a) => parts.push(`${m.file}-${line - a.length + i}-${t}`));
      parts.push(`${m.file}:${line}:${m.text ?? ''}`);
      (m.after ?? []).forEach((t, i) => parts.push(`${m.file}-${line + 1 + i}-${t}`));
    }
  }
  if (Array.isArray(d.files) && d.files.every((f) => typeof f === 'string')) parts.push(...filesWithin(d.files as string[], limits, saved));
  if (Array.isArray(d.counts)) {
    for (const c of d.counts as Array<{ file?: string; count?: number }>) parts.push(`${c.file}:${c.count}`);
  }
  if (Array.isArray(d.entries)) {
    for (const e of d.entries as Array<{ name?: string; type?: string; size?: number | null }>) {
      const suffix = e.type === 'dir' ? '/' : e.type === 'symlink' ? ' -> (symlink)' : '';
      parts.push(`${e.name}${suffix}${e.type === 'file' && typeof e.size === 'number' ? `  ${e.size}` : ''}`);
    }
  }
  if (Array.isArray(d.processes)) {
    for (const p of d.processes as Array<Record<string, unknown>>) parts.push(JSON.stringify(p));
  }
  return parts.join('\n');
}

const DETAILS_MAX = 4000;

/**
 * An error's `details` as text, for clients without structuredContent (protocol 2024-11-05 /
 * 2025-03-26) or that hand the model only the text block: the approval replay (the command
 * the user runs, the rule to add to the policy) is spelled out; the rest is compact JSON.
 */
export function renderDetails(details: Record<string, unknown> | undefined): string {
  if (!details || Object.keys(details).length === 0) return '';
  const { replay, ...rest } = details as { replay?: { rule?: unknown; command?: unknown } } & Record<string, unknown>;
  const parts: string[] = [];
  if (replay && typeof replay === 'object') {
    if (typeof replay.command === 'string' && replay.command) parts.push(`Replay command (the user runs it in a terminal to approve this one call):\n  ${replay.command}`);
    if (typeof replay.rule === 'string' && replay.rule) parts.push(`Replay rule (the user adds it under rules: in the policy to allow such calls):\n${replay.rule.replace(/\n$/, '').split('\n').map((l) => `  ${l}`).join('\n')}`);
  }
  if (Object.keys(rest).length) {
    const json = JSON.stringify(rest);
    parts.push(`details: ${json.length > DETAILS_MAX ? `${json.slice(0, DETAILS_MAX)}… (cut; the full details are in structuredContent.error.details)` : json}`);
  }
  return parts.join('\n');
}
