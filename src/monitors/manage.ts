// Creating, changing and removing monitors, shared by the API, the dashboard and the CLI.
import type { JetStreamClient } from '@nats-io/jetstream';
import type { Monitor, MonitorStatus } from '../domain/monitor.ts';
import { isNatsUnavailable } from '../jetstream/errors.ts';
import { retryWhile } from '../retry.ts';
import { publishTick } from './schedule.ts';
import type { MonitorStore } from './store.ts';

/** What a PATCH may change. */
export interface MonitorPatch {
  status?: MonitorStatus;
  interval?: number;
  threshold?: number;
  min_changed_pixels?: number;
  ignore_text?: string[];
  webhook_url?: string;
}

/** How long starting a chain of ticks waits out NATS being away (a leader election) before it gives up. */
const PUBLISH_PATIENCE_MS = 15_000;

/** Monitor operations over the store and the tick stream. */
export class MonitorManager {
  constructor(
    readonly store: MonitorStore,
    private readonly js: JetStreamClient,
  ) {}

  /**
   * Writes a new monitor and starts its ticks; a failed start removes it again. `full`: its workspace
   * holds `limit` monitors already (counted atomically, MonitorStore.create).
   */
  async create(monitor: Monitor, limit?: number): Promise<Monitor | 'full'> {
    const created = await this.store.create(monitor, limit);
    if (created === 'full') return created;
    if (created === 'taken') throw new Error('monitor id collision');
    try {
      await this.startTicks(monitor);
    } catch (err) {
      await this.store.remove(monitor.workspace_id, monitor.monitor_id).catch(() => undefined);
      throw err;
    }
    return monitor;
  }

  /**
   * Applies a patch. A change to the schedule (pause, resume, interval) starts a new generation:
   * the old chain of ticks ends itself, and an active monitor gets a new one, due at its last run
   * plus the interval (or now, if that has passed). Null when the monitor does not exist.
   */
  async change(workspaceId: string, monitorId: string, patch: MonitorPatch): Promise<Monitor | null> {
    let rescheduled = false;
    const { monitor, changed } = await this.store.update(workspaceId, monitorId, (current) => {
      const status = patch.status ?? current.status;
      const interval = patch.interval ?? current.interval;
      rescheduled = status !== current.status || interval !== current.interval;
      const next = {
        ...current,
        status,
        interval,
        threshold: patch.threshold ?? current.threshold,
        ...(patch.min_changed_pixels !== undefined ? { min_changed_pixels: patch.min_changed_pixels } : {}),
        ...(patch.ignore_text !== undefined ? { ignore_text: patch.ignore_text } : {}),
        webhook_url: patch.webhook_url ?? current.webhook_url,
      };
      if (!rescheduled) return next;
      const after = current.last_run_at ? Date.parse(current.last_run_at) + interval * 1000 : Date.now();
      return {
        ...next,
        generation: current.generation + 1,
        next_run_at: new Date(Math.max(Date.now(), after)).toISOString(),
      };
    });
    if (monitor && changed && rescheduled && monitor.status === 'active') await this.startTicks(monitor);
    return monitor;
  }

  // The record already names the new generation: its chain must start, so an election is waited out.
  private startTicks(monitor: Monitor): Promise<void> {
    return retryWhile(() => publishTick(this.js, monitor), isNatsUnavailable, Date.now() + PUBLISH_PATIENCE_MS);
  }

  /** Removes a monitor; its tick message ends itself when next delivered. True when it existed. */
  remove(workspaceId: string, monitorId: string): Promise<boolean> {
    return this.store.remove(workspaceId, monitorId);
  }
}
