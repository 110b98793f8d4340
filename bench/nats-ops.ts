// What one render costs NATS, counted by nats-server itself: messages in and out (/varz), JetStream
// API requests and the writes to each stream and KV bucket (/jsz), before and after a run of
// renders, divided by the renders. The sizing in docs/operations.md is built from these figures.
// In `make bench`, and alone with `make bench ARGS=nats`.

import type { BenchStack } from './stack.ts';

/** The counters read from nats-server's monitoring port. */
interface NatsCounters {
  inMsgs: number;
  outMsgs: number;
  apiRequests: number;
  /** Each stream's last sequence: every write to it, KV buckets' (KV_<bucket>) included. */
  writes: Map<string, number>;
}

interface Varz {
  in_msgs: number;
  out_msgs: number;
}
interface Jsz {
  api: { total: number };
  account_details?: { stream_detail?: { name: string; state: { last_seq: number } }[] }[];
}

async function readCounters(monitorPort: number): Promise<NatsCounters> {
  const get = async <T>(path: string) => (await (await fetch(`http://127.0.0.1:${monitorPort}${path}`)).json()) as T;
  const [varz, jsz] = await Promise.all([get<Varz>('/varz'), get<Jsz>('/jsz?accounts=true&streams=true')]);
  const writes = new Map<string, number>();
  for (const account of jsz.account_details ?? [])
    for (const stream of account.stream_detail ?? []) writes.set(stream.name, stream.state.last_seq);
  return { inMsgs: varz.in_msgs, outMsgs: varz.out_msgs, apiRequests: jsz.api.total, writes };
}

/** Per render: messages in and out, JetStream API requests, writes to streams and to KV buckets by name. */
export interface NatsCost {
  label: string;
  renders: number;
  inMsgs: number;
  outMsgs: number;
  apiRequests: number;
  streamWrites: number;
  kvWrites: number;
  /** The buckets and streams written, per render, largest first. */
  byStream: [string, number][];
}

/** Runs `renders` renders through `run` and counts what NATS did meanwhile, per render. */
export async function countNatsCost(
  stack: Pick<BenchStack, 'natsMonitorPort'>,
  label: string,
  renders: number,
  run: () => Promise<void>,
): Promise<NatsCost> {
  const before = await readCounters(stack.natsMonitorPort);
  await run();
  // What a render's end still writes (its charge, a webhook's record) lands within moments.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const after = await readCounters(stack.natsMonitorPort);
  const per = (value: number) => value / renders;
  const byStream = [...after.writes]
    .map(([name, seq]): [string, number] => [name, per(seq - (before.writes.get(name) ?? 0))])
    .filter(([, value]) => value > 0)
    .sort((a, b) => b[1] - a[1]);
  const sum = (entries: [string, number][]) => entries.reduce((total, [, value]) => total + value, 0);
  return {
    label,
    renders,
    // The reads themselves: /varz and /jsz are HTTP, not messages.
    inMsgs: per(after.inMsgs - before.inMsgs),
    outMsgs: per(after.outMsgs - before.outMsgs),
    apiRequests: per(after.apiRequests - before.apiRequests),
    streamWrites: sum(byStream.filter(([name]) => !name.startsWith('KV_'))),
    kvWrites: sum(byStream.filter(([name]) => name.startsWith('KV_'))),
    byStream,
  };
}

/** Renders `count` shots of `url` through `/api/take`, `concurrency` at a time; `query` adds parameters. */
export async function takeShots(
  base: string,
  accessKey: string,
  url: string,
  count: number,
  concurrency: number,
  query: Record<string, string> = {},
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const i = next++;
      const params = new URLSearchParams({ url: `${url}${url.includes('?') ? '&' : '?'}n=${i}`, ...query });
      for (;;) {
        const response = await fetch(`${base}/api/take?${params}`, { headers: { 'x-access-key': accessKey } });
        await response.arrayBuffer();
        if (response.status === 200 || response.status === 202) break;
        // Asynchronous renders outrun the workspace's concurrency: try again once some have ended.
        if (response.status !== 429) throw new Error(`/api/take answered ${response.status}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
}

/** The table of `costs`, one line each, and the writes by stream and bucket. */
export function natsCostLines(costs: NatsCost[]): string[] {
  const f = (value: number) => value.toFixed(1).padStart(8);
  const lines = [
    'NATS per render (nats-server /varz, /jsz)  msgs in  msgs out  JS API  stream wr  KV wr  renders',
    ...costs.map(
      (cost) =>
        `${cost.label.padEnd(42)}${f(cost.inMsgs)}${f(cost.outMsgs)}${f(cost.apiRequests)}${f(cost.streamWrites)}${f(cost.kvWrites)}  ${cost.renders}`,
    ),
  ];
  for (const cost of costs)
    lines.push(`  ${cost.label}: ${cost.byStream.map(([name, value]) => `${name} ${value.toFixed(2)}`).join(', ')}`);
  return lines;
}

/** A loopback endpoint that answers every webhook 200, for the asynchronous row. */
async function startWebhookSink(): Promise<{ url: string; received(): number; close(): Promise<void> }> {
  const { createServer } = await import('node:http');
  let received = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received++;
      response.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received: () => received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * The three rows: synchronous shots through the one-process stack, through an ingress of its own
 * (ROLES=ingress, as a cluster deploys it), and asynchronous renders with a webhook each.
 */
export async function measureNatsCost(stack: BenchStack, url: string, renders = 60): Promise<NatsCost[]> {
  const key = stack.workspace.access_key;
  const costs: NatsCost[] = [];
  costs.push(
    await countNatsCost(stack, 'sync png, one process', renders, () => takeShots(stack.base, key, url, renders, 2)),
  );
  const ingress = await stack.startIngress();
  try {
    // Its first renders warm its caches (the workspace, the key): not counted.
    await takeShots(ingress.base, key, url, 4, 1);
    costs.push(
      await countNatsCost(stack, 'sync png, ingress apart', renders, () =>
        takeShots(ingress.base, key, url, renders, 2),
      ),
    );
  } finally {
    await ingress.stop();
  }
  const sink = await startWebhookSink();
  try {
    costs.push(
      await countNatsCost(stack, 'async png + webhook, one process', renders, async () => {
        await takeShots(stack.base, key, url, renders, 2, { async: 'true', webhook_url: sink.url });
        for (let waited = 0; sink.received() < renders && waited < 60_000; waited += 100)
          await new Promise((resolve) => setTimeout(resolve, 100));
        if (sink.received() < renders) throw new Error(`${sink.received()} of ${renders} webhooks arrived`);
      }),
    );
  } finally {
    await sink.close();
  }
  return costs;
}
