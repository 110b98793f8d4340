// The monthly screenshot quota: admission reserves a slot, success commits it once, failure releases it.
import type { KV } from '@nats-io/kv';
import { ServiceError } from '../errors.ts';
import { readJson, RememberedWrites } from '../jetstream/kv-json.ts';

/** One workspace's usage in one UTC calendar month. */
interface MonthUsage {
  used: number;
  /** Renders admitted and not yet ended: render id → when the reservation lapses (ms). */
  reservations: Record<string, number>;
  /**
   * Reservations that lapsed before their render was settled: render id → when they lapsed (ms).
   * They hold no slot, but a render that outlived its reservation is still charged once when it
   * ends; kept a day, far longer than any render, so settling twice can never charge twice.
   */
  lapsed?: Record<string, number>;
  /** Successful screenshots per UTC day of the month ("01"…"31"), counted with `used`. */
  days?: Record<string, number>;
  /** Renders charged as more than one (a merge: one per source): render id → how many, until settled. */
  weights?: Record<string, number>;
}

/** The UTC month of a moment, as YYYY-MM. */
export function monthOf(moment: Date | string): string {
  return new Date(moment).toISOString().slice(0, 7);
}

const keyOf = (workspaceId: string, month: string) => `${workspaceId}.${month}`;

/** How long a lapsed reservation is remembered. */
const LAPSED_KEPT_MS = 24 * 3600 * 1000;

// Live reservations hold slots; lapsed ones move aside (until forgotten a day later).
const live = (usage: MonthUsage | null, now: number): MonthUsage => {
  const reservations = Object.entries(usage?.reservations ?? {});
  const lapsed = Object.entries({
    ...usage?.lapsed,
    ...Object.fromEntries(reservations.filter(([, lapses]) => lapses <= now)),
  }).filter(([, lapses]) => lapses > now - LAPSED_KEPT_MS);
  return {
    used: usage?.used ?? 0,
    reservations: Object.fromEntries(reservations.filter(([, lapses]) => lapses > now)),
    ...(lapsed.length > 0 ? { lapsed: Object.fromEntries(lapsed) } : {}),
    ...(usage?.days ? { days: usage.days } : {}),
    ...weightsOf(usage?.weights, reservations.concat(lapsed)),
  };
};

// The weights of the renders still reserved or remembered as lapsed.
function weightsOf(weights: Record<string, number> | undefined, held: [string, number][]) {
  if (!weights) return {};
  const ids = new Set(held.map(([id]) => id));
  const kept = Object.entries(weights).filter(([id]) => ids.has(id));
  return kept.length > 0 ? { weights: Object.fromEntries(kept) } : {};
}

// What a render is charged as: its weight, 1 unless reserved as more.
const weightOf = (usage: MonthUsage, renderId: string) => usage.weights?.[renderId] ?? 1;

/**
 * What a settlement found: the reservation; a reservation that had lapsed (its render outlived it,
 * settled all the same); or none, because the render was settled before (a redelivery, a replay,
 * a retried write) or never admitted.
 */
export type SettleOutcome = 'settled' | 'settled_after_lapse' | 'already_settled';

/** What admission needs to know of a workspace. */
export interface Allowance {
  workspaceId: string;
  quota: number;
  concurrency: number;
}

/** Per-workspace monthly usage in the `usage` bucket; every change is compare-and-set. */
export class QuotaLedger {
  // Admission and settlement in one process (the default stack) write a workspace's month in turn.
  readonly #writes: RememberedWrites<MonthUsage>;

  constructor(private readonly bucket: KV) {
    this.#writes = new RememberedWrites(bucket);
  }

  /**
   * Admits a render: refuses with 402 when used + in flight reaches the quota, with 429 when the
   * workspace already has `concurrency` renders in flight; otherwise holds a slot for `renderId`
   * until the render ends or, should its end never be settled, until `lapsesAt` (ms).
   */
  async reserve(allowance: Allowance, renderId: string, at: Date, lapsesAt: number, weight = 1): Promise<void> {
    const now = Date.now();
    await this.#writes.update(keyOf(allowance.workspaceId, monthOf(at)), (current) => {
      const usage = live(current, now);
      const inFlight = Object.keys(usage.reservations).length;
      const held = Object.keys(usage.reservations).reduce((sum, id) => sum + weightOf(usage, id), 0);
      // Renders in flight hold their slots: counting them keeps concurrent admissions under the quota.
      if (usage.used + held + weight > allowance.quota) throw new ServiceError('screenshots_limit_reached');
      if (inFlight >= allowance.concurrency) throw new ServiceError('concurrency_limit_reached', {}, { retryAfter: 2 });
      usage.reservations[renderId] = lapsesAt;
      if (weight > 1) usage.weights = { ...usage.weights, [renderId]: weight };
      return usage;
    });
  }

  /**
   * Turns a render's reservation (live or lapsed) into one used screenshot. Idempotent: once
   * settled the reservation is gone, so a second call for the same render changes nothing.
   */
  async commit(workspaceId: string, renderId: string, createdAt: string): Promise<SettleOutcome> {
    return this.settle(workspaceId, renderId, createdAt, 1);
  }

  /** Gives a failed render's reservation back; never counts anything. */
  async release(workspaceId: string, renderId: string, createdAt: string): Promise<SettleOutcome> {
    return this.settle(workspaceId, renderId, createdAt, 0);
  }

  /** A month of a workspace: screenshots used, reservations held now, and used per UTC day ({"DD": n}). */
  async month(
    workspaceId: string,
    month: string,
  ): Promise<{ used: number; inFlight: number; days: Record<string, number> }> {
    const { value } = await readJson<MonthUsage>(this.bucket, keyOf(workspaceId, month));
    return {
      used: value?.used ?? 0,
      inFlight: Object.keys(live(value, Date.now()).reservations).length,
      days: value?.days ?? {},
    };
  }

  /**
   * Where a workspace stands now in a month: screenshots used, reservations held, and the moment
   * (ms) the first of them lapses at the latest (undefined when none is held).
   */
  async standing(workspaceId: string, month: string): Promise<{ used: number; inFlight: number; firstLapse?: number }> {
    const { value } = await readJson<MonthUsage>(this.bucket, keyOf(workspaceId, month));
    const lapses = Object.values(live(value, Date.now()).reservations);
    return {
      used: value?.used ?? 0,
      inFlight: lapses.length,
      ...(lapses.length > 0 ? { firstLapse: Math.min(...lapses) } : {}),
    };
  }

  /** Screenshots used in a month. */
  async used(workspaceId: string, month: string): Promise<number> {
    return (await this.month(workspaceId, month)).used;
  }

  private async settle(
    workspaceId: string,
    renderId: string,
    createdAt: string,
    charge: 0 | 1,
  ): Promise<SettleOutcome> {
    let outcome: SettleOutcome = 'already_settled';
    await this.#writes.update(keyOf(workspaceId, monthOf(createdAt)), (current) => {
      const usage = live(current, Date.now());
      outcome =
        renderId in usage.reservations
          ? 'settled'
          : renderId in (usage.lapsed ?? {})
            ? 'settled_after_lapse'
            : 'already_settled';
      if (outcome === 'already_settled') return undefined;
      const { [renderId]: _held, ...reservations } = usage.reservations;
      const { [renderId]: _lapsed, ...lapsed } = usage.lapsed ?? {};
      const { [renderId]: _weight, ...weights } = usage.weights ?? {};
      const charged = charge * weightOf(usage, renderId);
      const day = new Date(createdAt).toISOString().slice(8, 10);
      const days = charged ? { ...usage.days, [day]: (usage.days?.[day] ?? 0) + charged } : usage.days;
      return {
        used: usage.used + charged,
        reservations,
        ...(Object.keys(lapsed).length > 0 ? { lapsed } : {}),
        ...(days ? { days } : {}),
        ...(Object.keys(weights).length > 0 ? { weights } : {}),
      };
    });
    return outcome;
  }
}
