// The profiles page and its forms: add and remove the workspace's profiles (owners and admins).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ServiceError } from '../../errors.ts';
import {
  PROFILE_LIMITS,
  PROFILE_NAME_PATTERN,
  PROFILE_NAME_TEXT,
  normaliseState,
  storageStateProblem,
} from '../../domain/profile.ts';
import { canManage } from '../../workspaces/workspace.ts';
import { field, noticesOf, type Dashboard } from './context.ts';
import { profilesPage } from './views/profiles.ts';

/** Registers the profiles page; without a profile store there is none. */
export async function profilesRoutes(app: FastifyInstance, dashboard: Dashboard): Promise<void> {
  const { profiles } = dashboard;
  if (!profiles) return;

  const requireManager = (request: FastifyRequest) => {
    const { workspace, account } = request.signedIn;
    if (!canManage(workspace, account.email)) throw new ServiceError('forbidden');
  };
  const refuse = (message: string) => new ServiceError('request_not_valid', {}, { message });

  app.get('/profiles', async (request: FastifyRequest, reply: FastifyReply) => {
    const { workspace, account, member, viewer } = request.signedIn;
    const page = profilesPage({
      viewer,
      profiles: await profiles.list(workspace.workspace_id),
      manager: canManage(workspace, account.email),
      role: member.role,
      notices: noticesOf(request),
    });
    return reply.type('text/html; charset=utf-8').send(page.text);
  });

  app.post('/profiles', async (request, reply) => {
    requireManager(request);
    const name = field(request, 'name').trim();
    if (!PROFILE_NAME_PATTERN.test(name)) throw refuse(`The name must be ${PROFILE_NAME_TEXT}.`);
    const text = field(request, 'storage_state');
    if (Buffer.byteLength(text) > PROFILE_LIMITS.bytes)
      throw refuse(`The storage state must be at most ${PROFILE_LIMITS.bytes} bytes.`);
    let state: unknown;
    try {
      state = JSON.parse(text);
    } catch {
      throw refuse('The storage state is not JSON.');
    }
    const problem = storageStateProblem(state);
    if (problem) throw refuse(`The storage state ${problem}.`);
    await profiles.put(request.signedIn.workspace.workspace_id, name, normaliseState(state as Record<string, unknown>));
    return reply.redirect('/dashboard/profiles?notice=profile-saved', 303);
  });

  app.post<{ Params: { name: string } }>('/profiles/:name/delete', async (request, reply) => {
    requireManager(request);
    await profiles.remove(request.signedIn.workspace.workspace_id, request.params.name);
    return reply.redirect('/dashboard/profiles?notice=profile-removed', 303);
  });
}
