// Traces with OpenTelemetry, only when OTEL_EXPORTER_OTLP_ENDPOINT is set (docs/operations.md):
// one trace per request, carried as a W3C `traceparent` from the HTTP request through the RENDERS
// message to the render's steps, and through the DELIVERIES message to the webhook request. When
// tracing is off nothing of OpenTelemetry is loaded and every call here returns at once.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Attributes, Span, TextMapPropagator, Tracer } from '@opentelemetry/api';
import type { Config } from './config.ts';

/** A W3C trace context as headers: `traceparent` and, when there is one, `tracestate`. */
export type TraceCarrier = Record<string, string>;

interface Active {
  api: typeof import('@opentelemetry/api');
  tracer: Tracer;
  propagator: TextMapPropagator;
}

let active: Active | undefined;
/** The span work started inside `inSpan` belongs to: a render's steps find their render's span. */
const current = new AsyncLocalStorage<Span>();

const getter = {
  keys: (carrier: TraceCarrier) => Object.keys(carrier),
  get: (carrier: TraceCarrier, key: string) => carrier[key],
};
const setter = { set: (carrier: TraceCarrier, key: string, value: string) => void (carrier[key] = value) };

/**
 * Starts exporting spans over OTLP/HTTP when the endpoint is configured; returns what flushes and
 * stops it (a no-op when tracing is off).
 */
export async function startTracing(config: Pick<Config, 'otlpEndpoint' | 'roles'>): Promise<() => Promise<void>> {
  if (!config.otlpEndpoint) return async () => {};
  const [api, sdk, core, resources, otlp] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/core'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/exporter-trace-otlp-http'),
  ]);
  const exporter = new otlp.OTLPTraceExporter({ url: `${config.otlpEndpoint}/v1/traces` });
  const provider = new sdk.TracerProvider({
    resource: resources.resourceFromAttributes({
      'service.name': 'shutterbus',
      'shutterbus.roles': [...config.roles].join(','),
    }),
    spanProcessors: [new sdk.BatchSpanProcessor({ exporter, scheduledDelayMillis: 1000 })],
  });
  active = { api, tracer: provider.getTracer('shutterbus'), propagator: new core.W3CTraceContextPropagator() };
  return async () => {
    active = undefined;
    await provider.shutdown();
  };
}

/** True while spans are exported. */
export function tracingOn(): boolean {
  return active !== undefined;
}

/**
 * Starts a span, child of `parent`: another span, or a W3C trace context received in headers
 * (an incoming `traceparent` is honoured), else of the span of the surrounding `inSpan`.
 * Undefined when tracing is off.
 */
export function startSpan(
  name: string,
  parent?: Span | TraceCarrier,
  attributes?: Attributes,
  kind: 'server' | 'client' | 'consumer' | 'internal' = 'internal',
): Span | undefined {
  if (!active) return undefined;
  const { api, tracer, propagator } = active;
  parent ??= current.getStore();
  const context =
    parent === undefined
      ? api.ROOT_CONTEXT
      : 'spanContext' in parent && typeof parent.spanContext === 'function'
        ? api.trace.setSpan(api.ROOT_CONTEXT, parent as Span)
        : propagator.extract(api.ROOT_CONTEXT, parent as TraceCarrier, getter);
  const spanKind = {
    server: api.SpanKind.SERVER,
    client: api.SpanKind.CLIENT,
    consumer: api.SpanKind.CONSUMER,
    internal: api.SpanKind.INTERNAL,
  }[kind];
  return tracer.startSpan(name, { attributes, kind: spanKind }, context);
}

/** The W3C headers that make a span the parent of work elsewhere; undefined when tracing is off. */
export function traceCarrier(span: Span | undefined): TraceCarrier | undefined {
  if (!active || !span) return undefined;
  const carrier: TraceCarrier = {};
  active.propagator.inject(active.api.trace.setSpan(active.api.ROOT_CONTEXT, span), carrier, setter);
  return carrier;
}

/** Ends a span, marked as an error when `error` names what went wrong. */
export function endSpan(span: Span | undefined, error?: string): void {
  if (!span || !active) return;
  if (error) span.setStatus({ code: active.api.SpanStatusCode.ERROR, message: error });
  span.end();
}

/** Runs `work` with `span` as the parent of the spans started inside it (at once when tracing is off). */
export function inSpan<T>(span: Span | undefined, work: () => T): T {
  return span ? current.run(span, work) : work();
}

/** Runs one named step of a render in a span of its own, child of the surrounding one. */
export async function traced<T>(name: string, work: () => Promise<T>): Promise<T> {
  if (!active) return work();
  const span = startSpan(name);
  try {
    const result = await inSpan(span, work);
    endSpan(span);
    return result;
  } catch (err) {
    endSpan(span, (err as { code?: string }).code ?? (err as Error).message);
    throw err;
  }
}
