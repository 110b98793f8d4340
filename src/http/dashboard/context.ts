// What every dashboard route shares: its collaborators, the signed-in member, form fields and notices.
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { AccountStore, Account } from '../../accounts/accounts.ts';
import type { Membership } from '../../accounts/membership.ts';
import type { SessionStore } from '../../accounts/sessions.ts';
import type { Config } from '../../config.ts';
import type { Sealer } from '../../secrets/sealer.ts';
import { deliveryIdOf, type DeliveryQueue, type DeliveryRecord } from '../../delivery/records.ts';
import type { RenderRecords } from '../../renders/records.ts';
import type { Logger } from '../../log.ts';
import type { Mailer } from '../../mail/mailer.ts';
import type { MonitorManager } from '../../monitors/manage.ts';
import type { ProfileStore } from '../../profiles/store.ts';
import type { RecentRender, RecentRenders } from '../../renders/recent.ts';
import type { QuotaLedger } from '../../workspaces/usage.ts';
import type { Member, Workspace, WorkspaceStore } from '../../workspaces/workspace.ts';
import type { WindowLimiter } from './rate-limit.ts';
import type { SignInGuard } from './sign-in-guard.ts';
import type { Session, Sessions } from './session.ts';
import { confirmAddressPage, messagePage } from './views/auth.ts';
import type { Notice, Viewer } from './views/layout.ts';

/** What the dashboard needs from the rest of the system. */
export interface DashboardDeps {
  config: Config;
  log: Logger;
  accounts: AccountStore;
  /** Every change of who belongs to a workspace, the CLI's too. */
  membership: Membership;
  workspaces: WorkspaceStore;
  ledger: QuotaLedger;
  recentRenders: RecentRenders;
  mailer: Mailer;
  sessionSecret: string;
  /** Signed-in sessions kept server-side, so they can be ended. */
  sessionStore: SessionStore;
  /** The delivery records, for the usage and deliveries pages and "Send again" (the CLI's redrive); absent when the installation records none. */
  deliveries?: Pick<DeliveryQueue, 'get' | 'resend'>;
  /** Seals the default storage's secret (docs/storage.md); without it there is no storage page. */
  sealer?: Sealer;
  /** The workspace's monitors, for the monitors pages and their pause button; absent: no such pages. */
  monitors?: Pick<MonitorManager, 'store' | 'change'>;
  /** The workspace's profiles, for the profiles page; absent: no such page. */
  profiles?: Pick<ProfileStore, 'list' | 'put' | 'remove'>;
  /** The render records, for a render's own page (its timeline, output and failure capture); absent in tests of other pages. */
  renders?: Pick<RenderRecords, 'get'>;
}

/** The webhook deliveries of `renders`, in their order: a render's delivery id derives from its render id. */
export async function deliveriesOf(
  deliveries: Pick<DeliveryQueue, 'get'>,
  renders: RecentRender[],
): Promise<DeliveryRecord[]> {
  const records = await Promise.all(
    renders.filter((render) => render.webhook_url).map((render) => deliveries.get(deliveryIdOf(render.render_id))),
  );
  return records.filter((record): record is DeliveryRecord => record !== null);
}

/** The deps plus what the plugin builds once: sessions and the rate limiters. */
export interface Dashboard extends DashboardDeps {
  sessions: Sessions;
  limits: { signIn: SignInGuard; signUpByIp: WindowLimiter; mailByEmail: WindowLimiter };
}

/** A signed-in member looking at one of their workspaces. */
export interface SignedIn {
  session: Session;
  account: Account;
  workspace: Workspace;
  member: Member;
  viewer: Viewer;
}

/** A string field of the parsed form body ('' when absent). */
export function field(request: FastifyRequest, name: string): string {
  const value = (request.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
}

/** The session of the request, or a fresh anonymous one (so even sign-in forms carry a CSRF token). */
export function sessionOf(dashboard: Dashboard, request: FastifyRequest, reply: FastifyReply): Session {
  return dashboard.sessions.read(request) ?? dashboard.sessions.write(reply, {});
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in member: set by the `requireSignIn` hook, so only on the dashboard routes behind it. */
    signedIn: SignedIn;
  }
}

/**
 * The preHandler of every dashboard route that needs a signed-in member: it decorates the request
 * with them and their current workspace (`request.signedIn`), or answers instead (a redirect to
 * sign in, or a page saying they belong to no workspace). Roles are read fresh from the workspace.
 */
export function requireSignIn(dashboard: Dashboard): preHandlerAsyncHookHandler {
  return async (request, reply) => {
    // Server-side: a cookie whose session was signed out or revoked is no session, however well signed.
    const session = await dashboard.sessions.live(request);
    const account = session?.email ? await dashboard.accounts.get(session.email) : null;
    if (!session || !account || account.password_hash === null) return reply.redirect('/dashboard/sign-in', 303);
    // Whoever typed an address into the sign-up form holds its password, not its mailbox: an
    // account opens no workspace until the address is confirmed (docs/security.md).
    if (!account.verified) {
      const page = confirmAddressPage({
        csrf: dashboard.sessions.csrfToken(session),
        email: account.email,
        mailed: Boolean(dashboard.config.smtpUrl),
        notices: noticesOf(request),
      });
      return reply.code(403).type('text/html; charset=utf-8').send(page.text);
    }
    // The session's workspace first, then any other: a member removed from one still reaches the rest.
    const candidates = [
      ...new Set(
        [session.ws, ...account.workspace_ids].filter((id): id is string => !!id && account.workspace_ids.includes(id)),
      ),
    ];
    for (const id of candidates) {
      const workspace = await dashboard.workspaces.get(id);
      const member = workspace?.members.find((m) => m.email === account.email);
      if (workspace && member) {
        const viewer: Viewer = {
          email: account.email,
          workspaceId: id,
          workspaceIds: account.workspace_ids,
          csrf: dashboard.sessions.csrfToken(session),
        };
        request.signedIn = { session, account, workspace, member, viewer };
        return;
      }
    }
    return reply
      .code(403)
      .type('text/html')
      .send(
        messagePage({
          title: 'No workspace',
          kind: 'warn',
          text: 'You are not a member of any workspace any more. Ask an owner to invite you again.',
        }).text,
      );
  };
}

const noticeTexts: Record<string, Notice> = {
  'link-sent': { kind: 'ok', text: 'We sent the confirmation link again. It works for three days.' },
  'link-in-outbox': {
    kind: 'ok',
    text: 'A new confirmation link is in the outbox (no mail is sent here: SMTP_URL is not set): npx shutterbus mail outbox shows it. It works for three days.',
  },
  'setting-on': {
    kind: 'ok',
    text: 'Saved: require signed requests is on. It is in force on every server within about two seconds (at most one minute).',
  },
  'setting-off': {
    kind: 'ok',
    text: 'Saved: require signed requests is off. It is in force on every server within about two seconds (at most one minute).',
  },
  rotated: {
    kind: 'ok',
    text: 'New keys are in force now. The old access key and secret key are refused from this moment.',
  },
  invited: { kind: 'ok', text: 'Invitation sent.' },
  'invited-to-outbox': {
    kind: 'ok',
    text: 'Invitation made. No mail is sent here (SMTP_URL is not set): its link is in the outbox, where npx shutterbus mail outbox shows it.',
  },
  'role-changed': { kind: 'ok', text: 'Role changed.' },
  removed: { kind: 'ok', text: 'Member removed.' },
  'already-member': { kind: 'warn', text: 'That address is already a member of this workspace.' },
  'signed-out': { kind: 'ok', text: 'You are signed out.' },
  'signed-out-everywhere': { kind: 'ok', text: 'Every session of your account is signed out, this one included.' },
  'password-changed': { kind: 'ok', text: 'Password changed. Every other session of your account is signed out.' },
  verified: { kind: 'ok', text: 'Your address is confirmed. Sign in to continue.' },
  resent: { kind: 'ok', text: 'Sent again: a new round of attempts has started, with the same delivery id.' },
  'storage-saved': {
    kind: 'ok',
    text: 'Saved: store=true now uploads to this storage when a request names none of its own.',
  },
  'storage-cleared': { kind: 'ok', text: 'Cleared: store=true now needs the storage_* parameters in each request.' },
  'profile-saved': { kind: 'ok', text: 'Profile saved: renders with profile=NAME load it.' },
  'profile-removed': { kind: 'ok', text: 'Profile removed: a render naming it is refused.' },
  'monitor-paused': { kind: 'ok', text: 'Monitor paused: it renders nothing until it is resumed.' },
  'monitor-active': { kind: 'ok', text: 'Monitor resumed: its next tick comes one interval after its last.' },
};

/** The notice a redirect asked for with ?notice=…; only known texts, never the query's own words. */
export function noticesOf(request: FastifyRequest): Notice[] {
  const key = (request.query as Record<string, string | undefined>)?.notice;
  return key && Object.hasOwn(noticeTexts, key) ? [noticeTexts[key]] : [];
}

/** The client's address for rate limits: the socket's peer, or the client TRUST_PROXY's proxies name (docs/security.md). */
export const clientIp = (request: FastifyRequest) => request.ip;
