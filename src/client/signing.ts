// The signatures the service checks (docs/api.md, "Keys and signatures"): ScreenshotOne's scheme for
// /api/take and /api/animate, and the method and path bound into every other endpoint's.
import { createHmac } from 'node:crypto';

/** A value of an option: one value, or a list (the key repeated in a query, a JSON array in a body). */
export type OptionValue = string | number | boolean | readonly (string | number | boolean)[] | undefined | null;

/** Lowercase hex HMAC-SHA256 of `payload`, keyed with the secret key. */
export function hmacHex(secretKey: string, payload: string): string {
  return createHmac('sha256', secretKey).update(payload).digest('hex');
}

/**
 * A query string of `options` in the order given, a list as its key repeated; `access_key` and
 * `signature` in `options` are left out (the client adds them).
 */
function queryOf(options: Readonly<Record<string, OptionValue>>): URLSearchParams {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(options)) {
    if (value === undefined || value === null || name === 'signature' || name === 'access_key') continue;
    for (const item of Array.isArray(value) ? value : [value]) query.append(name, String(item));
  }
  return query;
}

/**
 * A GET URL of `/api/take` or `/api/animate` (ScreenshotOne's scheme): the options, then
 * `access_key`; with a secret key, `&signature=` last, the HMAC of the query string before it.
 */
export function takeUrl(
  baseUrl: string,
  endpoint: '/api/take' | '/api/animate',
  options: Readonly<Record<string, OptionValue>>,
  accessKey: string,
  secretKey?: string,
): string {
  const query = queryOf(options);
  query.append('access_key', accessKey);
  const signed = query.toString();
  const signature = secretKey === undefined ? '' : `&signature=${hmacHex(secretKey, signed)}`;
  return `${baseUrl}${endpoint}?${signed}${signature}`;
}

/**
 * The signature of a request to any endpoint other than /api/take and /api/animate: the hex HMAC of
 * `METHOD /path`, a newline, then `payload`, the raw query string without `signature` (GET, DELETE:
 * sent as `signature=` last) or the raw body (POST, PATCH: sent as `X-Signature`). `path` is the
 * path as sent, without the query. A take URL's or a webhook's signature is never valid there.
 */
export function signRequest(method: string, path: string, payload: string, secretKey: string): string {
  return hmacHex(secretKey, `${method.toUpperCase()} ${path}\n${payload}`);
}
