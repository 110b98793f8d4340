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
 * What a request to any endpoint but /api/take and /api/animate signs (docs/api.md, "Signatures"):
 * `METHOD /path`, a newline, then the raw query string up to `&signature=` or the raw body.
 */
export function scopedPayload(method: string, path: string, payload: string | Uint8Array): Buffer {
  return Buffer.concat([Buffer.from(`${method.toUpperCase()} ${path}\n`), Buffer.from(payload)]);
}

/** A parameter name as URLSearchParams reads it (`+` a space, `%XX` decoded); as sent when it does not decode. */
function decodedName(name: string): string {
  if (!name.includes('%') && !name.includes('+')) return name;
  try {
    return decodeURIComponent(name.replaceAll('+', ' '));
  } catch {
    return name;
  }
}

/**
 * Splits a raw GET query string into the part that was signed and the signature, which must be
 * the last parameter. `misplaced`: a signature is present but not last (or given twice).
 * `encoded`: a name that decodes to `signature` without being sent as is (`signatur%65`), which
 * the parameter parser would read as a signature the check never saw.
 */
export function splitSignedQuery(
  rawQuery: string,
): { signed: string; signature: string } | 'absent' | 'misplaced' | 'encoded' {
  const parameters = rawQuery.split('&');
  const names = parameters.map((parameter) => parameter.split('=')[0]);
  if (names.some((name) => name !== 'signature' && decodedName(name) === 'signature')) return 'encoded';
  const positions = names.flatMap((name, index) => (name === 'signature' ? [index] : []));
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
