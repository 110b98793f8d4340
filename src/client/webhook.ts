// Webhook deliveries (docs/api.md, "Webhooks"): checks either signature a delivery carries, and its age.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Headers as fetch, Node's http or a plain object hold them (names in any case). */
export type WebhookHeaders =
  | { get(name: string): string | null }
  | Readonly<Record<string, string | readonly string[] | undefined>>;

/** What a delivery announces (`render.succeeded`, `render.failed`, `monitor.changed`, `monitor.failed`). */
export interface WebhookEvent {
  id: string;
  type: string;
  created_at: string;
  data: {
    render_id?: string;
    url?: string;
    format?: string;
    file_url?: string;
    size_bytes?: number;
    error_code?: string;
    error_message?: string;
    external_identifier?: string;
    monitor_id?: string;
    [field: string]: unknown;
  };
}

/** A delivery that is not genuine, or too old or too far ahead; `reason` says which. */
export class WebhookVerificationError extends Error {
  readonly reason: 'signature' | 'timestamp' | 'body';
  constructor(reason: WebhookVerificationError['reason'], message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
    this.reason = reason;
  }
}

/** What verifyWebhook checks. */
export interface VerifyWebhookInput {
  /** The workspace's secret key (`sk_...`). */
  secret: string;
  headers: WebhookHeaders;
  /** The raw body exactly as received: not an object parsed and serialised again. */
  body: string | Uint8Array;
  /** How far the delivery's timestamp may be from now, either way; default 300 s. */
  toleranceSeconds?: number;
  /** Now, in ms since the epoch (a test's clock); default Date.now(). */
  now?: number;
}

function headerOf(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof headers.get === 'function') return (headers.get as (name: string) => string | null)(name) ?? undefined;
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return typeof value === 'string' ? value : value?.[0];
}

const bytesOf = (body: string | Uint8Array) =>
  typeof body === 'string' ? Buffer.from(body) : Buffer.from(body.buffer, body.byteOffset, body.byteLength);

/**
 * Whether a delivery's signature is genuine and its timestamp within `toleranceSeconds` of `now`:
 * `X-Signature`, the hex HMAC of `"{X-Webhook-Timestamp}.{raw body}"`, or the Standard Webhooks
 * `webhook-signature`, a `v1,` base64 HMAC of `"{webhook-id}.{webhook-timestamp}.{raw body}"`.
 */
export function deliveryIsGenuine(
  secretKey: string,
  headers: WebhookHeaders,
  rawBody: string | Uint8Array,
  toleranceSeconds = 300,
  now: number = Date.now(),
): boolean {
  return checkDelivery(secretKey, headers, bytesOf(rawBody), toleranceSeconds, now) === undefined;
}

/**
 * The event a genuine, fresh delivery announces; throws WebhookVerificationError otherwise. Either
 * header set is enough (docs/api.md): ours, or the Standard Webhooks one.
 */
export function verifyWebhook(input: VerifyWebhookInput): WebhookEvent {
  const body = bytesOf(input.body);
  const refusal = checkDelivery(
    input.secret,
    input.headers,
    body,
    input.toleranceSeconds ?? 300,
    input.now ?? Date.now(),
  );
  if (refusal) throw refusal;
  try {
    return JSON.parse(body.toString('utf8')) as WebhookEvent;
  } catch {
    throw new WebhookVerificationError('body', 'The delivery is signed but its body is not JSON.');
  }
}

function checkDelivery(
  secretKey: string,
  headers: WebhookHeaders,
  body: Buffer,
  toleranceSeconds: number,
  now: number,
): WebhookVerificationError | undefined {
  const stale = (timestamp: string | undefined) =>
    timestamp === undefined ||
    !/^\d{1,12}$/.test(timestamp) ||
    Math.abs(now / 1000 - Number(timestamp)) > toleranceSeconds;
  const own = ownSignature(secretKey, headers, body);
  const standard = standardSignature(secretKey, headers, body);
  const genuine = [own, standard].filter((check) => check.genuine);
  if (genuine.length === 0) {
    return new WebhookVerificationError(
      'signature',
      'The delivery carries no signature made with this secret key (X-Signature or webhook-signature).',
    );
  }
  if (genuine.every((check) => stale(check.timestamp))) {
    return new WebhookVerificationError(
      'timestamp',
      `The delivery's timestamp is more than ${toleranceSeconds} s from now: a replay, or a clock that is off.`,
    );
  }
  return undefined;
}

/** `X-Webhook-Timestamp` and `X-Signature`. */
function ownSignature(secretKey: string, headers: WebhookHeaders, body: Buffer) {
  const timestamp = headerOf(headers, 'x-webhook-timestamp');
  const signature = headerOf(headers, 'x-signature');
  if (timestamp === undefined || !signature || !/^[0-9a-f]{64}$/.test(signature)) return { genuine: false, timestamp };
  const expected = createHmac('sha256', secretKey).update(`${timestamp}.`).update(body).digest();
  return { genuine: timingSafeEqual(expected, Buffer.from(signature, 'hex')), timestamp };
}

/** `webhook-id`, `webhook-timestamp` and `webhook-signature` (Standard Webhooks: space-separated `v1,<base64>` entries). */
function standardSignature(secretKey: string, headers: WebhookHeaders, body: Buffer) {
  const id = headerOf(headers, 'webhook-id');
  const timestamp = headerOf(headers, 'webhook-timestamp');
  const signatures = headerOf(headers, 'webhook-signature');
  if (!id || timestamp === undefined || !signatures) return { genuine: false, timestamp };
  const expected = createHmac('sha256', Buffer.from(secretKey, 'utf8'))
    .update(`${id}.${timestamp}.`)
    .update(body)
    .digest();
  const genuine = signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',');
    if (version !== 'v1' || !signature || !/^[A-Za-z0-9+/]{43}=$/.test(signature)) return false;
    return timingSafeEqual(expected, Buffer.from(signature, 'base64'));
  });
  return { genuine, timestamp };
}
