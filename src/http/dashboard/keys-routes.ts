// The keys page, the "require signed requests" setting, key rotation, switching workspaces and usage.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ServiceError } from '../../errors.ts';
import { signedExampleUrl } from '../../signing.ts';
import { monthOf } from '../../workspaces/usage.ts';
import { canManage, keysUsable } from '../../workspaces/workspace.ts';
import { deliveriesOf, field, noticesOf, type Dashboard } from './context.ts';
import type { Html } from './views/html.ts';
import { keysPage, rotateConfirmPage } from './views/keys.ts';
import { usagePage } from './views/usage.ts';

const send = (reply: FastifyReply, page: Html, status = 200) =>
  reply.code(status).type('text/html; charset=utf-8').send(page.text);

/** Registers the workspace pages. */
export async function keysRoutes(app: FastifyInstance, dashboard: Dashboard): Promise<void> {
  const { workspaces, config } = dashboard;

  app.get('/keys', async (request, reply) => {
    const { workspace, member, viewer, account } = request.signedIn;
    const manager = canManage(workspace, account.email);
    const revealSecret = (request.query as Record<string, string>).reveal === 'secret';
    // The secret key signs for the whole workspace: only its owners and admins see it.
    if (revealSecret && !manager)
      throw new ServiceError('forbidden', {}, { message: 'Only owners and admins can reveal the secret key.' });
    return send(
      reply,
      keysPage({
        viewer,
        workspace,
        member,
        manager,
        revealSecret,
        unverified: keysUsable(workspace) ? undefined : { viewerVerified: account.verified },
        mailed: Boolean(config.smtpUrl),
        signedUrl: signedExampleUrl(config.baseUrl, workspace.access_key, workspace.secret_key),
        notices: noticesOf(request),
      }),
    );
  });

  app.post('/settings', async (request, reply) => {
    const current = request.signedIn;
    const setting = field(request, 'require_signed_requests');
    if (setting !== 'on' && setting !== 'off')
      throw new ServiceError('request_not_valid', {}, { message: 'require_signed_requests must be on or off.' });
    // The role is checked inside the compare-and-set, against the workspace as it is at that moment.
    await workspaces.update(current.workspace.workspace_id, (workspace) => {
      if (!canManage(workspace, current.account.email)) throw new ServiceError('forbidden');
      return { ...workspace, require_signed_requests: setting === 'on' };
    });
    return reply.redirect(`/dashboard/keys?notice=setting-${setting}`, 303);
  });

  app.get('/keys/rotate', async (request, reply) => {
    const current = request.signedIn;
    if (!canManage(current.workspace, current.account.email)) throw new ServiceError('forbidden');
    return send(reply, rotateConfirmPage(current.viewer));
  });

  app.post('/keys/rotate', async (request, reply) => {
    const current = request.signedIn;
    if (field(request, 'confirm') !== 'rotate') return reply.redirect('/dashboard/keys/rotate', 303);
    await workspaces.rotateKeys(current.workspace.workspace_id, current.account.email);
    return reply.redirect('/dashboard/keys?notice=rotated', 303);
  });

  app.post('/switch', async (request, reply) => {
    const current = request.signedIn;
    const target = field(request, 'workspace_id');
    if (!current.account.workspace_ids.includes(target))
      throw new ServiceError('forbidden', {}, { message: 'You are not a member of that workspace.' });
    dashboard.sessions.write(reply, { sid: current.session.sid, email: current.account.email, ws: target });
    return reply.redirect('/dashboard/keys', 303);
  });

  app.get('/usage', async (request, reply) => {
    const current = request.signedIn;
    const { workspace } = current;
    const month = monthOf(new Date());
    const [{ used, days }, renders] = await Promise.all([
      dashboard.ledger.month(workspace.workspace_id, month),
      dashboard.recentRenders.list(workspace.workspace_id),
    ]);
    const deliveries = dashboard.deliveries ? await deliveriesOf(dashboard.deliveries, renders) : null;
    return send(reply, usagePage({ viewer: current.viewer, workspace, month, used, days, renders, deliveries }));
  });
}
