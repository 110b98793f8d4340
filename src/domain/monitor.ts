// A monitor's own vocabulary: the schedule it keeps, what it last saw, the changes it announced (docs/monitors.md).
import { createHash, randomBytes } from 'node:crypto';
import { fileUrl } from './files.ts';
import { formatFacts, formatNames, type OutputFormat } from './formats.ts';
import type { StoreTarget } from './storage.ts';

/** Whether a monitor's ticks run. */
export type MonitorStatus = 'active' | 'paused';

/** The formats a monitor can compare: raster images. */
export const monitorFormats: readonly OutputFormat[] = formatNames.filter((format) => formatFacts(format).monitor);

/** The share of pixels that must differ before a change is announced, when none is given. */
export const DEFAULT_THRESHOLD = 0.01;

/**
 * Changed pixels that make a change whatever their share of the capture: one digit changed in 16 px
 * text is about 10 (docs/monitors.md), and a page rendered again, moved by a fraction of a pixel or
 * compressed as JPEG, has none.
 */
export const DEFAULT_MIN_CHANGED_PIXELS = 10;

/** What a monitor compares: its captures' pixels, their visible text, or both (either announces). */
export const monitorComparisons = ['pixels', 'text', 'both'] as const;
export type MonitorComparison = (typeof monitorComparisons)[number];

/** True when a monitor compares text, so its ticks keep the page's visible text. */
export const comparesText = (monitor: Pick<Monitor, 'compare'>) =>
  monitor.compare === 'text' || monitor.compare === 'both';

/** True when a monitor's pixels decide a change. */
export const comparesPixels = (monitor: Pick<Monitor, 'compare'>) =>
  monitor.compare === undefined || monitor.compare === 'pixels' || monitor.compare === 'both';

/** The shortest interval between two ticks (seconds) the API promises: MONITOR_MIN_INTERVAL's default. */
export const DEFAULT_MIN_INTERVAL_SECONDS = 60;

/** The longest interval between two ticks (seconds): 30 days. */
export const MAX_INTERVAL_SECONDS = 30 * 24 * 3600;

/** Changes kept per monitor, latest first. */
export const CHANGES_KEPT = 50;

/**
 * Per plan: how many monitors a workspace may have, and its shortest interval as a multiple of
 * MONITOR_MIN_INTERVAL (60 s by default). Every plan may tick every minute: the API promises an
 * interval of 60 s or more to any workspace (docs/monitors.md); plans differ in how many monitors.
 */
export const planMonitorLimits: Record<'free' | 'pro', { monitors: number; intervalFactor: number }> = {
  free: { monitors: 3, intervalFactor: 1 },
  pro: { monitors: 100, intervalFactor: 1 },
};

/** The shortest interval (seconds) a plan allows, given the configured minimum. */
export function shortestInterval(plan: keyof typeof planMonitorLimits, minInterval: number): number {
  return minInterval * planMonitorLimits[plan].intervalFactor;
}

/** One changed line of a page's visible text: an added line has `before: null`, a removed one `after: null`. */
export interface TextChange {
  before: string | null;
  after: string | null;
}

/** One announced change: both captures and the diff between them. */
export interface MonitorChange {
  at: string;
  render_id: string;
  changed_share: number;
  /** The changed pixels, counted as changed_share is. */
  changed_pixels?: number;
  file_name: string;
  previous_file_name: string;
  diff_file_name: string;
  /** compare=text or both: the changed lines of the visible text (bounded; empty when only pixels changed). */
  text_diff?: TextChange[];
}

/** A monitor's record in the `monitors` bucket, keyed `{workspace_id}.{monitor_id}`. */
export interface Monitor {
  monitor_id: string;
  workspace_id: string;
  status: MonitorStatus;
  interval: number;
  threshold: number;
  /** Changed pixels that make a change whatever their share; DEFAULT_MIN_CHANGED_PIXELS when absent (older records). */
  min_changed_pixels?: number;
  /** What is compared; `pixels` when absent. */
  compare?: MonitorComparison;
  /** compare=text or both: regular expressions whose matches are left out of the text comparison. */
  ignore_text?: string[];
  webhook_url: string;
  /** Echoed in every tick's render and in the monitor's webhooks. */
  external_identifier?: string;
  /** webhook_sign=false: the monitor's webhooks go without signature headers. */
  webhook_sign?: false;
  /** webhook_errors=false: a failed tick sends no monitor.failed. */
  webhook_errors?: false;
  /** What the monitor renders, for people: the URL, or "html" / "markdown" for a document. */
  target: string;
  format: OutputFormat;
  /** The render options (RenderOptions as JSON), sealed: they may carry credentials for the target. */
  sealed_options: string;
  /** `store=true`: every tick's capture is uploaded here too (its secret sealed), replacing the last. */
  store?: StoreTarget;
  created_at: string;
  updated_at: string;
  /**
   * Bumped by every change to the schedule (pause, resume, interval): a tick message of an older
   * generation ends itself, so exactly one chain of ticks runs per monitor.
   */
  generation: number;
  /** The next tick (ISO time); a tick claims it by moving it on with compare-and-set. */
  next_run_at: string;
  last_run_at?: string;
  last_render_id?: string;
  /** The last capture compared against (the baseline of the next comparison). */
  last_file_name?: string;
  /** The visible text of that capture (compare=text or both), a file of its own. */
  last_text_file_name?: string;
  last_status?: 'succeeded' | 'failed';
  last_error_code?: string;
  /** The render (and its file) the last comparison was made for: a render announced again is not compared twice. */
  observed?: string;
  /** The tick of that render: a render of an earlier tick ending later is not compared. */
  observed_tick_at?: string;
  changes: MonitorChange[];
}

/** The KV key of a monitor. */
export const monitorKey = (workspaceId: string, monitorId: string) => `${workspaceId}.${monitorId}`;

/** A new monitor id. */
export const newMonitorId = () => `mon_${randomBytes(8).toString('hex')}`;

/** True when `id` has the shape of a monitor id. */
export const isMonitorId = (id: string) => /^mon_[0-9a-f]{16}$/.test(id);

/**
 * The render id of one tick: derived from the monitor and the tick's time, so a tick handled again
 * (its process died, two processes raced) is the same render, deduplicated by the render stream.
 */
export function tickRenderId(monitorId: string, tickAt: string): string {
  const hex = createHash('sha256').update(`monitor-tick:${monitorId}:${tickAt}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** The first slot after `now` on the monitor's grid (`due` + k × interval): missed ticks are skipped, not made up. */
export function nextRunAfter(due: number, intervalSeconds: number, now: number): number {
  const step = intervalSeconds * 1000;
  return now < due + step ? due + step : due + step * (Math.floor((now - due) / step) + 1);
}

/** A monitor as the API answers it. */
export function publicMonitor(monitor: Monitor, baseUrl: string, detail = true) {
  const file = (name: string) => fileUrl(baseUrl, name);
  return {
    monitor_id: monitor.monitor_id,
    status: monitor.status,
    target: monitor.target,
    format: monitor.format,
    interval: monitor.interval,
    threshold: monitor.threshold,
    min_changed_pixels: monitor.min_changed_pixels ?? DEFAULT_MIN_CHANGED_PIXELS,
    compare: monitor.compare ?? 'pixels',
    ...(monitor.ignore_text ? { ignore_text: monitor.ignore_text } : {}),
    webhook_url: monitor.webhook_url,
    ...(monitor.store ? { store: { bucket: monitor.store.bucket, key: monitor.store.key } } : {}),
    ...(monitor.external_identifier !== undefined ? { external_identifier: monitor.external_identifier } : {}),
    ...(monitor.webhook_sign === false ? { webhook_sign: false } : {}),
    ...(monitor.webhook_errors === false ? { webhook_errors: false } : {}),
    created_at: monitor.created_at,
    next_run_at: monitor.status === 'active' ? monitor.next_run_at : null,
    last_run_at: monitor.last_run_at ?? null,
    last_status: monitor.last_status ?? null,
    ...(monitor.last_error_code ? { last_error_code: monitor.last_error_code } : {}),
    last_file_url: monitor.last_file_name ? file(monitor.last_file_name) : null,
    ...(detail
      ? {
          changes: monitor.changes.map((change) => ({
            at: change.at,
            render_id: change.render_id,
            changed_share: change.changed_share,
            ...(change.changed_pixels !== undefined ? { changed_pixels: change.changed_pixels } : {}),
            file_url: file(change.file_name),
            previous_file_url: file(change.previous_file_name),
            diff_url: file(change.diff_file_name),
            ...(change.text_diff ? { text_diff: change.text_diff } : {}),
          })),
        }
      : {}),
  };
}
