import { randomBytes, timingSafeEqual } from 'node:crypto';

const token = () => randomBytes(24).toString('base64url');

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * The console's secrets, in memory only (a restart forgets them): one-time login secrets that
 * are exchanged for a cookie session, each session with its own CSRF token.
 */
export class ConsoleAuth {
  private readonly logins = new Map<string, number>();
  private readonly sessions = new Map<string, { csrf: string }>();

  constructor(readonly cookieName: string, private readonly loginTtlMs = 24 * 3600_000, private readonly now: () => number = Date.now) {}

  /** A new one-time secret (shown to the person only). */
  mintLogin(): string {
    const s = token();
    this.logins.set(s, this.now() + this.loginTtlMs);
    return s;
  }

  /** Spends a one-time secret; returns the new session's cookie value, or null. */
  exchange(secret: unknown): string | null {
    if (typeof secret !== 'string' || secret.length === 0 || secret.length > 200) return null;
    for (const [s, until] of this.logins) {
      if (same(s, secret)) {
        this.logins.delete(s);
        if (until < this.now()) return null;
        const cookie = token();
        this.sessions.set(cookie, { csrf: token() });
        return cookie;
      }
    }
    return null;
  }

  /** The session of a request's cookie header, or null. */
  session(cookieHeader: string | undefined): { id: string; csrf: string } | null {
    if (!cookieHeader) return null;
    for (const part of cookieHeader.split(';')) {
      const eq = part.indexOf('=');
      if (eq < 0 || part.slice(0, eq).trim() !== this.cookieName) continue;
      const v = part.slice(eq + 1).trim();
      for (const [id, s] of this.sessions) if (same(id, v)) return { id, csrf: s.csrf };
    }
    return null;
  }

  checkCsrf(sess: { csrf: string }, header: string | string[] | undefined): boolean {
    return typeof header === 'string' && same(sess.csrf, header);
  }
}
