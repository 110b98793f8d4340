// One webhook attempt: check the address again, sign, POST to the pinned address, read the verdict.
import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { ServiceError } from '../errors.ts';
import { resolvePublic, type TargetPolicy } from '../net/target.ts';
import { hmacHex } from '../signing.ts';
import { endSpan, startSpan, traceCarrier } from '../tracing.ts';

/** A receiver has this long to answer one attempt (docs/api.md). */
export const ATTEMPT_TIMEOUT_MS = 10_000;

/** What one attempt came to. `refused`: the address rules forbid the target now; never retried. */
export type AttemptResult =
  | { outcome: 'delivered'; status: number }
  | { outcome: 'failed'; status?: number; error: string; retryAfterSeconds?: number }
  | { outcome: 'gone'; status: 410; error: string }
  | { outcome: 'refused'; error: string };

/** One signed POST to make. */
export interface DeliveryAttempt {
  id: string;
  webhookUrl: string;
  body: string;
  secretKey: string;
  /** Unix seconds of this attempt; defaults to now. */
  timestamp?: number;
  /** webhook_sign=false: no signature headers (the id and timestamp are still sent). */
  unsigned?: boolean;
}

/**
 * The headers of a signed delivery (docs/api.md): ours, and the same id, timestamp and a signature
 * under the Standard Webhooks names, so that its libraries verify a delivery as they are (the key is
 * the secret key's bytes: `new Webhook(secretKey, { format: 'raw' })`).
 */
export function webhookHeaders(id: string, body: string, secretKey: string, timestamp: number): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'Shutterbus-Webhooks/1',
    'x-webhook-id': id,
    'x-webhook-timestamp': String(timestamp),
    'x-signature': hmacHex(secretKey, `${timestamp}.${body}`),
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': `v1,${createHmac('sha256', Buffer.from(secretKey, 'utf8')).update(`${id}.${timestamp}.${body}`).digest('base64')}`,
  };
}

/** The headers of a delivery sent with webhook_sign=false: the same, without any signature. */
export function unsignedHeaders(id: string, timestamp: number): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'Shutterbus-Webhooks/1',
    'x-webhook-id': id,
    'x-webhook-timestamp': String(timestamp),
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
  };
}

/** Retry-After as seconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterSeconds(header: string | undefined, now = Date.now()): number | undefined {
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** Makes one attempt; never throws, never follows a redirect, connects only to the address that passed the rules. */
export async function sendWebhook(attempt: DeliveryAttempt, policy: TargetPolicy): Promise<AttemptResult> {
  let url: URL;
  let pinned: string;
  try {
    url = new URL(attempt.webhookUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return { outcome: 'refused', error: `${url.protocol} is not allowed` };
    pinned = await resolvePublic(url.hostname, { ...policy, param: 'webhook_url' });
  } catch (err) {
    if (err instanceof ServiceError && err.code === 'url_not_allowed')
      return { outcome: 'refused', error: describe(err) };
    return {
      outcome: 'failed',
      error: err instanceof ServiceError ? err.code : String((err as Error)?.message ?? err),
    };
  }
  const family = pinned.includes(':') ? 6 : 4;
  // Node asks for every address when it may race families; either way, only the pinned one is answered.
  const lookup = ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) =>
    options?.all
      ? callback(null, [{ address: pinned, family }])
      : callback(null, pinned, family)) as unknown as LookupFunction;
  const timestamp = attempt.timestamp ?? Math.floor(Date.now() / 1000);
  // With tracing on, the request carries the render's trace on to the receiver (traceparent).
  const span = startSpan(
    'POST webhook',
    undefined,
    { 'http.request.method': 'POST', 'server.address': url.hostname, 'shutterbus.delivery_id': attempt.id },
    'client',
  );
  const signed = attempt.unsigned
    ? unsignedHeaders(attempt.id, timestamp)
    : webhookHeaders(attempt.id, attempt.body, attempt.secretKey, timestamp);
  const headers = { ...signed, ...traceCarrier(span) };
  const client = url.protocol === 'https:' ? https : http;
  const result = await new Promise<AttemptResult>((resolve) => {
    const request = client.request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': Buffer.byteLength(attempt.body) },
        lookup,
        agent: false,
        timeout: ATTEMPT_TIMEOUT_MS,
      },
      (response) => {
        response.resume();
        response.once('end', () => clearTimeout(deadline));
        const status = response.statusCode ?? 0;
        if (status >= 200 && status < 300) return resolve({ outcome: 'delivered', status });
        if (status === 410) return resolve({ outcome: 'gone', status, error: 'HTTP 410' });
        const retryAfter = retryAfterSeconds(response.headers['retry-after'] as string | undefined);
        resolve({
          outcome: 'failed',
          status,
          error: `HTTP ${status}`,
          ...(retryAfter !== undefined ? { retryAfterSeconds: retryAfter } : {}),
        });
      },
    );
    // The whole attempt, connection included, is bounded; `timeout` alone only covers idle sockets.
    const deadline = setTimeout(
      () => request.destroy(new Error(`no answer within ${ATTEMPT_TIMEOUT_MS / 1000} s`)),
      ATTEMPT_TIMEOUT_MS,
    );
    request.once('timeout', () => request.destroy(new Error(`no answer within ${ATTEMPT_TIMEOUT_MS / 1000} s`)));
    request.once('error', (err) => {
      clearTimeout(deadline);
      resolve({ outcome: 'failed', error: err.message });
    });
    request.end(attempt.body);
  });
  endSpan(span, result.outcome === 'delivered' ? undefined : result.error);
  return result;
}

function describe(err: ServiceError): string {
  const details = (err.details.error_details as { message: string }[] | undefined)?.map((d) => d.message).join('; ');
  return details ? `${err.code}: ${details}` : err.code;
}
