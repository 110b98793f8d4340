// Members: owners and admins invite; owners change roles and remove; the last owner always stays.
import type { FastifyInstance } from 'fastify';
import { emailPattern } from '../../accounts/accounts.ts';
import { ServiceError } from '../../errors.ts';
import { canManage, normalizeEmail, type Role } from '../../workspaces/workspace.ts';
import { sendInvitation } from './auth-routes.ts';
import { field, noticesOf, type Dashboard } from './context.ts';
import { membersPage } from './views/members.ts';

const roles: Role[] = ['owner', 'admin', 'member'];

function roleOf(value: string): Role {
  if (!roles.includes(value as Role))
    throw new ServiceError('request_not_valid', {}, { message: 'role must be owner, admin or member.' });
  return value as Role;
}

/** Registers the members page and its forms. */
export async function membersRoutes(app: FastifyInstance, dashboard: Dashboard): Promise<void> {
  const { membership } = dashboard;

  app.get('/members', async (request, reply) => {
    const current = request.signedIn;
    return reply.type('text/html; charset=utf-8').send(membersPage({ ...current, notices: noticesOf(request) }).text);
  });

  app.post('/members/invite', async (request, reply) => {
    const current = request.signedIn;
    const { account, workspace } = current;
    if (!canManage(workspace, account.email)) throw new ServiceError('forbidden');
    const email = normalizeEmail(field(request, 'email'));
    const role = roleOf(field(request, 'role'));
    if (!emailPattern.test(email))
      throw new ServiceError('request_not_valid', {}, { message: 'Enter a valid email address.' });
    if (workspace.members.some((m) => m.email === email))
      return reply.redirect('/dashboard/members?notice=already-member', 303);
    const { account: invited } = await membership.add(workspace.workspace_id, email, role, { email: account.email });
    await sendInvitation(dashboard, invited, workspace.workspace_id, { inviter: account.email, role });
    const notice = dashboard.config.smtpUrl ? 'invited' : 'invited-to-outbox';
    return reply.redirect(`/dashboard/members?notice=${notice}`, 303);
  });

  app.post('/members/role', async (request, reply) => {
    const current = request.signedIn;
    const email = normalizeEmail(field(request, 'email'));
    await membership.setRole(current.workspace.workspace_id, email, roleOf(field(request, 'role')), {
      email: current.account.email,
    });
    return reply.redirect('/dashboard/members?notice=role-changed', 303);
  });

  app.post('/members/remove', async (request, reply) => {
    const current = request.signedIn;
    const email = normalizeEmail(field(request, 'email'));
    await membership.remove(current.workspace.workspace_id, email, { email: current.account.email });
    return reply.redirect(
      email === current.account.email ? '/dashboard/keys' : '/dashboard/members?notice=removed',
      303,
    );
  });
}
