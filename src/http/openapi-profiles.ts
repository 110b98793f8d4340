// The profiles' part of the OpenAPI document (docs/profiles.md): paths and schemas.
import { PROFILE_LIMITS, PROFILE_NAME_PATTERN } from '../domain/profile.ts';
import { MAX_PROFILES } from './profiles.ts';

/** A JSON Schema or any other part of the document. */
type Json = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const name = { type: 'string', pattern: PROFILE_NAME_PATTERN.source };

/** The schemas the profile paths refer to. */
export function profileSchemas(): Json {
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

/** The profile paths; `errors(codes)` makes the error responses as every other path has them. */
export function profilePaths(security: Json[], errors: (codes: string[]) => Json): Json {
  const common = [
    'access_key_invalid',
    'email_not_verified',
    'signature_is_not_valid',
    'signature_is_required',
    'temporary_unavailable',
    'request_header_too_large',
    'request_timeout',
    'internal_application_error',
  ];
  const json = (schema: Json) => ({ 'application/json': { schema } });
  return {
    '/api/profiles': {
      post: {
        tags: ['profiles'],
        operationId: 'createProfile',
        summary: 'Store a profile',
        description: `Stores a browser state under a name (one of the same name is replaced), sealed at rest; it is never answered back. Renders load it with profile=NAME. A workspace keeps at most ${MAX_PROFILES}.`,
        security,
        requestBody: { required: true, content: json(ref('ProfileCreate')) },
        responses: {
          '201': { description: 'The profile.', content: json(ref('Profile')) },
          ...errors([...common, 'request_not_valid', 'request_body_too_large']),
        },
      },
      get: {
        tags: ['profiles'],
        operationId: 'listProfiles',
        summary: "The workspace's profiles",
        security,
        responses: {
          '200': {
            description: 'Every profile, by name.',
            content: json({
              type: 'object',
              required: ['profiles'],
              properties: { profiles: { type: 'array', items: ref('Profile') } },
            }),
          },
          ...errors(common),
        },
      },
    },
    '/api/profiles/{name}': {
      parameters: [{ name: 'name', in: 'path', required: true, schema: name }],
      delete: {
        tags: ['profiles'],
        operationId: 'deleteProfile',
        summary: 'Remove a profile',
        description: "Another workspace's profile answers like an unknown one.",
        security,
        responses: { '204': { description: 'Removed.' }, ...errors([...common, 'not_found']) },
      },
    },
  };
}
