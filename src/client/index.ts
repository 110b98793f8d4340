// Shutterbus for customers' servers: sign GET URLs and POST bodies, verify webhook deliveries.
// Only node:crypto; import as `shutterbus/client`.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** A workspace's key pair. The secret key stays on the customer's server. */
export interface Keys {
  accessKey: string;
  secretKey: string;
}

/** Render parameters; a list becomes the key repeated (GET) or a JSON array (POST). */
export type TakeParams = Record<string, string | number | boolean | readonly (string | number)[] | undefined>;

/** Where `signUrl` points unless told otherwise. */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:3000';

const hmacHex = (secretKey: string, payload: string) => createHmac('sha256', secretKey).update(payload).digest('hex');

/**
 * A signed GET URL for `/api/take` (or `endpoint`: `/api/animate` is signed the same way): the query
 * string holds every parameter and `access_key`, in the order given, is signed as it stands, and
 * `&signature=` comes last (specification §5).
 */
export function signUrl(
  params: TakeParams,
  keys: Keys,
  baseUrl: string = DEFAULT_BASE_URL,
  endpoint: '/api/take' | '/api/animate' = '/api/take',
): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined || name === 'signature' || name === 'access_key') continue;
    for (const item of Array.isArray(value) ? value : [value]) query.append(name, String(item));
  }
  query.append('access_key', keys.accessKey);
  const signed = query.toString();
  return `${baseUrl.replace(/\/+$/, '')}${endpoint}?${signed}&signature=${hmacHex(keys.secretKey, signed)}`;
}

/** A signed POST: send exactly `body` with the `headers` (specification §5: never re-serialise it). */
export function signBody(
  params: TakeParams,
  keys: Keys,
): { body: string; signature: string; headers: Record<string, string> } {
  const body = JSON.stringify(params);
  const signature = hmacHex(keys.secretKey, body);
  return {
    body,
    signature,
    headers: { 'content-type': 'application/json', 'x-access-key': keys.accessKey, 'x-signature': signature },
  };
}

/** Headers as Node, fetch or a plain object hold them. */
export type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function headerOf(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * True when a webhook delivery is genuine, by either header set it carries (docs/api.md):
 * `X-Signature`, the hex HMAC of `"{X-Webhook-Timestamp}.{raw body}"`, or the Standard Webhooks
 * `webhook-signature`, a `v1,` base64 HMAC of `"{webhook-id}.{webhook-timestamp}.{raw body}"`; both
 * keyed with the secret key, and the timestamp within `toleranceSeconds` of now (either way).
 * Pass the raw body bytes as received, not a re-serialised object.
 */
export function verifyWebhook(
  secretKey: string,
  headers: HeaderSource,
  rawBody: string | Uint8Array,
  toleranceSeconds = 300,
  now: number = Date.now(),
): boolean {
  const body =
    typeof rawBody === 'string'
      ? Buffer.from(rawBody)
      : Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  const fresh = (timestamp: string | undefined): timestamp is string =>
    timestamp !== undefined &&
    /^\d{1,12}$/.test(timestamp) &&
    Math.abs(now / 1000 - Number(timestamp)) <= toleranceSeconds;
  return verifyOwn(secretKey, headers, body, fresh) || verifyStandard(secretKey, headers, body, fresh);
}

/** `X-Webhook-Timestamp` and `X-Signature`. */
function verifyOwn(
  secretKey: string,
  headers: HeaderSource,
  body: Buffer,
  fresh: (timestamp: string | undefined) => boolean,
): boolean {
  const timestamp = headerOf(headers, 'x-webhook-timestamp');
  const signature = headerOf(headers, 'x-signature');
  if (!fresh(timestamp) || !signature || !/^[0-9a-f]{64}$/.test(signature)) return false;
  const expected = createHmac('sha256', secretKey).update(`${timestamp}.`).update(body).digest();
  return timingSafeEqual(expected, Buffer.from(signature, 'hex'));
}

/** `webhook-id`, `webhook-timestamp` and `webhook-signature` (Standard Webhooks: space-separated `v1,<base64>` entries). */
function verifyStandard(
  secretKey: string,
  headers: HeaderSource,
  body: Buffer,
  fresh: (timestamp: string | undefined) => boolean,
): boolean {
  const id = headerOf(headers, 'webhook-id');
  const timestamp = headerOf(headers, 'webhook-timestamp');
  const signatures = headerOf(headers, 'webhook-signature');
  if (!id || !fresh(timestamp) || !signatures) return false;
  const expected = createHmac('sha256', Buffer.from(secretKey, 'utf8'))
    .update(`${id}.${timestamp}.`)
    .update(body)
    .digest();
  return signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',');
    if (version !== 'v1' || !signature || !/^[A-Za-z0-9+/]{43}=$/.test(signature)) return false;
    return timingSafeEqual(expected, Buffer.from(signature, 'base64'));
  });
}
