// Builds the dashboard's collaborators from the ingress's own (one ledger, one delivery queue per process).
import { ProfileStore } from '../../profiles/store.ts';
import { AccountStore } from '../../accounts/accounts.ts';
import { Membership } from '../../accounts/membership.ts';
import { SessionStore } from '../../accounts/sessions.ts';
import type { Config } from '../../config.ts';
import type { Sealer } from '../../secrets/sealer.ts';
import type { DeliveryQueue } from '../../delivery/records.ts';
import type { RenderRecords } from '../../renders/records.ts';
import type { Topology } from '../../jetstream/topology.ts';
import type { Logger } from '../../log.ts';
import type { MonitorManager } from '../../monitors/manage.ts';
import { createMailer } from '../../mail/mailer.ts';
import { Outbox } from '../../mail/outbox.ts';
import type { RecentRenders } from '../../renders/recent.ts';
import type { QuotaLedger } from '../../workspaces/usage.ts';
import type { WorkspaceStore } from '../../workspaces/workspace.ts';
import type { DashboardDeps } from './context.ts';
import { resolveSessionSecret } from './session.ts';

/** The dashboard's dependencies, sharing `workspaces` with the rest of the ingress. */
export async function createDashboardDeps(options: {
  config: Config;
  log: Logger;
  topology: Topology;
  sealer: Sealer;
  workspaces: WorkspaceStore;
  ledger: QuotaLedger;
  recentRenders: RecentRenders;
  deliveries: DeliveryQueue;
  monitors?: MonitorManager;
  renders: RenderRecords;
}): Promise<DashboardDeps> {
  const { config, log, topology, workspaces, ledger, recentRenders, deliveries, sealer, monitors } = options;
  const outbox = new Outbox(topology.jsm, sealer);
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
    sessionSecret: await resolveSessionSecret(config.sessionSecret, topology.dashboard, sealer),
    sessionStore: new SessionStore(topology.sessions),
    deliveries,
    sealer,
    ...(monitors ? { monitors } : {}),
    profiles: new ProfileStore(topology.profiles, sealer),
    renders: options.renders,
  };
}
