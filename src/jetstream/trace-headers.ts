// A W3C trace context rides a JetStream message as its `traceparent` / `tracestate` headers.
import { headers, type MsgHdrs } from '@nats-io/transport-node';
import type { TraceCarrier } from '../tracing.ts';

const traceHeaderNames = ['traceparent', 'tracestate'];

/** Message headers carrying `carrier`; undefined when there is nothing to carry (tracing off). */
export function traceHeaders(carrier: TraceCarrier | undefined): MsgHdrs | undefined {
  if (!carrier?.traceparent) return undefined;
  const hdrs = headers();
  for (const name of traceHeaderNames) if (carrier[name]) hdrs.set(name, carrier[name]);
  return hdrs;
}

/** The trace context a message carried, read through its header getter; undefined when none. */
export function carrierOf(header: (name: string) => string | undefined): TraceCarrier | undefined {
  const traceparent = header('traceparent');
  if (!traceparent) return undefined;
  const tracestate = header('tracestate');
  return { traceparent, ...(tracestate ? { tracestate } : {}) };
}
