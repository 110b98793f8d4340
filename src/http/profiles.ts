// /api/profiles: create, list and remove a workspace's profiles (docs/profiles.md). A profile's
// state goes in once and never comes out: every answer shows its name, origins and creation time.
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { ServiceError } from '../errors.ts';
import {
  PROFILE_LIMITS,
  PROFILE_NAME_PATTERN,
  PROFILE_NAME_TEXT,
  normaliseState,
  publicProfile,
  storageStateProblem,
} from '../domain/profile.ts';
import { authenticate, rawQueryString } from './auth.ts';
import { bodyAfterChecks, bodyRefusalOf } from './body.ts';
import type { ParamProblem, RawParams } from './params.ts';

const notFound = () => new ServiceError('not_found', {}, { message: 'No profile of this name.' });
const notValid = (problems: ParamProblem[]) => new ServiceError('request_not_valid', { error_details: problems });

/** The most profiles a workspace keeps. */
export const MAX_PROFILES = 100;

/** Registers the profile routes; the access key is checked as on /api/monitors. Without a profile store there are none. */
export const profilesRoutes: FastifyPluginAsync = async (app) => {
  const { workspaces, profiles } = app;
  if (!profiles) return;

  const caller = async (request: FastifyRequest, raw?: RawParams) =>
    (
      await authenticate(
        request,
        raw ?? { kind: 'query', entries: [...new URLSearchParams(rawQueryString(request))] },
        workspaces,
      )
    ).workspace;

  app.post('/api/profiles', bodyAfterChecks, async (request, reply) => {
    const body =
      typeof request.body === 'object' && request.body !== null && !Array.isArray(request.body)
        ? (request.body as Record<string, unknown>)
        : {};
    const workspace = await caller(request, { kind: 'json', body });
    const refusal = bodyRefusalOf(request);
    if (refusal) throw refusal;
    const { name, storage_state: state, access_key: _key, ...others } = body;
    const problems: ParamProblem[] = Object.keys(others).map((parameter) => ({
      parameter,
      message: 'is not a field of a profile (name, storage_state)',
    }));
    if (typeof name !== 'string' || !PROFILE_NAME_PATTERN.test(name))
      problems.push({ parameter: 'name', message: `is required: ${PROFILE_NAME_TEXT}` });
    const stateProblem = state === undefined ? 'is required' : storageStateProblem(state);
    if (stateProblem) problems.push({ parameter: 'storage_state', message: stateProblem });
    else if (Buffer.byteLength(JSON.stringify(state)) > PROFILE_LIMITS.bytes)
      problems.push({ parameter: 'storage_state', message: `must be at most ${PROFILE_LIMITS.bytes} bytes of JSON` });
    if (problems.length > 0) throw notValid(problems);
    const existing = await profiles.list(workspace.workspace_id);
    if (existing.length >= MAX_PROFILES && !existing.some((profile) => profile.name === name))
      throw notValid([{ parameter: 'name', message: `a workspace keeps at most ${MAX_PROFILES} profiles` }]);
    const record = await profiles.put(
      workspace.workspace_id,
      name as string,
      normaliseState(state as Record<string, unknown>),
    );
    reply.code(201);
    return publicProfile(record);
  });

  app.get('/api/profiles', async (request) => {
    const workspace = await caller(request);
    return { profiles: (await profiles.list(workspace.workspace_id)).map(publicProfile) };
  });

  app.delete<{ Params: { name: string } }>('/api/profiles/:name', async (request, reply) => {
    const workspace = await caller(request);
    // Another workspace's profile of the same name is not this workspace's: not found.
    if (!(await profiles.remove(workspace.workspace_id, request.params.name))) throw notFound();
    return reply.code(204).send();
  });
};
