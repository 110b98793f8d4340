// After a monitor's render ends: compare it with the last capture and announce a change or a failure.
import { createHash } from 'node:crypto';
import { fileUrl } from '../domain/files.ts';
import {
  CHANGES_KEPT,
  comparesPixels,
  comparesText,
  DEFAULT_MIN_CHANGED_PIXELS,
  type Monitor,
} from '../domain/monitor.ts';
import type { RenderRecord } from '../domain/render.ts';
import type { DeliveryQueue, WebhookPayload } from '../delivery/records.ts';
import type { Logger } from '../log.ts';
import { isStoreUnavailable, type FileStore } from '../storage/store.ts';
import { compareCaptures, type Comparison } from './compare.ts';
import { compareTexts, IgnoreTextTimeout, type TextComparison } from './text.ts';
import type { MonitorStore } from './store.ts';

/** What observing a monitor's renders needs. */
export interface MonitorObserverDeps {
  log: Logger;
  monitors: MonitorStore;
  store: Pick<FileStore, 'read' | 'put'>;
  deliveries: Pick<DeliveryQueue, 'enqueueEvent'>;
  /** Where stored files are served: the file URLs of the events are under it. */
  filesBaseUrl: string;
}

/** The delivery id of a monitor event: derived from the render (and its capture), so announcing it again is one delivery. */
function eventId(kind: string, renderId: string, fileName = ''): string {
  return `wh_${createHash('sha256').update(`monitor:${kind}:${renderId}:${fileName}`).digest('hex').slice(0, 32)}`;
}

/**
 * The diff's file name, derived from the (unguessable) capture's: the same day, so it lives as long
 * as the capture it explains, and the same name when a render is observed again.
 */
function diffFileName(captureName: string): string {
  return `${captureName.slice(0, 8)}-${createHash('sha256').update(`monitor-diff:${captureName}`).digest('hex').slice(0, 32)}.png`;
}

/**
 * Observes ended renders of monitors. Idempotent, as a render's end is announced again on
 * redelivery: the monitor remembers the render (and file) it last observed, and the events'
 * delivery ids are derived from them.
 */
export class MonitorObserver {
  constructor(private readonly deps: MonitorObserverDeps) {}

  /**
   * Handles one ended render; a render of no monitor (or of a deleted one) is left alone, and so is
   * one older than the tick last observed: renders of a monitor can end out of order (two workers,
   * a redelivery), and an older capture must not become the baseline again.
   */
  async observe(record: RenderRecord): Promise<void> {
    if (!record.monitor_id || record.abandoned) return;
    const seen = `${record.render_id}:${record.file_name ?? 'failed'}`;
    for (;;) {
      const monitor = await this.deps.monitors.get(record.workspace_id, record.monitor_id);
      if (!monitor) return;
      if (monitor.observed === seen) return this.announceRecorded(monitor, record);
      if (record.monitor_tick_at && monitor.observed_tick_at && record.monitor_tick_at < monitor.observed_tick_at)
        // Its failure is still told; the monitor's state is the later render's.
        return record.status === 'failed' ? this.announceRecorded(monitor, record) : undefined;
      const observed = {
        observed: seen,
        ...(record.monitor_tick_at ? { observed_tick_at: record.monitor_tick_at } : {}),
      };
      const next =
        record.status === 'failed'
          ? (current: Monitor): Monitor => ({
              ...current,
              ...observed,
              last_status: 'failed',
              last_error_code: record.error_code,
            })
          : record.status === 'succeeded' && record.file_name
            ? await this.succeeded(monitor, record, observed)
            : undefined;
      if (!next) return;
      // Recorded only if nothing was observed meanwhile: the comparison was made against this
      // baseline, and another worker's render may have moved it (then this one is looked at again).
      const { monitor: after, changed } = await this.deps.monitors.update(
        monitor.workspace_id,
        monitor.monitor_id,
        (current) =>
          current.observed === monitor.observed && current.last_file_name === monitor.last_file_name
            ? next(current)
            : undefined,
      );
      if (!changed) continue;
      // Announced once recorded; a process dying in between announces it when the render's end comes again.
      return after ? this.announceRecorded(after, record) : undefined;
    }
  }

  /** The change to the monitor a succeeded render makes: its capture the new baseline, and the change if it differs. */
  private async succeeded(
    monitor: Monitor,
    record: RenderRecord,
    observed: Pick<Monitor, 'observed' | 'observed_tick_at'>,
  ): Promise<(current: Monitor) => Monitor> {
    const fileName = record.file_name!;
    const textName = record.monitor_text_file_name;
    const verdict = monitor.last_file_name ? await this.compare(monitor, fileName, textName) : null;
    let change: Monitor['changes'][number] | undefined;
    if (verdict?.changed && monitor.last_file_name) {
      const { pixels, text } = verdict;
      const diffName = diffFileName(fileName);
      await this.deps.store.put(diffName, await pixels.diff(), 'png');
      change = {
        at: record.finished_at ?? new Date().toISOString(),
        render_id: record.render_id,
        changed_share: Math.round(pixels.changedShare * 1e6) / 1e6,
        changed_pixels: pixels.changedPixels,
        file_name: fileName,
        previous_file_name: monitor.last_file_name,
        diff_file_name: diffName,
        ...(comparesText(monitor) ? { text_diff: text?.diff ?? [] } : {}),
      };
    }
    return (current) => ({
      ...current,
      ...observed,
      last_file_name: fileName,
      last_text_file_name: textName,
      last_status: 'succeeded',
      last_error_code: undefined,
      changes: change ? [change, ...current.changes].slice(0, CHANGES_KEPT) : current.changes,
    });
  }

  /**
   * Announces what the monitor recorded for this render (`monitor.observed` is it): its change, or
   * its failure. The delivery ids derive from the render, so announcing again is one delivery.
   */
  private async announceRecorded(monitor: Monitor, record: RenderRecord): Promise<void> {
    if (record.status === 'failed') {
      if (monitor.webhook_errors === false) return;
      return this.announce(monitor, record, {
        id: eventId('failed', record.render_id),
        type: 'monitor.failed',
        created_at: new Date().toISOString(),
        data: {
          monitor_id: monitor.monitor_id,
          render_id: record.render_id,
          error_code: record.error_code,
          error_message: record.error_message,
          ...identified(monitor),
        },
      });
    }
    const change = monitor.changes.find((recorded) => recorded.render_id === record.render_id);
    if (!change) return;
    const url = (name: string) => fileUrl(this.deps.filesBaseUrl, name);
    await this.announce(monitor, record, {
      id: eventId('changed', record.render_id, change.file_name),
      type: 'monitor.changed',
      created_at: new Date().toISOString(),
      data: {
        monitor_id: monitor.monitor_id,
        render_id: record.render_id,
        changed_share: change.changed_share,
        ...(change.changed_pixels !== undefined ? { changed_pixels: change.changed_pixels } : {}),
        file_url: url(change.file_name),
        previous_file_url: url(change.previous_file_name),
        diff_url: url(change.diff_file_name),
        ...(change.text_diff ? { text_diff: change.text_diff } : {}),
        ...identified(monitor),
      },
    });
    this.deps.log.info(
      { monitor_id: monitor.monitor_id, render_id: record.render_id, changed_share: change.changed_share },
      'monitor changed',
    );
  }

  private announce(monitor: Monitor, record: RenderRecord, payload: WebhookPayload): Promise<void> {
    return this.deps.deliveries.enqueueEvent(
      {
        render_id: record.render_id,
        workspace_id: monitor.workspace_id,
        webhook_url: monitor.webhook_url,
        ...(monitor.webhook_sign === false ? { unsigned: true as const } : {}),
      },
      payload,
    );
  }

  /**
   * Compares the baseline with the new capture, and their texts when the monitor compares text: the
   * verdict, or null when the baseline is gone from the store (swept: the new capture becomes it).
   */
  private async compare(
    monitor: Monitor,
    currentName: string,
    currentTextName: string | undefined,
  ): Promise<{ changed: boolean; pixels: Comparison; text: TextComparison | null } | null> {
    const previousName = monitor.last_file_name!;
    const [previous, current] = await Promise.all([this.read(previousName), this.read(currentName)]);
    if (!previous || !current) return null;
    let pixels: Comparison;
    try {
      pixels = await compareCaptures(previous, current);
    } catch (err) {
      // Never thrown on: the render's end would be redelivered forever. The capture becomes the baseline.
      this.deps.log.error(
        { err, previous: previousName, current: currentName },
        'monitor captures could not be compared',
      );
      return null;
    }
    const minChangedPixels = monitor.min_changed_pixels ?? DEFAULT_MIN_CHANGED_PIXELS;
    const pixelsChanged =
      comparesPixels(monitor) && (pixels.changedShare > monitor.threshold || pixels.changedPixels >= minChangedPixels);
    const text = comparesText(monitor) ? await this.compareText(monitor, currentTextName) : null;
    return { changed: pixelsChanged || text?.changed === true, pixels, text };
  }

  /** The texts of the baseline and the new capture compared; null when either is missing or ignore_text ran too long. */
  private async compareText(monitor: Monitor, currentTextName: string | undefined): Promise<TextComparison | null> {
    if (!monitor.last_text_file_name || !currentTextName) return null;
    const [previous, current] = await Promise.all([this.read(monitor.last_text_file_name), this.read(currentTextName)]);
    if (!previous || !current) return null;
    try {
      return compareTexts(previous.toString('utf8'), current.toString('utf8'), monitor.ignore_text);
    } catch (err) {
      if (!(err instanceof IgnoreTextTimeout)) throw err;
      this.deps.log.warn({ monitor_id: monitor.monitor_id }, 'ignore_text took too long: the text was not compared');
      return null;
    }
  }

  /** A stored file, or null when it is gone (swept); a store out of reach throws (the end is redelivered). */
  private read(name: string): Promise<Buffer | null> {
    return this.deps.store.read(name).catch((err) => {
      if (isStoreUnavailable(err)) throw err;
      return null;
    });
  }
}

/** The monitor's external_identifier, for its webhooks' data. */
const identified = (monitor: Monitor) =>
  monitor.external_identifier !== undefined ? { external_identifier: monitor.external_identifier } : {};
