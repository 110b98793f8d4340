// `shutterbus monitors list|remove`: operators' view of every workspace's monitors (docs/monitors.md).
import { ServiceError } from '../errors.ts';
import { publicMonitor } from '../domain/monitor.ts';
import type { Config } from '../config.ts';
import type { Topology } from '../jetstream/topology.ts';
import { MonitorStore } from '../monitors/store.ts';
import { asGiven, command, required } from './args.ts';

/** What the monitor commands need. */
export interface MonitorCommandContext {
  config: Config;
  topology: Topology;
}

/** The monitor commands, keyed by their command words. */
export const monitorCommands = {
  'monitors list': command(
    { workspace: { type: 'string' } },
    asGiven,
    async ({ workspace }, { config, topology }: MonitorCommandContext) => {
      const monitors = await new MonitorStore(topology.monitors).list(workspace);
      return {
        monitors: monitors.map((monitor) => ({
          workspace_id: monitor.workspace_id,
          ...publicMonitor(monitor, config.filesBaseUrl, false),
        })),
      };
    },
    { readOnly: true },
  ),
  'monitors remove': command(
    { id: { type: 'string' } },
    ({ id }) => required(id, 'id'),
    async (monitorId, { topology }: MonitorCommandContext) => {
      const store = new MonitorStore(topology.monitors);
      const monitor = await store.find(monitorId);
      if (!monitor) throw new ServiceError('not_found', {}, { message: `No monitor ${monitorId}.` });
      // Its tick message ends itself when next delivered: nothing else to stop.
      await store.remove(monitor.workspace_id, monitor.monitor_id);
      return { removed: monitor.monitor_id, workspace_id: monitor.workspace_id };
    },
  ),
};
