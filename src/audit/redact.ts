// "token" but not "tokens" (max_tokens is a count, not a credential).
const SECRET_KEY = /token(?!s)|secret|passw(or)?d|passphrase|api[-_]?key|^key$|[-_]key$|private[-_]?key|authorization|cookie|credential/i;

/** Values shaped like known credentials, wherever they appear in a string. */
const SECRET_SHAPES: RegExp[] = [
  /eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, // JWT
  /\bgh[pousr]_[A-Za-z0-9]{20,}\b/g, // GitHub tokens
  /\bgithub_pat_[A-Za-z0-9_]{20,}\b/g,
  /\bsk-[A-Za-z0-9_-]{16,}\b/g, // OpenAI / Anthropic style
  /\b(AKIA|ASIA)[0-9A-Z]{16}\b/g, // AWS access key id
  /\bxox[abprs]-[A-Za-z0-9-]{10,}\b/g, // Slack
  /\bAIza[0-9A-Za-z_-]{35}\b/g, // Google API key
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g,
  /\b([Bb]earer|BEARER|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/g,
];

/** `NAME=value` where the name says secret (env assignments in commands, URL queries): the value goes. */
const SECRET_ASSIGNMENT = /\b([A-Za-z0-9_.-]*(?:token|secret|passw(?:or)?d|api[-_]?key|access[-_]?key|private[-_]?key)[A-Za-z0-9_.-]*)=("[^"]*"|'[^']*'|[^\s&"';]+)/gi;

export const REDACTED = '[REDACTED]';

export function redactString(s: string): string {
  let out = s;
  for (const re of SECRET_SHAPES) out = out.replace(re, REDACTED);
  return out.replace(SECRET_ASSIGNMENT, (_m, name: string) => `${name}=${REDACTED}`);
}

/** A deep copy with secret-named keys and credential-shaped values replaced by "[REDACTED]". */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > 32) return REDACTED;
  if (typeof value === 'string') return redactString(value);
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = SECRET_KEY.test(k) && v !== null && v !== undefined && v !== '' ? REDACTED : redact(v, depth + 1);
    }
    return out;
  }
  return value;
}
