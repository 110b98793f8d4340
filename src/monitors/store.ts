// Monitors in the `monitors` KV bucket, keyed by workspace and id; every change is compare-and-set.
import type { KV } from '@nats-io/kv';
import { createJson, deleteJson, readJson, updateJson } from '../jetstream/kv-json.ts';
import { isMonitorId, monitorKey, type Monitor } from '../domain/monitor.ts';

/** A workspace's monitor slots: the ids its monitors hold against the plan's limit, and since when. */
interface Slots {
  ids: { id: string; at: string }[];
}

/** The KV key of a workspace's slots (no monitor key has this shape: theirs end in a monitor id). */
const slotsKey = (workspaceId: string) => `slots.${workspaceId}`;

/** How long a slot may be held by a monitor not written yet (a create under way) before it counts as lost. */
const SLOT_GRACE_MS = 60_000;

/**
 * Reads and changes monitor records. The plan's monitor count is kept by compare-and-set on one
 * record per workspace (its slots), so concurrent creates never pass the limit.
 */
export class MonitorStore {
  constructor(private readonly bucket: KV) {}

  /** A workspace's monitor, or null (an id of another workspace is not found either). */
  async get(workspaceId: string, monitorId: string): Promise<Monitor | null> {
    if (!isMonitorId(monitorId)) return null;
    return (await readJson<Monitor>(this.bucket, monitorKey(workspaceId, monitorId))).value;
  }

  /** A monitor by id alone, whatever its workspace (operators' CLI). */
  async find(monitorId: string): Promise<Monitor | null> {
    if (!isMonitorId(monitorId)) return null;
    for await (const key of await this.bucket.keys(`*.${monitorId}`)) {
      const monitor = (await readJson<Monitor>(this.bucket, key)).value;
      if (monitor) return monitor;
    }
    return null;
  }

  /** One workspace's monitors, or every monitor when no workspace is named; oldest first. */
  async list(workspaceId?: string): Promise<Monitor[]> {
    const monitors: Monitor[] = [];
    for await (const key of await this.bucket.keys(workspaceId ? `${workspaceId}.*` : '>')) {
      if (!isMonitorId(key.slice(key.lastIndexOf('.') + 1))) continue;
      const monitor = (await readJson<Monitor>(this.bucket, key)).value;
      if (monitor) monitors.push(monitor);
    }
    return monitors.sort((a, b) => a.created_at.localeCompare(b.created_at));
  }

  /**
   * Writes a new monitor if its workspace holds fewer than `limit`: a slot is claimed first, by
   * compare-and-set on the workspace's slots, then the monitor written. `full` when the workspace
   * has its `limit`, `taken` when the id is (its slot is given back).
   */
  async create(monitor: Monitor, limit = Number.POSITIVE_INFINITY): Promise<'created' | 'taken' | 'full'> {
    const { workspace_id: workspaceId, monitor_id: monitorId } = monitor;
    if (!(await this.claimSlot(workspaceId, monitorId, limit))) return 'full';
    if (await createJson(this.bucket, monitorKey(workspaceId, monitorId), monitor)) return 'created';
    await this.releaseSlot(workspaceId, monitorId);
    return 'taken';
  }

  /** Claims a slot for `monitorId`; false when the workspace holds `limit` already (slots lost by a crash freed first). */
  private async claimSlot(workspaceId: string, monitorId: string, limit: number): Promise<boolean> {
    const key = slotsKey(workspaceId);
    // A workspace whose monitors came before slots were kept starts from the monitors it has.
    if ((await readJson<Slots>(this.bucket, key)).value === null) {
      const ids = (await this.list(workspaceId)).map((m) => ({ id: m.monitor_id, at: m.created_at }));
      await createJson<Slots>(this.bucket, key, { ids });
    }
    for (let pass = 1; ; pass++) {
      let full = false;
      await updateJson<Slots>(this.bucket, key, (current) => {
        const ids = current?.ids ?? [];
        full = ids.length >= limit;
        if (full || ids.some((slot) => slot.id === monitorId)) return undefined;
        return { ids: [...ids, { id: monitorId, at: new Date().toISOString() }] };
      });
      if (!full) return true;
      if (pass > 1 || !(await this.freeLostSlots(workspaceId))) return false;
    }
  }

  /** Frees the slots whose monitor was never written (a create that died half-way); true when any was. */
  private async freeLostSlots(workspaceId: string): Promise<boolean> {
    const slots = (await readJson<Slots>(this.bucket, slotsKey(workspaceId))).value?.ids ?? [];
    const cutoff = Date.now() - SLOT_GRACE_MS;
    const lost = new Set<string>();
    for (const slot of slots) {
      if (Date.parse(slot.at) < cutoff && !(await this.get(workspaceId, slot.id))) lost.add(slot.id);
    }
    if (lost.size === 0) return false;
    await updateJson<Slots>(this.bucket, slotsKey(workspaceId), (current) =>
      current ? { ids: current.ids.filter((slot) => !lost.has(slot.id)) } : undefined,
    );
    return true;
  }

  /** Gives a monitor's slot back. */
  private async releaseSlot(workspaceId: string, monitorId: string): Promise<void> {
    await updateJson<Slots>(this.bucket, slotsKey(workspaceId), (current) =>
      current?.ids.some((slot) => slot.id === monitorId)
        ? { ids: current.ids.filter((slot) => slot.id !== monitorId) }
        : undefined,
    );
  }

  /** Changes a monitor with compare-and-set; `change` returns undefined to leave it. Null when it is gone. */
  async update(
    workspaceId: string,
    monitorId: string,
    change: (current: Monitor) => Monitor | undefined,
  ): Promise<{ monitor: Monitor | null; changed: boolean }> {
    const { value, changed } = await updateJson<Monitor>(this.bucket, monitorKey(workspaceId, monitorId), (current) => {
      if (!current) return undefined;
      const next = change(current);
      return next && { ...next, updated_at: new Date().toISOString() };
    });
    return { monitor: value, changed };
  }

  /** Deletes a monitor; true when this call deleted it. Its tick message ends itself when next delivered. */
  async remove(workspaceId: string, monitorId: string): Promise<boolean> {
    const removed = await deleteJson<Monitor>(this.bucket, monitorKey(workspaceId, monitorId), () => true);
    if (removed) await this.releaseSlot(workspaceId, monitorId);
    return removed;
  }
}
