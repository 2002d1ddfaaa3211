import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import os from 'node:os';
import { classifyAddress } from '../net/address.js';

/** True for 127.0.0.0/8, ::1 and "localhost": the only hosts served without an explicit token. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || classifyAddress(h) === 'loopback';
}

export function isWildcardHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  return h === '0.0.0.0' || h === '::' || h === '';
}

export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/**
 * A constant-time check of `Authorization: Bearer <token>` (hashing first hides the length too);
 * the token's own digest is computed once, not on every request.
 */
export function bearerCheck(token: string): (req: IncomingMessage) => boolean {
  const want = digest(token);
  return (req) => {
    const h = req.headers.authorization;
    if (typeof h !== 'string') return false;
    const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(h);
    if (!m) return false;
    return timingSafeEqual(digest(m[1]!), want);
  };
}

function bracket(h: string): string {
  return h.includes(':') && !h.startsWith('[') ? `[${h}]` : h;
}

/**
 * The Host header values this server answers to (DNS rebinding: a page on evil.example that
 * resolves to 127.0.0.1 sends Host: evil.example:PORT and is refused).
 */
export function allowedHostHeaders(boundHost: string, port: number, extra: string[] = []): Set<string> {
  const names = new Set<string>(['localhost', '127.0.0.1', '[::1]', bracket(boundHost.toLowerCase())]);
  if (isWildcardHost(boundHost)) {
    for (const addrs of Object.values(os.networkInterfaces())) for (const a of addrs ?? []) names.add(bracket(a.address.toLowerCase().split('%')[0]!));
    names.add(os.hostname().toLowerCase());
  }
  const out = new Set<string>();
  for (const n of names) out.add(`${n}:${port}`);
  for (const e of extra.map((x) => x.trim().toLowerCase()).filter(Boolean)) {
    out.add(e);
    if (!/:\d+$/.test(e) || e.endsWith(']')) out.add(`${bracket(e)}:${port}`);
  }
  return out;
}

export function hostAllowed(req: IncomingMessage, allowed: Set<string>): boolean {
  const h = req.headers.host;
  return typeof h === 'string' && allowed.has(h.toLowerCase());
}

/** Origin: absent (not a browser), a loopback origin, or one on the configured allow-list. */
export function originAllowed(req: IncomingMessage, allowList: string[]): boolean {
  const o = req.headers.origin;
  if (o === undefined) return true;
  if (typeof o !== 'string') return false;
  if (allowList.includes(o)) return true;
  try {
    const u = new URL(o);
    return (u.protocol === 'http:' || u.protocol === 'https:') && isLoopbackHost(u.hostname);
  } catch {
    return false; // "null" and other opaque origins
  }
}
