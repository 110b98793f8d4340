// The monthly screenshot quota: admission reserves a slot, success commits it once, failure releases it.
import type { KV } from '@nats-io/kv';
import { ServiceError } from '../errors.ts';
import { readJson, updateJson } from '../jetstream/kv-json.ts';

/** One workspace's usage in one UTC calendar month. */
interface MonthUsage {
  used: number;
  /** Renders admitted and not yet ended: render id → when the reservation lapses (ms). */
  reservations: Record<string, number>;
  /** Successful screenshots per UTC day of the month ("01"…"31"), counted with `used`. */
  days?: Record<string, number>;
}

/** A reservation outlives any render (90 s timeout × deliveries); this only clears ones whose owner vanished. */
const RESERVATION_LIFETIME_MS = 60 * 60 * 1000;

/** The UTC month of a moment, as YYYY-MM. */
export function monthOf(moment: Date | string): string {
  return new Date(moment).toISOString().slice(0, 7);
}

const keyOf = (workspaceId: string, month: string) => `${workspaceId}.${month}`;

const live = (usage: MonthUsage | null, now: number): MonthUsage => ({
  used: usage?.used ?? 0,
  reservations: Object.fromEntries(Object.entries(usage?.reservations ?? {}).filter(([, lapses]) => lapses > now)),
  ...(usage?.days ? { days: usage.days } : {}),
});

/** What admission needs to know of a workspace. */
export interface Allowance {
  workspaceId: string;
  quota: number;
  concurrency: number;
}

/** Per-workspace monthly usage in the `usage` bucket; every change is compare-and-set. */
export class QuotaLedger {
  constructor(private readonly bucket: KV) {}

  /**
   * Admits a render: refuses with 402 when used + in flight reaches the quota, with 429 when the
   * workspace already has `concurrency` renders in flight; otherwise holds a slot for `renderId`.
   */
  async reserve(allowance: Allowance, renderId: string, at: Date): Promise<void> {
    const now = Date.now();
    await updateJson<MonthUsage>(this.bucket, keyOf(allowance.workspaceId, monthOf(at)), (current) => {
      const usage = live(current, now);
      const inFlight = Object.keys(usage.reservations).length;
      // Renders in flight hold their slots: counting them keeps concurrent admissions under the quota.
      if (usage.used + inFlight >= allowance.quota) throw new ServiceError('screenshots_limit_reached');
      if (inFlight >= allowance.concurrency) throw new ServiceError('concurrency_limit_reached', {}, { retryAfter: 2 });
      usage.reservations[renderId] = now + RESERVATION_LIFETIME_MS;
      return usage;
    });
  }

  /** Turns a render's reservation into one used screenshot; a second call for the same render changes nothing. */
  async commit(workspaceId: string, renderId: string, createdAt: string): Promise<void> {
    await this.settle(workspaceId, renderId, createdAt, 1);
  }

  /** Gives a failed render's reservation back; never counts anything. */
  async release(workspaceId: string, renderId: string, createdAt: string): Promise<void> {
    await this.settle(workspaceId, renderId, createdAt, 0);
  }

  /** Screenshots used in a month. */
  async used(workspaceId: string, month: string): Promise<number> {
    return (await readJson<MonthUsage>(this.bucket, keyOf(workspaceId, month))).value?.used ?? 0;
  }

  /** Successful screenshots per UTC day of a month, as {"DD": n}; days without any are absent. */
  async days(workspaceId: string, month: string): Promise<Record<string, number>> {
    return (await readJson<MonthUsage>(this.bucket, keyOf(workspaceId, month))).value?.days ?? {};
  }

  private async settle(workspaceId: string, renderId: string, createdAt: string, charge: 0 | 1): Promise<void> {
    await updateJson<MonthUsage>(this.bucket, keyOf(workspaceId, monthOf(createdAt)), (current) => {
      // No reservation: already settled (a redelivery or replay), so nothing changes.
      if (!current || !(renderId in current.reservations)) return undefined;
      const { [renderId]: _settled, ...reservations } = current.reservations;
      const day = new Date(createdAt).toISOString().slice(8, 10);
      const days = charge ? { ...current.days, [day]: (current.days?.[day] ?? 0) + 1 } : current.days;
      return { used: current.used + charge, reservations, ...(days ? { days } : {}) };
    });
  }
}
