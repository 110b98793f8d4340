// Fair shares of the delivery slots, end to end on a real NATS with the real sender: workspace A's
// 60 failing renders announce to a receiver that stalls 40 s; workspace B's webhook must still
// leave within a couple of seconds of its render's end, and A never holds more than its share.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { pino } from 'pino';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config.ts';
import { DeliveryQueue, type WebhookPayload } from '../../src/delivery/records.ts';
import { FairShares } from '../../src/delivery/shares.ts';
import { startDeliveryWorker } from '../../src/delivery/worker.ts';
import { ensureTopology, type Topology } from '../../src/jetstream/topology.ts';
import type { Workspace } from '../../src/workspaces/workspace.ts';
import { startNats, type NatsServer } from '../helpers/stack.ts';
import { waitFor } from '../helpers/wait.ts';

const fairness = suite('webhook delivery: fair to every workspace');

let nats: NatsServer;
let nc: NatsConnection;
let js: JetStreamClient;
let topology: Topology;
let queue: DeliveryQueue;

const A = 'ws_0000000000000a11';
const B = 'ws_0000000000000b22';

/** A receiver on loopback: `stall` holds every request open without an answer (until closed). */
async function receiver(stall: boolean) {
  const arrivals: number[] = [];
  let open = 0;
  let mostOpen = 0;
  const server = http.createServer((req, res) => {
    arrivals.push(Date.now());
    open += 1;
    mostOpen = Math.max(mostOpen, open);
    req.on('close', () => (open -= 1));
    req.resume();
    if (!stall) req.on('end', () => res.writeHead(200).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    arrivals,
    mostOpen: () => mostOpen,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let counter = 0;
/** A render of `workspaceId` ending now: its webhook queued as the render worker queues it. */
function renderEnds(workspaceId: string, webhookUrl: string) {
  const id = `wh_fair_${++counter}`;
  const payload: WebhookPayload = {
    id,
    type: 'render.failed',
    created_at: new Date().toISOString(),
    data: { render_id: `rnd_fair_${counter}`, error_code: 'network_error' },
  };
  return queue.enqueueEvent(
    { render_id: `rnd_fair_${counter}`, workspace_id: workspaceId, webhook_url: webhookUrl },
    payload,
  );
}

fairness.before(async () => {
  nats = await startNats();
  nc = await connect({ servers: nats.url });
  js = jetstream(nc);
  topology = await ensureTopology(nc, loadConfig({ NATS_URL: nats.url, LOG_LEVEL: 'silent' }));
  queue = new DeliveryQueue(js, topology.deliveries);
});

fairness.after(async () => {
  await nc?.close();
  await nats?.stop();
});

fairness('60 stalled deliveries of A beside one of B: B arrives within 2 s, A holds at most its share', async () => {
  const stalled = await receiver(true);
  const prompt = await receiver(false);
  const shares = new FairShares(16, 4);
  const worker = await startDeliveryWorker({
    config: { allowPrivateTargets: true, webhookRetrySchedule: [40] },
    log: pino({ level: 'silent' }),
    js,
    deliveries: queue,
    workspaces: { get: async (id) => ({ workspace_id: id, secret_key: 'sk_fair' }) as Workspace },
    shares,
  });
  try {
    await Promise.all(Array.from({ length: 60 }, () => renderEnds(A, stalled.url)));
    // A's receiver holds every slot A may take.
    await waitFor(() => stalled.arrivals.length >= 12, "A's receiver stalling its share of the slots", 10_000);
    const endedAt = Date.now();
    await renderEnds(B, prompt.url);
    await waitFor(() => prompt.arrivals.length === 1, "B's webhook", 10_000);
    const waited = prompt.arrivals[0] - endedAt;
    assert.ok(waited < 2000, `B's webhook left ${waited} ms after its render ended`);
    assert.ok(stalled.mostOpen() <= 12, `A held ${stalled.mostOpen()} slots at once, more than its share of 12`);
  } finally {
    await stalled.close();
    await prompt.close();
    await worker.stop();
  }
});

fairness('the shares: a key alone takes all but the reserve; a newcomer always starts while a slot is free', () => {
  const shares = new FairShares(16, 4);
  const held = Array.from({ length: 12 }, () => shares.claim({ workspace: 'a', destination: 'x' }));
  assert.ok(held.every(Boolean), 'a alone: 12 at once');
  assert.is(shares.claim({ workspace: 'a', destination: 'y' }), null, 'the 13th of a waits, whatever its destination');
  assert.is(shares.claim({ workspace: 'b', destination: 'x' }), null, 'x holds its share too');
  const b = shares.claim({ workspace: 'b', destination: 'y' });
  assert.ok(b, 'b starts at once');
  assert.is(shares.shareOf('workspace', 'a'), 6);
  for (const claim of held) claim!.release();
  b!.release();
  assert.is(shares.shareOf('workspace', 'a'), 12, 'all released: the share is whole again');
});

fairness.run();
