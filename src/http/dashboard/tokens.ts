// Signed, expiring tokens (session cookies, mail links): base64url JSON plus an HMAC-SHA256 tag.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Every token carries its purpose and its expiry (ms since the epoch). */
export interface TokenBody {
  purpose: string;
  exp: number;
}

const tag = (secret: string, body: string) => createHmac('sha256', secret).update(body).digest('base64url');

/** Seals `body` with `secret`; the result is safe in a cookie and a URL. */
export function seal<T extends TokenBody>(secret: string, body: T): string {
  const encoded = Buffer.from(JSON.stringify(body)).toString('base64url');
  return `${encoded}.${tag(secret, `${body.purpose}.${encoded}`)}`;
}

/** Opens a sealed token of `purpose`; null when forged, tampered with, of another purpose or expired. */
export function open<T extends TokenBody>(
  secret: string,
  purpose: string,
  token: string | undefined,
  now = Date.now(),
): T | null {
  if (!token || token.length > 4096) return null;
  const [encoded, presented, extra] = token.split('.');
  if (!encoded || !presented || extra !== undefined) return null;
  // The purpose is part of what is signed, so a mail link never passes as a session cookie.
  const expected = Buffer.from(tag(secret, `${purpose}.${encoded}`));
  const given = Buffer.from(presented);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
  try {
    const body = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) as T;
    if (body.purpose !== purpose || typeof body.exp !== 'number' || body.exp < now) return null;
    return body;
  } catch {
    return null;
  }
}
