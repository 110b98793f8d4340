// The storage page and its forms: set, test and clear the workspace's default storage (owners and admins).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ServiceError } from '../../errors.ts';
import { checkTargetUrl } from '../../net/target.ts';
import {
  changeDefaultStorage,
  defaultStorageOf,
  describeStorage,
  storageInputProblems,
  testStorage,
} from '../../workspaces/storage.ts';
import { canManage } from '../../workspaces/workspace.ts';
import { field, noticesOf, type Dashboard } from './context.ts';
import type { Notice } from './views/layout.ts';
import { storagePage } from './views/storage.ts';

/** Registers the storage page; without a sealer (no SECRETS_KEY at hand) there is none. */
export async function storageRoutes(app: FastifyInstance, dashboard: Dashboard): Promise<void> {
  const { workspaces, config, sealer } = dashboard;
  if (!sealer) return;

  const show = (request: FastifyRequest, reply: FastifyReply, notices: Notice[] = noticesOf(request)) => {
    const { workspace, account, member, viewer } = request.signedIn;
    const page = storagePage({
      viewer,
      storage: describeStorage(workspace),
      manager: canManage(workspace, account.email),
      role: member.role,
      notices,
    });
    return reply.type('text/html; charset=utf-8').send(page.text);
  };
  const requireManager = (request: FastifyRequest) => {
    const { workspace, account } = request.signedIn;
    if (!canManage(workspace, account.email)) throw new ServiceError('forbidden');
  };

  app.get('/storage', async (request, reply) => show(request, reply));

  app.post('/storage', async (request, reply) => {
    requireManager(request);
    const region = field(request, 'region').trim();
    const input = {
      endpoint: field(request, 'endpoint').trim(),
      bucket: field(request, 'bucket').trim(),
      accessKeyId: field(request, 'access_key_id').trim(),
      secretAccessKey: field(request, 'secret_access_key'),
      ...(region ? { region } : {}),
    };
    const problem = storageInputProblems(input)[0];
    if (problem)
      throw new ServiceError(
        'request_not_valid',
        {},
        { message: `${problem.parameter.replaceAll('-', ' ')} ${problem.message}.` },
      );
    await checkTargetUrl(input.endpoint, { allowPrivate: config.allowPrivateTargets, param: 'endpoint' });
    const { workspace, account } = request.signedIn;
    // The role is checked again inside the compare-and-set, against the workspace as it is then.
    await changeDefaultStorage(workspaces, workspace.workspace_id, account.email, defaultStorageOf(input, sealer));
    return reply.redirect('/dashboard/storage?notice=storage-saved', 303);
  });

  app.post('/storage/clear', async (request, reply) => {
    const { workspace, account } = request.signedIn;
    await changeDefaultStorage(workspaces, workspace.workspace_id, account.email, null);
    return reply.redirect('/dashboard/storage?notice=storage-cleared', 303);
  });

  app.post('/storage/test', async (request, reply) => {
    requireManager(request);
    const { storage } = request.signedIn.workspace;
    if (!storage) return reply.redirect('/dashboard/storage', 303);
    try {
      await testStorage(storage, { sealer, allowPrivate: config.allowPrivateTargets });
      return show(request, reply, [
        { kind: 'ok', text: `The connection works: a test object was written to ${storage.bucket} and deleted again.` },
      ]);
    } catch (err) {
      if (!(err instanceof ServiceError) || err.code !== 'storage_upload_failed') throw err;
      const [detail] = err.details.error_details as { code: string; message: string }[];
      return show(request, reply.code(502), [
        { kind: 'bad', text: `The storage refused the test: ${detail.code} (${detail.message}).` },
      ]);
    }
  });
}
