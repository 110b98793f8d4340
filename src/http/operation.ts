// A route's description, declared beside its handler: where it answers (the route registers at the
// same path), what it takes and answers, and the error codes it can answer. openapi.ts assembles them.
import { errorTable, type ErrorCode } from '../errors.ts';

/** A JSON Schema (2020-12, OpenAPI 3.1's dialect) or any other part of the document. */
export type Json = Record<string, unknown>;

/** The methods the public routes answer (a HEAD goes with its GET). */
export type Method = 'get' | 'post' | 'patch' | 'delete';

/** One operation of the public API: its route, and what the OpenAPI document says of it. */
export interface Operation {
  method: Method;
  /** The OpenAPI path, its parameters in braces (`/api/renders/{renderId}`); routeUrl gives Fastify's. */
  path: string;
  operationId: string;
  summary: string;
  tags: readonly string[];
  /** Whether the access key is asked for; the files and the device list are public. */
  keyed: boolean;
  /** The error codes it can answer, listed under each status in this order. */
  errors: readonly ErrorCode[];
  /** The rest, built with the document rather than at the start (the parameter table's schemas are large). */
  detail: () => OperationDetail;
}

/** What an operation says beyond its route and its errors. */
export interface OperationDetail {
  description?: string;
  /** Parameters of every operation on the path (its path parameters), given once at the path. */
  pathParameters?: Json[];
  parameters?: Json[];
  requestBody?: Json;
  /** Its answers other than errors, by status. */
  responses: Json;
}

/** What a route module adds to the document: its operations, and the named schemas they refer to. */
export interface ApiPart {
  operations: readonly Operation[];
  schemas?: () => Record<string, Json>;
}

/** Fastify's URL of an operation's path: `{name}` becomes `:name`. */
export function routeUrl(operation: Pick<Operation, 'path'>): string {
  return operation.path.replace(/\{(\w+)\}/g, ':$1');
}

/** A reference to a schema of the document's components. */
export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** A JSON body of `schema`, as a request body or an answer carries it. */
export const jsonContent = (schema: Json) => ({ 'application/json': { schema } });

/** Codes any request may meet before its route runs: malformed, oversized or slow requests (server.ts). */
export const transportCodes = [
  'request_not_valid',
  'request_header_too_large',
  'request_timeout',
  'internal_application_error',
] as const satisfies readonly ErrorCode[];

/** Codes of the checks of the access key and the signature (auth.ts), in the order they run. */
export const keyCodes = [
  'access_key_invalid',
  'email_not_verified',
  'signature_is_not_valid',
  'signature_is_required',
] as const satisfies readonly ErrorCode[];

/** Codes the API never answers (the CLI and the dashboard do). */
const notFromApi: ReadonlySet<ErrorCode> = new Set(['forbidden']);

/** Every code the API can answer, in the error table's order. */
export function apiCodes(): ErrorCode[] {
  return (Object.keys(errorTable) as ErrorCode[]).filter((code) => !notFromApi.has(code));
}
