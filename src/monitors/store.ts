// Monitors in the `monitors` KV bucket, keyed by workspace and id; every change is compare-and-set.
import type { KV } from '@nats-io/kv';
import { createJson, deleteJson, readJson, updateJson } from '../jetstream/kv-json.ts';
import { isMonitorId, monitorKey, type Monitor } from '../domain/monitor.ts';

/** Reads and changes monitor records. */
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
      const monitor = (await readJson<Monitor>(this.bucket, key)).value;
      if (monitor) monitors.push(monitor);
    }
    return monitors.sort((a, b) => a.created_at.localeCompare(b.created_at));
  }

  /** Writes a new monitor; false when its key is taken. */
  async create(monitor: Monitor): Promise<boolean> {
    return createJson(this.bucket, monitorKey(monitor.workspace_id, monitor.monitor_id), monitor);
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
    return deleteJson<Monitor>(this.bucket, monitorKey(workspaceId, monitorId), () => true);
  }
}
