// The work queues' depth as Prometheus gauges, read from JetStream when /metrics is scraped:
// what waits for a worker, what a worker holds, and what came back for another try.
import type { JetStreamManager } from '@nats-io/jetstream';
import type { GaugeCollector } from '../metrics.ts';
import { names } from './topology.ts';

const queues = [
  { queue: 'renders', stream: names.renderStream, consumer: names.renderConsumer },
  { queue: 'deliveries', stream: names.deliveryStream, consumer: names.deliveryConsumer },
];

/** Gauges of the render and delivery queues: waiting, in progress, redelivered. */
export function queueGauges(jsm: JetStreamManager): GaugeCollector[] {
  // One consumer-info read per queue serves the three gauges of one scrape.
  let reading: Promise<{ queue: string; waiting: number; inProgress: number; redelivered: number }[]> | undefined;
  const read = () =>
    (reading ??= Promise.all(
      queues.map(async ({ queue, stream, consumer }) => {
        const info = await jsm.consumers.info(stream, consumer);
        return {
          queue,
          waiting: info.num_pending,
          inProgress: info.num_ack_pending,
          redelivered: info.num_redelivered,
        };
      }),
    ).finally(() => setImmediate(() => (reading = undefined))));
  const gauge = (
    name: string,
    help: string,
    pick: (queue: Awaited<ReturnType<typeof read>>[number]) => number,
  ): GaugeCollector => ({
    name,
    help,
    read: async () => (await read()).map((queue) => ({ labels: { queue: queue.queue }, value: pick(queue) })),
  });
  return [
    gauge(
      'shutterbus_queue_waiting',
      'Messages of a work queue no worker has taken yet (consumer lag).',
      (q) => q.waiting,
    ),
    gauge(
      'shutterbus_queue_in_progress',
      'Messages of a work queue taken by a worker and not yet acknowledged.',
      (q) => q.inProgress,
    ),
    gauge(
      'shutterbus_queue_redelivered',
      'Messages of a work queue handed out more than once and still unacknowledged.',
      (q) => q.redelivered,
    ),
  ];
}
