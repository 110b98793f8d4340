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
import {
  jsonContent,
  keyCodes,
  ref,
  routeUrl,
  transportCodes,
  type ApiPart,
  type Json,
  type Operation,
} from './operation.ts';

const notFound = () => new ServiceError('not_found', {}, { message: 'No profile of this name.' });
const notValid = (problems: ParamProblem[]) => new ServiceError('request_not_valid', { error_details: problems });

/** The most profiles a workspace keeps. */
export const MAX_PROFILES = 100;

/** A profile's name, in the OpenAPI document. */
const nameSchema = () => ({ type: 'string', pattern: PROFILE_NAME_PATTERN.source });
/** The codes every profile route can answer. */
const common = [...keyCodes, 'temporary_unavailable', ...transportCodes] as const;

const createOperation: Operation = {
  method: 'post',
  path: '/api/profiles',
  operationId: 'createProfile',
  summary: 'Store a profile',
  tags: ['profiles'],
  keyed: true,
  errors: [...common, 'request_body_too_large'],
  detail: () => ({
    description: `Stores a browser state under a name (one of the same name is replaced), sealed at rest; it is never answered back. Renders load it with profile=NAME. A workspace keeps at most ${MAX_PROFILES}.`,
    requestBody: { required: true, content: jsonContent(ref('ProfileCreate')) },
    responses: { '201': { description: 'The profile.', content: jsonContent(ref('Profile')) } },
  }),
};

const listOperation: Operation = {
  method: 'get',
  path: '/api/profiles',
  operationId: 'listProfiles',
  summary: "The workspace's profiles",
  tags: ['profiles'],
  keyed: true,
  errors: common,
  detail: () => ({
    responses: {
      '200': {
        description: 'Every profile, by name.',
        content: jsonContent({
          type: 'object',
          required: ['profiles'],
          properties: { profiles: { type: 'array', items: ref('Profile') } },
        }),
      },
    },
  }),
};

const deleteOperation: Operation = {
  method: 'delete',
  path: '/api/profiles/{name}',
  operationId: 'deleteProfile',
  summary: 'Remove a profile',
  tags: ['profiles'],
  keyed: true,
  errors: [...common, 'not_found'],
  detail: () => ({
    description: "Another workspace's profile answers like an unknown one.",
    pathParameters: [{ name: 'name', in: 'path', required: true, schema: nameSchema() }],
    responses: { '204': { description: 'Removed.' } },
  }),
};

/** The schemas the profile operations refer to: a profile as answered, and the state it is made from. */
function profileSchemas(): Record<string, Json> {
  const name = nameSchema();
  return {
    StorageState: {
      type: 'object',
      description: `Playwright's storageState(): cookies, and each origin's local storage (at most ${PROFILE_LIMITS.cookies} cookies, ${PROFILE_LIMITS.origins} origins, ${PROFILE_LIMITS.bytes} bytes).`,
      properties: {
        cookies: {
          type: 'array',
          items: {
            type: 'object',
            required: ['name', 'value', 'domain'],
            properties: {
              name: { type: 'string' },
              value: { type: 'string' },
              domain: { type: 'string' },
              path: { type: 'string', default: '/' },
              expires: { type: 'number', description: 'Unix seconds; -1 for a session cookie.' },
              httpOnly: { type: 'boolean' },
              secure: { type: 'boolean' },
              sameSite: { type: 'string', enum: ['Strict', 'Lax', 'None'] },
            },
          },
        },
        origins: {
          type: 'array',
          items: {
            type: 'object',
            required: ['origin'],
            properties: {
              origin: { type: 'string', format: 'uri' },
              localStorage: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['name', 'value'],
                  properties: { name: { type: 'string' }, value: { type: 'string' } },
                },
              },
            },
          },
        },
      },
    },
    ProfileCreate: {
      type: 'object',
      required: ['name', 'storage_state'],
      additionalProperties: false,
      properties: { name, storage_state: ref('StorageState'), access_key: { type: 'string' } },
    },
    Profile: {
      type: 'object',
      required: ['name', 'origins', 'created_at'],
      description: 'A profile as every answer shows it: never its state.',
      properties: {
        name,
        origins: {
          type: 'array',
          items: { type: 'string' },
          description: 'The sites its cookies and local storage are for.',
        },
        created_at: { type: 'string', format: 'date-time' },
      },
    },
  };
}

/** What /api/profiles adds to the API's description (docs/profiles.md). */
export const profilesApi: ApiPart = {
  operations: [createOperation, listOperation, deleteOperation],
  schemas: profileSchemas,
};

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

  app.post(routeUrl(createOperation), bodyAfterChecks, async (request, reply) => {
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

  app.get(routeUrl(listOperation), async (request) => {
    const workspace = await caller(request);
    return { profiles: (await profiles.list(workspace.workspace_id)).map(publicProfile) };
  });

  app.delete<{ Params: { name: string } }>(routeUrl(deleteOperation), async (request, reply) => {
    const workspace = await caller(request);
    // Another workspace's profile of the same name is not this workspace's: not found.
    if (!(await profiles.remove(workspace.workspace_id, request.params.name))) throw notFound();
    return reply.code(204).send();
  });
};
