// The webhook events of the OpenAPI document: render.ended, and the monitors' two events, delivered
// and signed alike (src/delivery/).
import { ref, type Json } from './operation.ts';

/** A render with webhook_url ended: one delivery, its headers, and what its answers do. */
const renderEnded = (): Json => ({
  post: {
    summary: 'A render with webhook_url ended',
    description:
      'One delivery per render, POSTed to webhook_url. Verify the raw body before trusting it: `X-Signature`, or the Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`) with any Standard Webhooks library. A 2xx ends the delivery; anything else is retried on the schedule (honouring Retry-After); 410 stops it.',
    parameters: [
      {
        name: 'X-Webhook-Id',
        in: 'header',
        required: true,
        description: 'The delivery id (= body id), the same on every attempt.',
        schema: { type: 'string' },
      },
      {
        name: 'X-Webhook-Timestamp',
        in: 'header',
        required: true,
        description: 'Unix seconds of this attempt.',
        schema: { type: 'string', pattern: '^[0-9]+$' },
      },
      {
        name: 'X-Signature',
        in: 'header',
        required: true,
        description: 'Lowercase hex HMAC-SHA256, keyed with the secret key, of "{X-Webhook-Timestamp}.{raw body}".',
        schema: { type: 'string', pattern: '^[0-9a-f]{64}$' },
      },
      {
        name: 'webhook-id',
        in: 'header',
        required: true,
        description: 'Standard Webhooks: the delivery id.',
        schema: { type: 'string' },
      },
      {
        name: 'webhook-timestamp',
        in: 'header',
        required: true,
        description: 'Standard Webhooks: Unix seconds of this attempt.',
        schema: { type: 'string', pattern: '^[0-9]+$' },
      },
      {
        name: 'webhook-signature',
        in: 'header',
        required: true,
        description:
          'Standard Webhooks: "v1," + base64 HMAC-SHA256, keyed with the bytes of the secret key, of "{webhook-id}.{webhook-timestamp}.{raw body}".',
        schema: { type: 'string', pattern: '^v1,[A-Za-z0-9+/]+={0,2}$' },
      },
    ],
    requestBody: { required: true, content: { 'application/json': { schema: ref('WebhookPayload') } } },
    responses: {
      '2XX': { description: 'Delivered: the delivery ends.' },
      '410': { description: 'Gone: the delivery stops, no retry.' },
      default: {
        description: 'Retried after the next delay of the schedule; dead-lettered after the last attempt.',
      },
    },
  },
});

/** The monitor events, delivered and signed like render.ended (`delivery` is its operation, whose headers and answers they share). */
function monitorEvents(delivery: Json): Json {
  const event = (summary: string) => ({
    post: {
      ...delivery,
      summary,
      requestBody: { required: true, content: { 'application/json': { schema: ref('MonitorEvent') } } },
    },
  });
  return {
    'monitor.changed': event(
      "A monitor's capture changed since the last one (its pixels or its text, as compare asks)",
    ),
    'monitor.failed': event("A monitor's tick failed to render"),
  };
}

/** Every webhook event: render.ended, and the monitors' beside it. */
export function webhooks(): Json {
  const ended = renderEnded();
  return { 'render.ended': ended, ...monitorEvents(ended.post as Json) };
}
