// A monitor's schedule: one tick message per monitor in MONITOR_TICKS, naked with the delay until the
// monitor is due; each due delivery claims its tick in KV and submits one render (docs/monitors.md).
import type { JetStreamClient } from '@nats-io/jetstream';
import { ServiceError } from '../errors.ts';
import { isFinal, type RenderRecord, type RenderRequest } from '../domain/render.ts';
import { comparesText, nextRunAfter, tickRenderId, type Monitor } from '../domain/monitor.ts';
import type { RenderOptions } from '../domain/options.ts';
import {
  jsonMessage,
  logConsumeError,
  startConsumeLoop,
  type Delivery,
  type Disposition,
} from '../jetstream/consume.ts';
import type { RenderQueue } from '../renders/queue.ts';
import { names } from '../jetstream/topology.ts';
import type { Logger } from '../log.ts';
import { SealError, type Sealer } from '../secrets/sealer.ts';
import type { Settlement } from '../renders/settlement.ts';
import type { WorkspaceStore } from '../workspaces/workspace.ts';
import type { MonitorStore } from './store.ts';

/** One message of the tick stream: this monitor's chain of ticks, of this generation of its schedule. */
export interface TickMessage {
  monitor_id: string;
  workspace_id: string;
  generation: number;
}

const decodeTick = jsonMessage<TickMessage>({ monitor_id: 'string', workspace_id: 'string', generation: 'number' });

/**
 * Starts a monitor's chain of ticks for its current generation. Deduplicated by monitor and
 * generation, so publishing again after a lost acknowledgement starts no second chain.
 */
export async function publishTick(
  js: JetStreamClient,
  monitor: Pick<Monitor, 'monitor_id' | 'workspace_id' | 'generation'>,
): Promise<void> {
  const tick: TickMessage = {
    monitor_id: monitor.monitor_id,
    workspace_id: monitor.workspace_id,
    generation: monitor.generation,
  };
  await js.publish(names.monitorTickSubject(monitor.workspace_id, monitor.monitor_id), JSON.stringify(tick), {
    msgID: `${monitor.monitor_id}.${monitor.generation}`,
  });
}

/** What handling tick messages needs. */
export interface MonitorTickDeps {
  log: Logger;
  monitors: MonitorStore;
  renderQueue: Pick<RenderQueue, 'submit' | 'records'>;
  settlement: Pick<Settlement, 'admit'>;
  workspaces: Pick<WorkspaceStore, 'get'>;
  sealer: Sealer;
  /** Announces a tick that could not render (the quota is used up) as the monitor's failure. */
  observe: (record: RenderRecord) => Promise<void>;
}

/** How long a tick whose options cannot be opened waits before it is tried again. */
const SEALED_RETRY_MS = 60_000;

/** How long a tick refused for concurrency waits before it is tried again. */
const CONCURRENCY_RETRY_MS = 2000;

/** The handler of the tick stream. */
export function monitorTicks(deps: MonitorTickDeps) {
  const { log, monitors, renderQueue, settlement } = deps;

  /**
   * Submits the render of one tick, once: its render id is the tick's, so a tick handled again
   * finds its record (and a render that ended is never submitted again) or is deduplicated by the
   * render stream. Returns a disposition when the tick must wait.
   */
  const submitTick = async (monitor: Monitor, tickAt: string): Promise<Disposition | undefined> => {
    const renderId = tickRenderId(monitor.monitor_id, tickAt);
    const request: RenderRequest = {
      render_id: renderId,
      workspace_id: monitor.workspace_id,
      created_at: new Date().toISOString(),
      options: JSON.parse(deps.sealer.open(monitor.sealed_options)) as RenderOptions,
      ...(monitor.store ? { store: monitor.store } : {}),
      ...(monitor.external_identifier !== undefined ? { external_identifier: monitor.external_identifier } : {}),
      monitor: {
        monitor_id: monitor.monitor_id,
        tick_at: tickAt,
        interval: monitor.interval,
        ...(comparesText(monitor) ? { text: true as const } : {}),
      },
    };
    const known = await renderQueue.records.get(renderId);
    if (known) {
      // Admitted before (and charged or released when it ended): only a publish may be missing.
      return isFinal(known) ? undefined : submit({ ...request, created_at: known.created_at });
    }
    const workspace = await deps.workspaces.get(monitor.workspace_id);
    if (!workspace) return { kind: 'term', reason: 'workspace gone' };
    try {
      await settlement.admit(request, workspace);
    } catch (err) {
      if (!(err instanceof ServiceError)) throw err;
      if (err.code === 'concurrency_limit_reached') return { kind: 'retry', delayMs: CONCURRENCY_RETRY_MS };
      if (err.code !== 'screenshots_limit_reached') throw err;
      // The tick happened and could not render: it fails, uncharged, and the monitor says so.
      await renderQueue.records.createPending(request);
      const { record } = await renderQueue.records.transition(request, (current) => ({
        ...current,
        status: 'failed',
        finished_at: new Date().toISOString(),
        error_code: err.code,
        error_message: err.message,
      }));
      await deps.observe(record);
      return undefined;
    }
    return submit(request);
  };

  /**
   * Publishes a tick's render. A full queue or an outage is waited out, and nothing is given back:
   * the same tick comes again with the same render id, which finds its reservation (and record) and
   * submits again; abandoning the record would lose the tick.
   */
  const submit = async (request: RenderRequest): Promise<Disposition | undefined> => {
    try {
      await renderQueue.submit(request);
      return undefined;
    } catch (err) {
      if (err instanceof ServiceError && err.code === 'temporary_unavailable')
        return { kind: 'retry', delayMs: (err.retryAfter ?? 5) * 1000 };
      throw err;
    }
  };

  return async (delivery: Delivery<TickMessage>): Promise<Disposition> => {
    const tick = delivery.message;
    const monitor = await monitors.get(tick.workspace_id, tick.monitor_id);
    // Deleted, paused, or rescheduled (a newer generation's message runs now): this chain ends.
    if (!monitor || monitor.generation !== tick.generation || monitor.status !== 'active') return { kind: 'ack' };
    const due = Date.parse(monitor.next_run_at);
    if (Date.now() < due) return { kind: 'retry', delayMs: due - Date.now() };

    const tickAt = monitor.next_run_at;
    const waiting = await submitTick(monitor, tickAt).catch((err) => {
      if (!(err instanceof SealError)) throw err;
      // SECRETS_KEY changed without SECRETS_KEY_PREVIOUS: said loudly, tried again once a minute.
      log.error(
        { monitor_id: monitor.monitor_id, workspace_id: monitor.workspace_id, reason: err.message },
        'monitor options cannot be opened',
      );
      return { kind: 'retry', delayMs: SEALED_RETRY_MS } as const;
    });
    if (waiting) return waiting.kind === 'term' ? { kind: 'ack' } : waiting;
    // The claim: only the handler that still finds this tick due moves the schedule on.
    const next = new Date(nextRunAfter(due, monitor.interval, Date.now())).toISOString();
    const { monitor: after } = await monitors.update(tick.workspace_id, tick.monitor_id, (current) =>
      current.next_run_at === tickAt && current.generation === tick.generation
        ? {
            ...current,
            next_run_at: next,
            last_run_at: tickAt,
            last_render_id: tickRenderId(current.monitor_id, tickAt),
          }
        : undefined,
    );
    if (!after || after.generation !== tick.generation || after.status !== 'active') return { kind: 'ack' };
    log.info(
      {
        monitor_id: monitor.monitor_id,
        workspace_id: monitor.workspace_id,
        tick_at: tickAt,
        next_run_at: after.next_run_at,
      },
      'monitor tick',
    );
    return { kind: 'retry', delayMs: Math.max(0, Date.parse(after.next_run_at) - Date.now()) };
  };
}

/** A running scheduler. */
export interface MonitorScheduler {
  stop(): Promise<void>;
}

/** Starts consuming tick messages; any number of processes may run one: each tick is claimed once. */
export async function startMonitorScheduler(
  deps: MonitorTickDeps & { js: JetStreamClient; ackWaitSeconds: number },
): Promise<MonitorScheduler> {
  const loop = await startConsumeLoop({
    consumer: await deps.js.consumers.get(names.monitorTickStream, names.monitorTickConsumer),
    concurrency: 8,
    ackWaitSeconds: deps.ackWaitSeconds,
    maxDeliver: Number.POSITIVE_INFINITY,
    decode: decodeTick,
    handle: monitorTicks(deps),
    onError: logConsumeError(deps.log, 'monitor tick'),
  });
  return { stop: () => loop.stop() };
}
