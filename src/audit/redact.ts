// "token" but not "tokens" (max_tokens is a count, not a credential). Matched on the key with
// its words joined (accessKey, access_key, Access-Key and ACCESS_KEY all read "accesskey").
const SECRET_KEY = /token(?!s)|secret|passw(or)?d|passphrase|apikey|accesskey|privatekey|authorization|cookie|credential|sessionid|signature|bearer|connectionstring/;

/** The words of a key in any case style: camelCase, snake_case, kebab-case, Header-Case, SCREAMING_CASE. */
function keyWords(k: string): string[] {
  // Most keys are plain lower-case words (path, old_string, expected_sha256): no regex needed.
  if (/^[a-z0-9]+$/.test(k)) return [k];
  if (/^[a-z0-9_]+$/.test(k)) return k.split('_').filter(Boolean);
  return k.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);
}

/** True for a key whose value is a credential: `apiKey`, `X-Api-Key`, `clientSecret`, `ssh_key`, `key`, `auth`… */
export function isSecretKey(k: string): boolean {
  const words = keyWords(k);
  if (words.length === 0) return false;
  if (SECRET_KEY.test(words.join(''))) return true;
  const last = words[words.length - 1]!;
  return last === 'key' || last === 'pwd' || last === 'pat' || last === 'dsn' || words.includes('auth');
}

/** Values shaped like known credentials, wherever they appear in a string. */
const SECRET_SHAPES: RegExp[] = [
  /eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, // JWT
  /\bgh[pousr]_[A-Za-z0-9]{20,}\b/g, // GitHub tokens
  /\bgithub_pat_[A-Za-z0-9_]{20,}\b/g,
  /\bsk-[A-Za-z0-9_-]{16,}\b/g, // OpenAI / Anthropic style
  /\b(AKIA|ASIA)[0-9A-Z]{16}\b/g, // AWS access key id
  /\bxox[abprs]-[A-Za-z0-9-]{10,}\b/g, // Slack
  /\bAIza[0-9A-Za-z_-]{35}\b/g, // Google API key
  /\bnpm_[A-Za-z0-9]{36}\b/g, // npm
  /\bglpat-[A-Za-z0-9_-]{20,}\b/g, // GitLab
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g,
  /\b([Bb]earer|BEARER|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/g,
];

/** `NAME=value` where the name says secret (env assignments in commands, URL queries): the value goes. */
const SECRET_ASSIGNMENT = /(?<![A-Za-z0-9])([A-Za-z0-9_.-]{0,64}(?:token|secret|passw(?:or)?d|api[-_]?key|access[-_]?key|private[-_]?key)[A-Za-z0-9_.-]{0,64})[ \t]{0,8}=[ \t]{0,8}("[^"]*"|'[^']*'|[^\s&"';]+)/gi;

/** `--password v`, `--api-key v`, `-token v`: a secret-named flag followed by its value as the next word. */
const SECRET_FLAG = /(?<![A-Za-z0-9_-])(--?[A-Za-z0-9_-]{0,64}(?:token|secret|passw(?:or)?d|api[-_]?key|access[-_]?key|private[-_]?key)[ \t]{1,8})(?!-)("[^"]*"|'[^']*'|[^\s"';|&]+)/gi;

/** `scheme://user:password@host`: the password goes. */
const URL_PASSWORD = /(\b[A-Za-z][A-Za-z0-9+.-]{0,32}:\/\/[^\s/:@]{0,256}:)([^\s/@]{1,256})@/g;

/** `"apiKey": "v"`, `X-Api-Key: v`, `client_secret: v` inside a string (JSON bodies, headers): the value goes. */
// Names are bounded (64 characters either side) and start at a name boundary, so a megabyte of
// letters costs linear time, not quadratic.
const SECRET_COLON = /(?<![A-Za-z0-9])((["']?)[A-Za-z0-9_.-]{0,64}(?:token|secret|passw(?:or)?d|api[-_]?key|access[-_]?key|private[-_]?key|credential|cookie)[A-Za-z0-9_.-]{0,64}\2[ \t]*:[ \t]*)("[^"]{0,4096}"|'[^']{0,4096}'|[^\s&"',;}]{1,4096})/gi;

export const REDACTED = '[REDACTED]';

/** The shortest text any SECRET_SHAPES pattern matches ("Basic " and 8 characters). */
const SHORTEST_SHAPE = 14;

export function redactString(s: string): string {
  let out = s;
  // Each step runs only when the text holds what its pattern cannot match without (a path or a
  // short word holds no "=", ":" or "://"): the same result, without a dozen scans per argument.
  if (out.length >= SHORTEST_SHAPE) for (const re of SECRET_SHAPES) out = out.replace(re, REDACTED);
  if (out.includes('=')) out = out.replace(SECRET_ASSIGNMENT, (_m, name: string) => `${name}=${REDACTED}`);
  if (out.includes('-')) out = out.replace(SECRET_FLAG, (m, head: string, value: string) => (value === REDACTED ? m : `${head}${REDACTED}`));
  if (out.includes('://')) out = out.replace(URL_PASSWORD, (_m, head: string) => `${head}${REDACTED}@`);
  if (!out.includes(':')) return out;
  return out.replace(SECRET_COLON, (m, head: string, _q: string, value: string) => (value === REDACTED ? m : `${head}${REDACTED}`));
}

/** A deep copy with secret-named keys and credential-shaped values replaced by "[REDACTED]". */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > 32) return REDACTED;
  if (typeof value === 'string') return redactString(value);
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = isSecretKey(k) && v !== null && v !== undefined && v !== '' ? REDACTED : redact(v, depth + 1);
    }
    return out;
  }
  return value;
}
