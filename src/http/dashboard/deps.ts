// Builds the dashboard's collaborators from the ingress's own (one ledger, one delivery queue per process).
import { AccountStore } from '../../accounts/accounts.ts';
import { Membership } from '../../accounts/membership.ts';
import type { Config } from '../../config.ts';
import { deliveryIdOf, type DeliveryQueue } from '../../delivery/records.ts';
import type { Topology } from '../../jetstream/topology.ts';
import type { Logger } from '../../log.ts';
import { createMailer } from '../../mail/mailer.ts';
import { Outbox } from '../../mail/outbox.ts';
import type { RecentRenders } from '../../workspaces/recent-renders.ts';
import type { QuotaLedger } from '../../workspaces/usage.ts';
import type { WorkspaceStore } from '../../workspaces/workspace.ts';
import type { DashboardDeps } from './context.ts';
import { resolveSessionSecret } from './session.ts';
import type { DeliveryRow } from './views/usage.ts';

/** The dashboard's dependencies, sharing `workspaces` with the rest of the ingress. */
export async function createDashboardDeps(options: {
  config: Config;
  log: Logger;
  topology: Topology;
  workspaces: WorkspaceStore;
  ledger: QuotaLedger;
  recentRenders: RecentRenders;
  deliveries: DeliveryQueue;
}): Promise<DashboardDeps> {
  const { config, log, topology, workspaces, ledger, recentRenders, deliveries } = options;
  const outbox = new Outbox(topology.jsm);
  const accounts = new AccountStore(topology.accounts);
  return {
    config,
    log,
    workspaces,
    accounts,
    membership: new Membership(accounts, workspaces),
    ledger,
    recentRenders,
    mailer: createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, outbox, log }),
    sessionSecret: await resolveSessionSecret(config.sessionSecret, topology.dashboard),
    deliveries,
    // A render's delivery id is derived from its render id, so the latest renders name their deliveries.
    deliveriesOf: async (renders) => {
      const rows: DeliveryRow[] = [];
      for (const render of renders.filter((r) => r.webhook_url)) {
        const value = await deliveries.get(deliveryIdOf(render.render_id));
        if (value) rows.push({ id: value.id, render_id: value.render_id, webhook_url: value.webhook_url, status: value.status, attempts: value.attempts, last_error: value.last_error, updated_at: value.updated_at });
      }
      return rows;
    },
  };
}
