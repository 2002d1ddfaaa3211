import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction, Socket } from 'node:net';
import { ToolError } from '../core/errors.js';
import { judgeAddress, urlHost, type AddressVerdict } from './address.js';

/** Resolves a name to every address it has. Injected in tests; real DNS otherwise. */
export type Resolver = (host: string) => Promise<Array<{ address: string; family: number }>>;

export const systemResolver: Resolver = (host) => dnsLookup(host, { all: true, verbatim: true });

export interface GuardedRequest {
  url: string;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
}

export interface GuardOptions {
  allowPrivate: boolean;
  maxBytes: number;
  timeoutMs: number;
  signal: AbortSignal;
  maxRedirects?: number;
  resolve?: Resolver;
  /** Judges every URL before it is fetched (the first and every redirect hop); throws to refuse. */
  judgeUrl(url: URL, hop: number): void;
}

export interface GuardedResponse {
  url: string;
  status: number;
  statusText: string;
  headers: Record<string, string>;
  body: Buffer;
  /** True when the body was cut at maxBytes. */
  truncated: boolean;
  redirects: string[];
  /** The address the last hop connected to. */
  address: string;
}

/** Headers the caller may not set: they belong to the connection or would lie about the body. */
const FORBIDDEN_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'accept-encoding']);
/**
 * Kept when a redirect leaves the origin; every other header the caller set is dropped (an
 * `x-api-key` for site A must not follow an open redirect to site B).
 */
const CROSS_ORIGIN_SAFE_HEADERS = new Set(['accept', 'accept-language', 'user-agent', 'content-type']);

function denied(message: string, details: Record<string, unknown>): ToolError {
  return new ToolError('NetworkDenied', message, { details });
}

function refuseAddress(url: URL, v: AddressVerdict, viaName: boolean): ToolError {
  const what = v.category === 'metadata' ? 'a cloud metadata address' : `a ${v.category} address`;
  const lift = ['private', 'loopback', 'link-local'].includes(v.category)
    ? ' If this is intended, set network.allow_private: true in the policy.'
    : ' toolgate never connects there.';
  return denied(`Refused ${url.href}: ${viaName ? `${url.hostname} resolves to ${v.address}, ` : ''}${what}.${lift}`,
    { host: url.hostname, address: v.address, category: v.category });
}

/** Resolves the host and checks every address; returns the one to connect to. */
export async function checkedAddress(url: URL, opts: Pick<GuardOptions, 'allowPrivate' | 'resolve'>): Promise<{ address: string; family: 4 | 6 }> {
  const { host, ip } = urlHost(url);
  if (ip) {
    const v = judgeAddress(host, opts.allowPrivate);
    if (!v.allowed) throw refuseAddress(url, v, false);
    return { address: host, family: ip };
  }
  let all: Array<{ address: string; family: number }>;
  try {
    all = await (opts.resolve ?? systemResolver)(host);
  } catch (e) {
    throw new ToolError('IOError', `Could not resolve ${host}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}. Check the URL.`, { cause: e });
  }
  if (all.length === 0) throw new ToolError('IOError', `${host} has no address. Check the URL.`);
  // Every address must pass: a name that mixes public and private answers is refused.
  for (const a of all) {
    const v = judgeAddress(a.address, opts.allowPrivate);
    if (!v.allowed) throw refuseAddress(url, v, true);
  }
  const first = all[0]!;
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}

/** A lookup that answers only the checked address, so the socket goes where the check looked. */
function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return ((_host: string, options: { all?: boolean }, cb: (...a: unknown[]) => void) => {
    if (options?.all) cb(null, [{ address, family }]);
    else cb(null, address, family);
  }) as unknown as LookupFunction;
}

function cleanHeaders(h: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h ?? {})) {
    const key = k.toLowerCase();
    if (FORBIDDEN_HEADERS.has(key)) {
      throw new ToolError('InvalidArguments', `fetch_url: the header "${k}" cannot be set; remove it.`);
    }
    if (/[\r\n]/.test(k) || /[\r\n]/.test(v)) throw new ToolError('InvalidArguments', `fetch_url: header "${k}" contains a line break.`);
    out[key] = v;
  }
  return out;
}

interface Hop {
  status: number;
  statusText: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  truncated: boolean;
}

function oneHop(url: URL, target: { address: string; family: 4 | 6 }, req: { method: string; headers: Record<string, string>; body?: string },
  maxBytes: number, signal: AbortSignal): Promise<Hop> {
  return new Promise((resolve, reject) => {
    const mod = url.protocol === 'https:' ? https : http;
    const { host, ip } = urlHost(url);
    const headers: Record<string, string> = { 'user-agent': 'toolgate-fetch_url', accept: '*/*', ...req.headers, 'accept-encoding': 'identity' };
    if (req.body !== undefined) headers['content-length'] = String(Buffer.byteLength(req.body));
    const r = mod.request({
      protocol: url.protocol, hostname: host, port: url.port || undefined, path: `${url.pathname}${url.search}`,
      method: req.method, headers, signal, agent: false,
      lookup: pinnedLookup(target.address, target.family),
      ...(url.protocol === 'https:' && !ip ? { servername: host } : {}),
    });
    r.on('socket', (s: Socket) => {
      s.once('connect', () => {
        // Belt and braces: the socket must be connected to the address that was checked.
        if (s.remoteAddress && s.remoteAddress !== target.address && s.remoteAddress.replace(/^::ffff:/, '') !== target.address) {
          r.destroy(denied(`Refused ${url.href}: connected to ${s.remoteAddress}, not the checked ${target.address}.`, { address: s.remoteAddress }));
        }
      });
    });
    r.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      const done = () => resolve({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', headers: res.headers, body: Buffer.concat(chunks), truncated });
      res.on('data', (c: Buffer) => {
        if (truncated) return;
        if (size + c.length > maxBytes) {
          chunks.push(c.subarray(0, maxBytes - size));
          size = maxBytes;
          truncated = true;
          done();
          res.destroy();
          return;
        }
        chunks.push(c);
        size += c.length;
      });
      res.on('end', done);
      res.on('error', (e) => { if (!truncated) reject(e); });
    });
    r.on('error', reject);
    r.end(req.body);
  });
}

function ioError(e: unknown, url: URL): ToolError {
  if (e instanceof ToolError) return e;
  const err = e as NodeJS.ErrnoException;
  return new ToolError('IOError', `Fetching ${url.href} failed: ${err.code ?? ''} ${err.message}`.trim() + '.', { cause: e, details: { code: err.code } });
}

/**
 * HTTP(S) with the SSRF guard: every hop is judged by the policy (judgeUrl), its name resolved
 * here and every address checked, and the socket pinned to the checked address (no second DNS
 * answer can move it). Redirects are followed by hand, at most maxRedirects. Body capped at maxBytes.
 */
export async function guardedFetch(input: GuardedRequest, opts: GuardOptions): Promise<GuardedResponse> {
  const ctrl = new AbortController();
  let timedOut = false;
  const onOuter = () => ctrl.abort(opts.signal.reason);
  if (opts.signal.aborted) throw new ToolError('Cancelled', 'The call was cancelled.');
  opts.signal.addEventListener('abort', onOuter, { once: true });
  const timer = setTimeout(() => { timedOut = true; ctrl.abort(new Error('timeout')); }, opts.timeoutMs);
  timer.unref?.();
  const maxRedirects = opts.maxRedirects ?? 5;
  let url: URL;
  try {
    url = new URL(input.url);
  } catch {
    throw new ToolError('InvalidArguments', `fetch_url: "${input.url}" is not a valid URL.`);
  }
  let method: string = input.method;
  let body = input.body;
  let headers = cleanHeaders(input.headers);
  const redirects: string[] = [];
  try {
    for (let hop = 0; ; hop++) {
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        throw denied(`Refused ${url.href}: only http and https are fetched.`, { url: url.href });
      }
      if (url.username || url.password) throw new ToolError('InvalidArguments', 'fetch_url: credentials in the URL are not accepted; pass an Authorization header.');
      opts.judgeUrl(url, hop);
      // Name resolution is inside the time cap and the cancel too (a resolver that never answers).
      let stop = () => {};
      const aborted = new Promise<never>((_, reject) => {
        stop = () => reject(timedOut
          ? new ToolError('Timeout', `Resolving ${url.hostname} took longer than ${opts.timeoutMs} ms.`)
          : new ToolError('Cancelled', 'The call was cancelled.'));
      });
      aborted.catch(() => {}); // settles after the race may be over: never an unhandled rejection
      if (ctrl.signal.aborted) stop();
      else ctrl.signal.addEventListener('abort', stop, { once: true });
      let target: { address: string; family: 4 | 6 };
      try {
        target = await Promise.race([checkedAddress(url, opts), aborted]);
      } finally {
        ctrl.signal.removeEventListener('abort', stop);
      }
      let res: Hop;
      try {
        res = await oneHop(url, target, { method, headers, body }, opts.maxBytes, ctrl.signal);
      } catch (e) {
        if (timedOut) throw new ToolError('Timeout', `Fetching ${url.href} took longer than ${opts.timeoutMs} ms; raise network.timeout_ms or try a smaller resource.`);
        if (opts.signal.aborted) throw new ToolError('Cancelled', 'The call was cancelled.');
        throw ioError(e, url);
      }
      const loc = res.headers.location;
      if ([301, 302, 303, 307, 308].includes(res.status) && typeof loc === 'string') {
        if (redirects.length >= maxRedirects) {
          throw new ToolError('IOError', `Too many redirects (more than ${maxRedirects}) starting at ${input.url}.`, { details: { redirects } });
        }
        let next: URL;
        try {
          next = new URL(loc, url);
        } catch {
          throw new ToolError('IOError', `${url.href} redirected to an invalid location "${loc}".`);
        }
        redirects.push(next.href);
        if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
          method = 'GET';
          body = undefined;
        }
        if (next.origin !== url.origin) {
          headers = Object.fromEntries(Object.entries(headers).filter(([k]) => CROSS_ORIGIN_SAFE_HEADERS.has(k.toLowerCase())));
        }
        url = next;
        continue;
      }
      const flat: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(', ') : v;
      return { url: url.href, status: res.status, statusText: res.statusText, headers: flat, body: res.body, truncated: res.truncated, redirects, address: target.address };
    }
  } finally {
    clearTimeout(timer);
    opts.signal.removeEventListener('abort', onOuter);
  }
}
