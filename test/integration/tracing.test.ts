// Traces (docs/operations.md): with OTEL_EXPORTER_OTLP_ENDPOINT set, one request is one trace across
// the ingress process and the render and delivery process, continuing an incoming traceparent, and
// the webhook request carries it on; with it unset, nothing of the OpenTelemetry SDK is loaded.
import { spawnSync, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Workspace } from '../../src/workspaces/workspace.ts';
import {
  call,
  createWorkspace,
  spawnService,
  startService,
  startStack,
  type TestService,
  type TestStack,
} from '../helpers/service.ts';
import { waitFor } from '../helpers/wait.ts';

interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  service: string;
}

const tracing = suite<{
  stack: TestStack;
  ingress: TestService;
  worker: ChildProcess;
  collector: http.Server;
  spans: ExportedSpan[];
  hooks: http.IncomingHttpHeaders[];
  hookServer: http.Server;
  hookUrl: string;
  workspace: Workspace;
}>('traces across processes');

/** Listens on 127.0.0.1; `onBody` gets every request's path, headers and body. */
async function listen(
  onBody: (path: string, headers: http.IncomingHttpHeaders, body: string) => void,
): Promise<{ server: http.Server; base: string }> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      onBody(req.url ?? '/', req.headers, body);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

tracing.before(async (context) => {
  context.spans = [];
  context.hooks = [];
  // An OTLP/HTTP receiver: the exporter posts JSON ExportTraceServiceRequests to /v1/traces.
  const collector = await listen((path, _headers, body) => {
    if (path !== '/v1/traces') return;
    for (const resourceSpans of JSON.parse(body).resourceSpans ?? []) {
      const service = resourceSpans.resource.attributes.find((a: { key: string }) => a.key === 'shutterbus.roles')
        ?.value.stringValue;
      for (const scope of resourceSpans.scopeSpans)
        for (const span of scope.spans) context.spans.push({ ...span, service });
    }
  });
  context.collector = collector.server;
  const hooks = await listen((_path, headers) => context.hooks.push(headers));
  context.hookServer = hooks.server;
  context.hookUrl = `${hooks.base}/hook`;
  context.stack = await startStack();
  const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.base, WEBHOOK_RETRY_SCHEDULE: '1s' };
  context.ingress = await startService(context.stack, { ...otel, ROLES: 'ingress' });
  context.worker = await spawnService(context.stack, { ...otel, ROLES: 'render,delivery' });
  context.workspace = await createWorkspace(context.stack);
});

tracing.after(async ({ stack, ingress, worker, collector, hookServer }) => {
  worker?.kill('SIGKILL');
  await ingress?.close();
  await stack?.stop();
  await new Promise((resolve) => collector?.close(resolve));
  await new Promise((resolve) => hookServer?.close(resolve));
});

tracing(
  'an async render with a webhook is one trace from the incoming traceparent to the webhook request',
  async (context) => {
    const { ingress, stack, workspace, spans, hooks } = context;
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const answer = await call(`${ingress.base}/api/take`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-access-key': workspace.access_key,
        traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
      },
      body: JSON.stringify({ url: `${stack.site.url}/`, async: true, webhook_url: context.hookUrl }),
    });
    assert.is(answer.status, 202, answer.bytes.toString());
    await waitFor(() => hooks.length === 1, 'the webhook', 30_000);
    assert.match(
      String(hooks[0].traceparent),
      new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`),
      'the webhook request carries the trace',
    );

    const names = ['POST /api/take', 'render', 'navigate', 'capture', 'store', 'webhook delivery', 'POST webhook'];
    await waitFor(
      () => names.every((name) => spans.some((span) => span.name === name && span.traceId === traceId)),
      'every span exported',
      30_000,
    );
    const inTrace = spans.filter((span) => span.traceId === traceId);
    const byName = (name: string) => inTrace.find((span) => span.name === name)!;
    assert.is(
      byName('POST /api/take').parentSpanId,
      '00f067aa0ba902b7',
      'the ingress continues the incoming traceparent',
    );
    assert.is(byName('POST /api/take').service, 'ingress');
    assert.is(byName('render').service, 'render,delivery', 'the render ran in the other process');
    assert.is(
      byName('render').parentSpanId,
      byName('POST /api/take').spanId,
      'the RENDERS message carried the ingress span',
    );
    for (const step of ['navigate', 'capture', 'store'])
      assert.is(byName(step).parentSpanId, byName('render').spanId, `${step} is a step of the render`);
    assert.is(byName('POST webhook').parentSpanId, byName('webhook delivery').spanId);
    assert.ok(
      hooks[0].traceparent!.toString().includes(byName('POST webhook').spanId),
      'the webhook request is the client span',
    );
  },
);

tracing("an executed bulk request: each render continues the bulk request's trace", async (context) => {
  const { ingress, stack, workspace, spans } = context;
  const traceId = '0af7651916cd43dd8448eb211c80319c';
  const answer = await call(`${ingress.base}/api/bulk`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-access-key': workspace.access_key,
      traceparent: `00-${traceId}-b7ad6b7169203331-01`,
    },
    body: JSON.stringify({ execute: true, requests: [{ url: `${stack.site.url}/` }] }),
  });
  assert.is(answer.status, 200, answer.bytes.toString());
  await waitFor(
    () => ['POST /api/bulk', 'render'].every((name) => spans.some((s) => s.name === name && s.traceId === traceId)),
    'the bulk request and its render in one trace',
    30_000,
  );
  const inTrace = spans.filter((span) => span.traceId === traceId);
  const bulk = inTrace.find((span) => span.name === 'POST /api/bulk')!;
  assert.is(bulk.parentSpanId, 'b7ad6b7169203331', 'the ingress continues the incoming traceparent');
  assert.is(inTrace.find((span) => span.name === 'render')!.parentSpanId, bulk.spanId);
});

tracing('with tracing off, starting the service loads nothing of the OpenTelemetry SDK', () => {
  // A fresh process imports the whole service and starts tracing without an endpoint, recording every module it resolves.
  const script = `
    import { registerHooks } from 'node:module';
    const resolved = [];
    registerHooks({ resolve(specifier, context, next) { resolved.push(specifier); return next(specifier, context); } });
    await import(${JSON.stringify(fileURLToPath(new URL('../../src/main.ts', import.meta.url)))});
    const { startTracing, startSpan, tracingOn } = await import(${JSON.stringify(fileURLToPath(new URL('../../src/tracing.ts', import.meta.url)))});
    await startTracing({ roles: new Set(['ingress']) });
    if (tracingOn() || startSpan('x') !== undefined) throw new Error('tracing is on');
    console.log(JSON.stringify(resolved.filter((s) => s.includes('@opentelemetry'))));
  `;
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  assert.is(run.status, 0, run.stderr);
  const loaded = JSON.parse(run.stdout.trim().split('\n').at(-1)!);
  assert.equal(
    loaded.filter((s: string) => !s.endsWith('@opentelemetry/api')),
    [],
    'no SDK, exporter or propagator module',
  );
});

tracing.run();
