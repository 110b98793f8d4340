// Members: owners and admins invite; owners change roles and remove; the last owner always stays.
import type { FastifyInstance } from 'fastify';
import { emailPattern } from '../../accounts/accounts.ts';
import { ServiceError } from '../../errors.ts';
import { canManage, normalizeEmail, type Role, type Workspace } from '../../workspaces/workspace.ts';
import type { InviteToken } from './auth-routes.ts';
import { field, noticesOf, type Dashboard, type SignedIn } from './context.ts';
import { membersPage } from './views/members.ts';

const roles: Role[] = ['owner', 'admin', 'member'];
const INVITE_LIFETIME_MS = 7 * 24 * 3600 * 1000;

function roleOf(value: string): Role {
  if (!roles.includes(value as Role)) throw new ServiceError('request_not_valid', {}, { message: 'role must be owner, admin or member.' });
  return value as Role;
}

/** Refuses unless the actor is an owner of the workspace as it is now. */
function requireOwner(workspace: Workspace, email: string): void {
  if (workspace.members.find((m) => m.email === email)?.role !== 'owner') {
    throw new ServiceError('forbidden', {}, { message: 'Only owners of the workspace can change roles and remove members.' });
  }
}

/** Refuses a change that would leave the workspace without an owner. */
function keepAnOwner(workspace: Workspace): Workspace {
  if (!workspace.members.some((m) => m.role === 'owner')) {
    throw new ServiceError('forbidden', {}, { message: 'A workspace must keep at least one owner: make someone else an owner first.' });
  }
  return workspace;
}

/** Registers the members page and its forms. */
export async function membersRoutes(app: FastifyInstance, dashboard: Dashboard): Promise<void> {
  const { workspaces, accounts } = dashboard;
  const target = (current: SignedIn, email: string) => {
    const address = normalizeEmail(email);
    if (!current.workspace.members.some((m) => m.email === address)) throw new ServiceError('not_found', {}, { message: `${address} is not a member of this workspace.` });
    return address;
  };

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
    if (!emailPattern.test(email)) throw new ServiceError('request_not_valid', {}, { message: 'Enter a valid email address.' });
    if (role === 'owner' && current.member.role !== 'owner') throw new ServiceError('forbidden', {}, { message: 'Only owners can invite owners.' });
    if (workspace.members.some((m) => m.email === email)) return reply.redirect('/dashboard/members?notice=already-member', 303);
    // The account first, so the member's `verified` starts in step with it.
    const invited = await accounts.join(email, workspace.workspace_id);
    await workspaces.update(workspace.workspace_id, (now) => {
      if (!canManage(now, account.email)) throw new ServiceError('forbidden');
      if (now.members.some((m) => m.email === email)) return now;
      return { ...now, members: [...now.members, { email, role, verified: invited.verified }] };
    });
    const token = dashboard.sessions.sealLink<InviteToken>({ purpose: 'invite', email, nonce: invited.token_nonce, ws: workspace.workspace_id, exp: Date.now() + INVITE_LIFETIME_MS });
    const link = `${dashboard.config.baseUrl}/dashboard/accept?token=${token}`;
    await dashboard.mailer
      .send({
        to: email,
        subject: `${account.email} invited you to a Shutterbus workspace`,
        text: `Hello,\n\n${account.email} added you as ${role === 'admin' ? 'an' : 'a'} ${role} of the Shutterbus workspace ${workspace.workspace_id}.\n\n${invited.password_hash === null ? 'Choose a password and confirm your address here' : 'Confirm your address here, then sign in as usual'} (the link works for seven days):\n\n${link}\n\nShutterbus`,
      })
      .catch((err) => dashboard.log.warn({ err, to: email }, 'invitation mail failed'));
    return reply.redirect('/dashboard/members?notice=invited', 303);
  });

  app.post('/members/role', async (request, reply) => {
    const current = request.signedIn;
    requireOwner(current.workspace, current.account.email);
    const email = target(current, field(request, 'email'));
    const role = roleOf(field(request, 'role'));
    await workspaces.update(current.workspace.workspace_id, (now) => {
      requireOwner(now, current.account.email);
      return keepAnOwner({ ...now, members: now.members.map((m) => (m.email === email ? { ...m, role } : m)) });
    });
    return reply.redirect('/dashboard/members?notice=role-changed', 303);
  });

  app.post('/members/remove', async (request, reply) => {
    const current = request.signedIn;
    requireOwner(current.workspace, current.account.email);
    const email = target(current, field(request, 'email'));
    await workspaces.update(current.workspace.workspace_id, (now) => {
      requireOwner(now, current.account.email);
      return keepAnOwner({ ...now, members: now.members.filter((m) => m.email !== email) });
    });
    await accounts.leave(email, current.workspace.workspace_id);
    return reply.redirect(email === current.account.email ? '/dashboard/keys' : '/dashboard/members?notice=removed', 303);
  });
}
