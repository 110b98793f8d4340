// A monitor record as the monitor store keeps it, for the tests that drive the store directly.
import { newMonitorId, type Monitor } from '../../src/domain/monitor.ts';

/** An active png monitor of `workspaceId`, due now, with no capture yet; `fields` override any of it. */
export function monitorRecord(workspaceId: string, fields: Partial<Monitor> = {}): Monitor {
  const now = new Date().toISOString();
  return {
    monitor_id: newMonitorId(),
    workspace_id: workspaceId,
    status: 'active',
    interval: 60,
    threshold: 0.01,
    webhook_url: 'http://127.0.0.1:9/hook',
    target: 'http://127.0.0.1:9/page',
    format: 'png',
    sealed_options: 'unused',
    created_at: now,
    updated_at: now,
    generation: 1,
    next_run_at: now,
    changes: [],
    ...fields,
  };
}
