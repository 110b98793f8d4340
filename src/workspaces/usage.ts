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

/**
 * What a settlement found: the reservation, none (settled before, lapsed, or never made), or none
 * on a render's first settlement, which is charged all the same.
 */
export type SettleOutcome = 'settled' | 'no_reservation' | 'charged_without_reservation';

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
   * workspace already has `concurrency` renders in flight; otherwise holds a slot for `renderId`
   * until the render ends or, should its end never be settled, until `lapsesAt` (ms).
   */
  async reserve(allowance: Allowance, renderId: string, at: Date, lapsesAt: number): Promise<void> {
    const now = Date.now();
    await updateJson<MonthUsage>(this.bucket, keyOf(allowance.workspaceId, monthOf(at)), (current) => {
      const usage = live(current, now);
      const inFlight = Object.keys(usage.reservations).length;
      // Renders in flight hold their slots: counting them keeps concurrent admissions under the quota.
      if (usage.used + inFlight >= allowance.quota) throw new ServiceError('screenshots_limit_reached');
      if (inFlight >= allowance.concurrency) throw new ServiceError('concurrency_limit_reached', {}, { retryAfter: 2 });
      usage.reservations[renderId] = lapsesAt;
      return usage;
    });
  }

  /**
   * Turns a render's reservation into one used screenshot; a second call for the same render changes
   * nothing. `firstSettlement` says the caller just ended the render, so it was never settled: it is
   * charged even when its reservation had lapsed (a render that outlived an outage).
   */
  async commit(workspaceId: string, renderId: string, createdAt: string, firstSettlement = false): Promise<SettleOutcome> {
    return this.settle(workspaceId, renderId, createdAt, 1, firstSettlement);
  }

  /** Gives a failed render's reservation back; never counts anything. */
  async release(workspaceId: string, renderId: string, createdAt: string): Promise<SettleOutcome> {
    return this.settle(workspaceId, renderId, createdAt, 0, false);
  }

  /** A month of a workspace: screenshots used, reservations held now, and used per UTC day ({"DD": n}). */
  async month(workspaceId: string, month: string): Promise<{ used: number; inFlight: number; days: Record<string, number> }> {
    const { value } = await readJson<MonthUsage>(this.bucket, keyOf(workspaceId, month));
    return { used: value?.used ?? 0, inFlight: Object.keys(live(value, Date.now()).reservations).length, days: value?.days ?? {} };
  }

  /** Screenshots used in a month. */
  async used(workspaceId: string, month: string): Promise<number> {
    return (await this.month(workspaceId, month)).used;
  }

  private async settle(workspaceId: string, renderId: string, createdAt: string, charge: 0 | 1, firstSettlement: boolean): Promise<SettleOutcome> {
    let reserved = false;
    const { changed } = await updateJson<MonthUsage>(this.bucket, keyOf(workspaceId, monthOf(createdAt)), (current) => {
      reserved = current !== null && renderId in current.reservations;
      // No reservation and not the first settlement: already settled (a redelivery or replay).
      if (!reserved && !(firstSettlement && charge)) return undefined;
      const { [renderId]: _settled, ...reservations } = current?.reservations ?? {};
      const day = new Date(createdAt).toISOString().slice(8, 10);
      const days = charge ? { ...current?.days, [day]: (current?.days?.[day] ?? 0) + 1 } : current?.days;
      return { used: (current?.used ?? 0) + charge, reservations, ...(days ? { days } : {}) };
    });
    return !changed ? 'no_reservation' : reserved ? 'settled' : 'charged_without_reservation';
  }
}
