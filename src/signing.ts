// HMAC-SHA256 signatures as the specification defines them: lowercase hex, keyed with the secret key.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The lowercase hex HMAC-SHA256 of `payload` keyed with `secretKey`. */
export function hmacHex(secretKey: string, payload: string | Uint8Array): string {
  return createHmac('sha256', secretKey).update(payload).digest('hex');
}

/** Constant-time check of a presented signature; anything not 64 lowercase hex characters simply fails. */
export function signatureMatches(secretKey: string, payload: string | Uint8Array, presented: string): boolean {
  if (!/^[0-9a-f]{64}$/.test(presented)) return false;
  return timingSafeEqual(Buffer.from(hmacHex(secretKey, payload), 'hex'), Buffer.from(presented, 'hex'));
}

/**
 * Splits a raw GET query string into the part that was signed and the signature, which must be
 * the last parameter. `misplaced`: a signature is present but not last (or given twice).
 */
export function splitSignedQuery(rawQuery: string): { signed: string; signature: string } | 'absent' | 'misplaced' {
  const parameters = rawQuery.split('&');
  const positions = parameters.flatMap((parameter, index) => (parameter.split('=')[0] === 'signature' ? [index] : []));
  if (positions.length === 0) return 'absent';
  if (positions.length > 1 || positions[0] !== parameters.length - 1) return 'misplaced';
  const last = parameters[parameters.length - 1];
  return { signed: parameters.slice(0, -1).join('&'), signature: last.slice('signature='.length) };
}

/** A signed example GET URL for https://example.com, exactly as a customer would build it. */
export function signedExampleUrl(baseUrl: string, accessKey: string, secretKey: string): string {
  const query = `url=${encodeURIComponent('https://example.com')}&access_key=${accessKey}`;
  return `${baseUrl}/api/take?${query}&signature=${hmacHex(secretKey, query)}`;
}
